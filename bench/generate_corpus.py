#!/usr/bin/env python
"""Generate a deterministic, realistic corpus of N published records and load it in bulk (database, files, index).

    python bench/generate_corpus.py --records 100000 [--seed 8] [--batch 1000] [--jobs 1]
    python bench/generate_corpus.py --records 1000000 --index-only     # the index alone (bench/corpus_index.py)

Concept `i` is generated from its own `random.Random((seed, i))`, so the corpus is the same whatever the batch size
or the number of generator processes. Settings (INSTANCE_PATH, DATABASE_URL, SEARCH_URL, ...) come from the
environment, as for the server. Prints the load rate (records/s) and where the time went.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import itertools
import json
import math
import multiprocessing
import os
import random
import string
import sys
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from repository.cli import Command, Context, arg, invoke
from repository.worker.bulk import Concept, Version

SEED = 8
USERS = 200
COMMUNITIES = 24
VOCABULARY_SIZE = 20_000
START = datetime(2016, 1, 1)
STEP_SECONDS = 280  # concept i is published about i * 280 s after START (a million span ~9 years)
GRANTS_FILE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                           "repository", "vocabularies", "data", "grants.jsonl")

# --- vocabularies ------------------------------------------------------------------------------------------
UPLOAD_TYPES = [  # (type, subtype field, [(subtype, weight)], weight) — proportions like a general repository's
    ("publication", "publication_type", [
        ("article", 34), ("conferencepaper", 12), ("report", 8), ("preprint", 8), ("book", 3), ("section", 5),
        ("thesis", 5), ("workingpaper", 4), ("softwaredocumentation", 2), ("technicalnote", 2), ("deliverable", 3),
        ("milestone", 1), ("proposal", 1), ("patent", 1), ("datamanagementplan", 2), ("taxonomictreatment", 4),
        ("annotationcollection", 1), ("other", 4)], 44),
    ("dataset", None, [], 20),
    ("software", None, [], 12),
    ("image", "image_type", [("figure", 40), ("photo", 25), ("plot", 15), ("diagram", 8), ("drawing", 5),
                             ("other", 7)], 8),
    ("presentation", None, [], 6),
    ("poster", None, [], 5),
    ("video", None, [], 2),
    ("lesson", None, [], 1),
    ("physicalobject", None, [], 0.5),
    ("other", None, [], 1.5),
]
ACCESS = [("open", 82), ("embargoed", 5), ("restricted", 7), ("closed", 6)]
LICENSES = {"dataset": [("cc-zero", 45), ("cc-by", 40), ("ODbL-1.0", 5), ("cc-by-sa", 5), ("PDDL-1.0", 5)],
            "software": [("MIT", 35), ("Apache-2.0", 25), ("other-open", 15), ("BSL-1.0", 5), ("MPL-2.0", 10),
                         ("ISC", 5), ("Zlib", 5)],
            "*": [("cc-by", 70), ("cc-by-sa", 8), ("cc-by-nc", 6), ("cc-by-nc-nd", 6), ("cc-zero", 6),
                  ("other-open", 4)]}
LANGUAGES = [("eng", 60), ("deu", 8), ("fra", 7), ("spa", 6), ("rus", 5), ("zho", 4), ("jpn", 3), ("por", 2),
             ("ara", 2), ("ell", 2), ("hin", 1)]
WORDS = {
    "eng": ("data analysis study results model climate change research method evaluation network learning "
            "observations measurements samples temperature protein gene expression population dynamics ocean "
            "soil water energy system framework simulation software code survey health patients cells brain "
            "quantum materials structure effects impact assessment regional global experimental field "
            "archive collection images time series high resolution dataset open source toolkit analysis "
            "evidence review systematic approach novel improved efficient large scale").split(),
    "deu": ("Daten Analyse Untersuchung Ergebnisse Modell Klimawandel Forschung Methode Bewertung Netzwerk "
            "Messungen Proben Temperatur Bevölkerung Entwicklung Boden Wasser Energie System Gesundheit "
            "Struktur Wirkung regionale globale Studie Sammlung Zeitreihen über für und der die das").split(),
    "fra": ("données analyse étude résultats modèle changement climatique recherche méthode évaluation réseau "
            "mesures échantillons température population dynamique océan sol eau énergie système santé "
            "structure effets régionale mondiale expérimentale collection séries temporelles pour les des").split(),
    "spa": ("datos análisis estudio resultados modelo cambio climático investigación método evaluación red "
            "mediciones muestras temperatura población dinámica océano suelo agua energía sistema salud "
            "estructura efectos regional global experimental colección series temporales para los las").split(),
    "rus": ("данные анализ исследование результаты модель изменение климата метод оценка сеть измерения "
            "образцы температура население динамика океан почва вода энергия система здоровье структура "
            "влияние региональный глобальный экспериментальный коллекция временные ряды для и в на").split(),
    "zho": "数据 分析 研究 结果 模型 气候 变化 方法 评估 网络 测量 样本 温度 人口 动态 海洋 土壤 水 能源 系统 健康 结构 影响 区域 全球 实验".split(),
    "jpn": "データ 解析 研究 結果 モデル 気候変動 手法 評価 ネットワーク 測定 試料 温度 人口 海洋 土壌 水 エネルギー システム 健康 構造 影響 地域 実験".split(),
    "por": ("dados análise estudo resultados modelo mudança climática pesquisa método avaliação rede medições "
            "amostras temperatura população dinâmica oceano solo água energia sistema saúde estrutura").split(),
    "ara": "بيانات تحليل دراسة نتائج نموذج تغير المناخ بحث طريقة تقييم شبكة قياسات عينات درجة الحرارة السكان المحيط التربة المياه الطاقة نظام الصحة".split(),
    "ell": ("δεδομένα ανάλυση μελέτη αποτελέσματα μοντέλο κλιματική αλλαγή έρευνα μέθοδος αξιολόγηση δίκτυο "
            "μετρήσεις δείγματα θερμοκρασία πληθυσμός δυναμική ωκεανός έδαφος νερό ενέργεια σύστημα υγεία").split(),
    "hin": "आंकड़े विश्लेषण अध्ययन परिणाम मॉडल जलवायु परिवर्तन अनुसंधान विधि मूल्यांकन नेटवर्क माप नमूने तापमान जनसंख्या महासागर मिट्टी पानी ऊर्जा प्रणाली स्वास्थ्य".split(),
}
NO_SPACE = {"zho", "jpn"}
NAMES = [  # (family names, given names) per naming tradition
    ("Smith Johnson Williams Brown Jones Miller Davis Wilson Anderson Taylor Thomas Moore Martin Clark Lewis Walker".split(),
     "James Mary John Patricia Robert Jennifer Michael Linda David Elizabeth Sarah Daniel Emma Oliver".split()),
    ("Müller Schmidt Schneider Fischer Weber Meyer Wagner Becker Schulz Hoffmann Koch Richter".split(),
     "Anna Lukas Jonas Lea Felix Sophie Maximilian Marie Paul Laura Jürgen Björn".split()),
    ("Martin Bernard Dubois Thomas Robert Petit Durand Leroy Moreau Lefèvre Rousseau Girard".split(),
     "Camille Louis Chloé Hugo Léa Gabriel Manon Théo Inès Jérôme Hélène".split()),
    ("García Fernández González Rodríguez López Martínez Sánchez Pérez Gómez Díaz Muñoz Álvarez".split(),
     "María José Lucía Alejandro Sofía Javier Carmen Pablo Elena Andrés Inés".split()),
    ("Иванов Смирнов Кузнецов Попов Васильев Петров Соколов Михайлов Новиков Фёдоров".split(),
     "Александр Мария Дмитрий Анна Сергей Елена Андрей Ольга Наталья Иван".split()),
    ("王 李 张 刘 陈 杨 黄 赵 吴 周".split(), "伟 芳 娜 敏 静 丽 强 磊 军 洋".split()),
    ("Wang Li Zhang Liu Chen Yang Huang Zhao Wu Zhou Xu Sun".split(),
     "Wei Fang Na Min Jing Li Qiang Lei Jun Yang Xin Hui".split()),
    ("佐藤 鈴木 高橋 田中 伊藤 渡辺 山本 中村 小林 加藤".split(), "翔 陽菜 蓮 結衣 大翔 葵 悠真 凛".split()),
    ("Kim Lee Park Choi Jung Kang Cho Yoon Jang Lim".split(), "Min-jun Seo-yeon Ji-ho Ha-eun Do-yun Seo-jun".split()),
    ("Sharma Patel Singh Kumar Gupta Reddy Iyer Nair Das Mehta".split(),
     "Aarav Priya Rohan Ananya Vikram Kavya Arjun Diya Rahul Neha".split()),
    ("Silva Santos Oliveira Souza Pereira Costa Rodrigues Almeida".split(),
     "João Ana Pedro Beatriz Lucas Mariana Gonçalo Inês".split()),
    ("Παπαδόπουλος Γεωργίου Οικονόμου Νικολάου Παππάς".split(), "Γιώργος Μαρία Νίκος Ελένη Κώστας".split()),
    ("Al-Sayed Haddad Nasser Khalil Mansour Hassan".split(), "Ahmed Fatima Omar Layla Youssef Mariam".split()),
    ("Nowak Kowalski Wiśniewski Wójcik Kowalczyk Kamiński".split(), "Piotr Agnieszka Krzysztof Małgorzata Tomasz".split()),
    ("Nguyễn Trần Lê Phạm Hoàng".split(), "Minh Lan Hùng Thảo Dũng".split()),
    ("Okafor Mensah Adeyemi Mwangi Diallo Abebe".split(), "Chinedu Ama Kwame Amina Tendai Nia".split()),
]
NAME_WEIGHTS = [20, 9, 7, 7, 5, 4, 8, 5, 4, 7, 4, 2, 3, 3, 2, 3]
AFFILIATIONS = (
    "University of Oxford|ETH Zürich|Max Planck Institute for Biogeochemistry|CNRS|Universidad de Buenos Aires|"
    "Московский государственный университет|清华大学|東京大学|Indian Institute of Science|University of Cape Town|"
    "CERN|Helmholtz-Zentrum Potsdam|Universidade de São Paulo|National Institutes of Health|University of Nairobi|"
    "Università di Bologna|KU Leuven|Uppsala University|Seoul National University|University of Toronto|"
    "Stanford University|Instituto Nacional de Pesquisas Espaciais|Wageningen University & Research|"
    "Commonwealth Scientific and Industrial Research Organisation|Aristotle University of Thessaloniki"
).split("|")
PLACES = [("Svalbard", 78.22, 15.65), ("Amazon basin", -3.47, -62.37), ("Lake Baikal", 53.5, 108.0),
          ("Great Barrier Reef", -18.29, 147.7), ("Sahel", 14.5, 0.0), ("Tibetan Plateau", 33.0, 88.0),
          ("North Sea", 56.0, 3.0), ("Atacama Desert", -24.5, -69.25), ("Greenland ice sheet", 72.0, -40.0),
          ("Mekong Delta", 10.0, 105.8), ("Wadden Sea", 53.5, 7.0), ("Kruger National Park", -23.99, 31.55)]
COMMUNITY_TOPICS = ("ecology astronomy climate genomics neuroscience oceanography materials chemistry "
                    "mathematics linguistics archaeology epidemiology hydrology robotics seismology economics "
                    "history-of-science open-hardware biodiversity digital-humanities particle-physics "
                    "agriculture education software-citation").split()
# Identifiers of every kind the API accepts, in normalised form (what validation stores).
RELATED = [("doi", 40), ("url", 20), ("arxiv", 8), ("handle", 4), ("isbn", 3), ("issn", 3), ("pmid", 4),
           ("pmcid", 3), ("ads", 2), ("urn", 2), ("ark", 2), ("purl", 2), ("lsid", 1), ("ean13", 1), ("istc", 1)]
RELATIONS = [("isSupplementTo", 25), ("cites", 15), ("references", 10), ("isPartOf", 10), ("isCitedBy", 6),
             ("isDocumentedBy", 4), ("isDerivedFrom", 5), ("isNewVersionOf", 3), ("hasPart", 3),
             ("isIdenticalTo", 2), ("isReferencedBy", 2), ("isSupplementedBy", 3), ("compiles", 1),
             ("isCompiledBy", 1), ("continues", 1), ("isContinuedBy", 1), ("describes", 1), ("isDescribedBy", 1),
             ("hasMetadata", 1), ("isMetadataFor", 1), ("isPreviousVersionOf", 1), ("documents", 1),
             ("isVariantFormOf", 1), ("isOriginalFormOf", 1), ("reviews", 1), ("isReviewedBy", 1),
             ("isSourceOf", 1), ("requires", 1), ("isRequiredBy", 1), ("isObsoletedBy", 1), ("obsoletes", 1),
             ("isPublishedIn", 1)]
CONTRIBUTOR_TYPES = ("ContactPerson DataCollector DataCurator DataManager Editor HostingInstitution Producer "
                     "ProjectLeader ProjectMember Researcher ResearchGroup RightsHolder Supervisor Sponsor "
                     "Other").split()
FILE_KINDS = {"dataset": ["data.csv", "readme.txt", "measurements.nc", "table.xlsx"],
              "software": ["source.zip", "README.md"], "image": ["figure.png", "photo.jpg", "plot.svg"],
              "video": ["recording.mp4"], "presentation": ["slides.pdf"], "poster": ["poster.pdf"],
              "*": ["article.pdf", "supplement.pdf", "data.csv"]}

# Words of the keyword vocabulary: the first ones are the most frequent (Zipf, s = 1.07).
_STEMS = ("bio geo hydro climat ocean neuro astro chem phys eco genom proteom materi quant comput statist "
          "cell soil atmo glacio seism volcan paleo ethno socio linguist archae epidem immun pharmac agro "
          "forest marine cryo photo electr magnet therm nano micro macro meta").split()
_SUFFIXES = ("logy metry graphy dynamics modelling informatics genesis chemistry physics sphere systems "
             "analysis sensing mapping imaging survey").split()
COMMON_TERM = "data"  # in most English titles and descriptions
PHRASE = "climate change"  # a two-word phrase of many English records


def vocabulary(size: int = VOCABULARY_SIZE) -> list[str]:
    """The keyword vocabulary, most frequent first (deterministic)."""
    rng = random.Random(f"vocabulary-{size}")
    words = [f"{s}{x}" for s in _STEMS for x in _SUFFIXES] + list(WORDS["eng"])
    rng.shuffle(words)
    seen, result = set(), []
    for word in itertools.chain(words, (f"{rng.choice(_STEMS)}{''.join(rng.choices(string.ascii_lowercase, k=5))}"
                                        for _ in itertools.count())):
        if word not in seen:
            seen.add(word)
            result.append(word)
        if len(result) == size:
            return result
    return result


def rare_term() -> str:
    """A keyword from the tail of the vocabulary: a handful of records per million."""
    return vocabulary()[-1]


def _cumulative(weights: list[float]) -> list[float]:
    return list(itertools.accumulate(weights))


class Corpus:
    """Deterministic generator: `concept(i)` is always the same for the same seed."""

    def __init__(self, seed: int = SEED, users: int = USERS, communities: int = COMMUNITIES) -> None:
        self.seed, self.users = seed, users
        self.communities = community_identifiers(communities)
        self.vocab = vocabulary()
        self.vocab_cum = _cumulative([1 / (rank ** 1.07) for rank in range(1, len(self.vocab) + 1)])
        self.word_cum = {lang: _cumulative([1 / rank for rank in range(1, len(w) + 1)]) for lang, w in WORDS.items()}
        self.user_cum = _cumulative([1 / (rank ** 0.8) for rank in range(1, users + 1)])
        with open(GRANTS_FILE, encoding="utf-8") as handle:
            self.grants = [json.loads(line) for line in handle if line.strip()]

    # --- small helpers --------------------------------------------------------------------------------
    @staticmethod
    def _pick(rng: random.Random, pairs: list[tuple[Any, float]]) -> Any:
        return rng.choices([p[0] for p in pairs], weights=[p[1] for p in pairs])[0]

    def _words(self, rng: random.Random, lang: str, count: int) -> str:
        words = rng.choices(WORDS[lang], cum_weights=self.word_cum[lang], k=count)
        if lang == "eng" and rng.random() < 0.15:
            words.insert(rng.randrange(len(words) + 1), PHRASE)
        return ("" if lang in NO_SPACE else " ").join(words)

    def _sentence(self, rng: random.Random, lang: str) -> str:
        text = self._words(rng, lang, rng.randint(6, 18))
        text = text[0].upper() + text[1:]
        return text + ("。" if lang in NO_SPACE else ".")

    def _description(self, rng: random.Random, lang: str) -> str:
        """HTML of 0.3 to 5 KB (log-uniform): paragraphs, emphasis, lists, links."""
        target = int(math.exp(rng.uniform(math.log(300), math.log(5000))))
        parts: list[str] = []
        size = 0
        while size < target:
            roll = rng.random()
            if roll < 0.1:
                items = "".join(f"<li>{self._words(rng, lang, rng.randint(2, 6))}</li>" for _ in range(rng.randint(2, 5)))
                part = f"<ul>{items}</ul>"
            elif roll < 0.18:
                part = (f'<p>See <a href="https://example.org/project/{rng.randrange(10**6)}" '
                        f'rel="noopener noreferrer">{self._words(rng, lang, 2)}</a>.</p>')
            else:
                sentences = [self._sentence(rng, lang) for _ in range(rng.randint(1, 4))]
                if rng.random() < 0.3:
                    sentences[0] = f"<strong>{sentences[0]}</strong>"
                if rng.random() < 0.2:
                    sentences[-1] = f"<em>{sentences[-1]}</em>"
                part = f"<p>{' '.join(sentences)}</p>"
            parts.append(part)
            size += len(part.encode())
        return "".join(parts)

    def _person(self, rng: random.Random) -> dict:
        families, givens = rng.choices(NAMES, weights=NAME_WEIGHTS)[0]
        person = {"name": f"{rng.choice(families)}, {rng.choice(givens)}"}
        if rng.random() < 0.85:
            person["affiliation"] = rng.choice(AFFILIATIONS)
        if rng.random() < 0.35:
            person["orcid"] = orcid(rng)
        return person

    def _creators_count(self, rng: random.Random) -> int:
        return self._pick(rng, [(1, 25), (rng.randint(2, 3), 30), (rng.randint(4, 6), 25),
                                (rng.randint(7, 12), 12), (rng.randint(13, 30), 8)])

    def _identifier(self, rng: random.Random, scheme: str) -> str:
        n = rng.randrange(10**6, 10**7)
        return {
            "doi": f"10.{rng.randint(1000, 9999)}/{rng.choice(['journal', 'data', 'zenodo', 'j.cell'])}.{n}",
            "url": f"https://{rng.choice(['github.com/lab', 'example.org/data', 'www.example.edu/papers'])}/{n}",
            "arxiv": f"arXiv:{rng.randint(1501, 2612)}.{rng.randint(10000, 99999)}",
            "handle": f"{rng.randint(10000, 11000)}/{n}",
            "isbn": "978-3-16-148410-0", "issn": rng.choice(["0317-8471", "1476-4687", "0036-8075"]),
            "pmid": str(n), "pmcid": f"PMC{n}", "ads": "2011ApJ...737..103S",
            "urn": f"urn:nbn:de:101:1-{n}", "ark": f"ark:/13030/tf5p{n}", "purl": f"http://purl.org/net/epubs/work/{n}",
            "lsid": f"urn:lsid:ubio.org:namebank:{n}", "ean13": "4006381333931", "istc": "0A9 2002 12B4A105 7",
        }[scheme]

    # --- one record ---------------------------------------------------------------------------------
    def metadata(self, rng: random.Random) -> dict:
        """Deposit metadata in the form `validate_for_publish` returns for it."""
        upload_type, field, subtypes, _w = rng.choices(UPLOAD_TYPES, weights=[t[3] for t in UPLOAD_TYPES])[0]
        lang = self._pick(rng, LANGUAGES)
        title = self._words(rng, lang, rng.randint(3, 14))
        title = title[0].upper() + title[1:]
        year = min(2026, int(1990 + 36 * rng.random() ** 0.5))
        meta: dict[str, Any] = {
            "upload_type": upload_type,
            "publication_date": f"{year:04d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
            "title": title,
            "creators": [self._person(rng) for _ in range(self._creators_count(rng))],
            "description": self._description(rng, lang),
            "access_right": self._pick(rng, ACCESS),
        }
        if field:
            meta[field] = self._pick(rng, subtypes)
        subtype = meta.get(field) if field else None
        right = meta["access_right"]
        if right in ("open", "embargoed"):
            meta["license"] = self._pick(rng, LICENSES.get(upload_type, LICENSES["*"]))
        if right == "embargoed":
            meta["embargo_date"] = f"{rng.randint(2025, 2029)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        if right == "restricted":
            meta["access_conditions"] = f"<p>{self._sentence(rng, 'eng')} Access on request for research use.</p>"
        if lang != "eng" or rng.random() < 0.5:
            meta["language"] = lang
        if rng.random() < 0.7:
            meta["keywords"] = list(dict.fromkeys(rng.choices(self.vocab, cum_weights=self.vocab_cum,
                                                              k=rng.randint(1, 10))))
        if rng.random() < 0.5:
            related = []
            for _ in range(rng.randint(1, 5)):
                scheme = self._pick(rng, RELATED)
                item = {"identifier": self._identifier(rng, scheme), "relation": self._pick(rng, RELATIONS)}
                if rng.random() < 0.3:
                    item["resource_type"] = rng.choice(["publication-article", "dataset", "software", "image-figure"])
                item["scheme"] = scheme
                related.append(item)
            meta["related_identifiers"] = related
        if rng.random() < 0.2:
            meta["contributors"] = [{**self._person(rng), "type": rng.choice(CONTRIBUTOR_TYPES)}
                                    for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.15:
            chosen = rng.sample(self.grants, rng.randint(1, 2))
            meta["grants"] = [{"id": f"{g['funder_doi']}::{g['code']}"} for g in chosen]
        if rng.random() < 0.15 and self.communities:
            picked = sorted(set(rng.choices(self.communities, k=rng.randint(1, 2))))
            meta["communities"] = [{"identifier": c} for c in picked]
        if rng.random() < 0.06:
            place, lat, lon = rng.choice(PLACES)
            location: dict[str, Any] = {"place": place}
            if rng.random() < 0.7:
                location.update(lat=round(lat + rng.uniform(-1, 1), 4), lon=round(lon + rng.uniform(-1, 1), 4))
            meta["locations"] = [location]
        if rng.random() < 0.05:
            meta["dates"] = [{"start": f"{year - 1:04d}-03-01", "end": f"{year - 1:04d}-09-30", "type": "Collected"}]
        if rng.random() < 0.08:
            meta["subjects"] = [{"term": rng.choice(["Climatology", "Ecology", "Astrophysics", "Genomics"]),
                                 "identifier": f"http://id.loc.gov/authorities/subjects/sh{rng.randint(85000000, 85099999)}",
                                 "scheme": "url"}]
        if rng.random() < 0.1:
            meta["notes"] = f"<p>{self._sentence(rng, 'eng')}</p>"
        if rng.random() < 0.04:
            meta["method"] = f"<p>{self._sentence(rng, lang)}</p>"
        if rng.random() < 0.15:
            meta["references"] = [f"{self._person(rng)['name']} ({rng.randint(1980, 2025)}). {self._words(rng, 'eng', 6)}."
                                  for _ in range(rng.randint(1, 6))]
        if upload_type == "software" and rng.random() < 0.7:
            meta["version"] = f"v{rng.randint(0, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        if subtype in ("article", "preprint") and rng.random() < 0.8:
            meta.update(journal_title=rng.choice(["Nature", "Journal of Climate", "PLOS ONE", "Физика Земли",
                                                  "Annales de Géographie", "Scientific Data"]),
                        journal_volume=str(rng.randint(1, 120)), journal_issue=str(rng.randint(1, 12)),
                        journal_pages=f"{(p := rng.randint(1, 900))}-{p + rng.randint(5, 30)}")
        if subtype == "conferencepaper" or (upload_type in ("poster", "presentation") and rng.random() < 0.6):
            acronym = rng.choice(["EGU", "AGU", "ICML", "DH", "ISMB", "CHEP"])
            meta.update(conference_title=f"{acronym} General Assembly {year}", conference_acronym=f"{acronym}{year}",
                        conference_dates=f"{rng.randint(1, 20)}-{rng.randint(21, 28)} April {year}",
                        conference_place=rng.choice(["Vienna, Austria", "San Francisco, USA", "Kyoto, Japan"]),
                        conference_url=f"https://conference.example.org/{acronym.lower()}{year}",
                        conference_session=f"S{rng.randint(1, 40)}")
        if subtype in ("book", "section", "report") and rng.random() < 0.7:
            meta.update(imprint_publisher=rng.choice(["Springer", "CRC Press", "Presses Universitaires", "Наука"]),
                        imprint_place=rng.choice(["Berlin", "Boca Raton", "Paris", "Moscow"]))
            if subtype == "book":
                meta["imprint_isbn"] = "978-3-16-148410-0"
        if subtype == "section":
            meta.update(partof_title=self._words(rng, "eng", 5).capitalize(),
                        partof_pages=f"{(p := rng.randint(1, 400))}-{p + rng.randint(10, 40)}")
        if subtype == "thesis":
            meta["thesis_university"] = rng.choice(AFFILIATIONS)
            meta["thesis_supervisors"] = [self._person(rng) for _ in range(rng.randint(1, 2))]
        return meta

    def _files(self, rng: random.Random, upload_type: str, version: int) -> list[tuple[str, bytes]]:
        kinds = FILE_KINDS.get(upload_type, FILE_KINDS["*"])
        keys = rng.sample(kinds, rng.randint(1, min(3, len(kinds))))
        return [(key, f"v{version} ".encode() + rng.randbytes(int(math.exp(rng.uniform(math.log(64), math.log(16384))))))
                for key in keys]

    def concept(self, index: int) -> tuple[int, list[Version]]:
        """(owner index, versions) of concept `index`; 10% have 2 to 4 versions."""
        rng = random.Random(f"{self.seed}-{index}")
        owner = bisect.bisect_left(self.user_cum, rng.random() * self.user_cum[-1])
        meta = self.metadata(rng)
        if meta.get("communities") and rng.random() < 0.5:
            owner = self.communities.index(meta["communities"][0]["identifier"]) % self.users  # owner: accepted
        created = START + timedelta(seconds=index * STEP_SECONDS + rng.randrange(STEP_SECONDS))
        count = 1 if rng.random() >= 0.1 else rng.randint(2, 4)
        versions = []
        for number in range(count):
            if number:
                meta = dict(meta, version=f"v{number + 1}.0")
                created = created + timedelta(days=rng.randint(1, 400))
            versions.append(Version(metadata=meta, files=self._files(rng, meta["upload_type"], number),
                                    created=created))
        return owner, versions


def orcid(rng: random.Random) -> str:
    """A random ORCID iD with a valid ISO 7064 11,2 check character."""
    digits = f"0000000{rng.randrange(15_000_000, 35_000_000):08d}"  # the ranges ORCID assigns from
    total = 0
    for d in digits:
        total = (total + int(d)) * 2
    check = (12 - total % 11) % 11
    full = digits + ("X" if check == 10 else str(check))
    return "-".join(full[i:i + 4] for i in range(0, 16, 4))


def community_identifiers(count: int) -> list[str]:
    return [f"{COMMUNITY_TOPICS[i % len(COMMUNITY_TOPICS)]}{'' if i < len(COMMUNITY_TOPICS) else i}"
            for i in range(count)]


# --- loading -------------------------------------------------------------------------------------------------
_WORKER: Corpus | None = None


def _init_worker(seed: int, users: int, communities: int) -> None:
    global _WORKER
    _WORKER = Corpus(seed, users, communities)


def _chunk(args: tuple[int, int]) -> list[tuple[int, list[Version]]]:
    start, count = args
    assert _WORKER is not None
    return [_WORKER.concept(i) for i in range(start, start + count)]


def _bounded(pool, starts: Iterator[tuple[int, int]], ahead: int) -> Iterator[list[tuple[int, list[Version]]]]:  # type: ignore[no-untyped-def]
    """Chunks generated by the pool in order, at most `ahead` in flight: `Pool.imap` would consume the endless
    `starts` at once and queue generated records without bound while the loader is slower than the generator."""
    pending: collections.deque = collections.deque()
    for start in starts:
        pending.append(pool.apply_async(_chunk, (start,)))
        if len(pending) >= ahead:
            yield pending.popleft().get()


def concepts(corpus_args: tuple[int, int, int], records: int, owner_ids: list[int], jobs: int,
             chunk: int = 200, first: int = 0) -> Iterator[Concept]:
    """Concepts `first`, `first + 1`, ... until exactly `records` records (the last concept's versions are cut to
    fit)."""
    starts = ((start, chunk) for start in itertools.count(first, chunk))
    if jobs:
        pool = multiprocessing.get_context("fork").Pool(jobs, _init_worker, corpus_args)
        produced = _bounded(pool, starts, ahead=2 * jobs + 1)
    else:
        pool = None
        _init_worker(*corpus_args)
        produced = map(_chunk, starts)
    left = records
    try:
        for generated in produced:
            for owner, versions in generated:
                if left <= 0:
                    return
                versions = versions[:left]
                left -= len(versions)
                yield Concept(owner_id=owner_ids[owner], versions=versions)
    finally:
        if pool is not None:
            pool.terminate()
            pool.join()


def prepare(db, users: int, communities: int) -> list[int]:  # type: ignore[no-untyped-def]
    """Vocabularies loaded, the corpus users and communities created (idempotent); returns the user ids."""
    from repository.accounts import tokens
    from repository.communities import store
    from repository.vocabularies.loader import ensure_loaded

    ensure_loaded(db)
    with db.write() as conn:
        owner_ids = [tokens.create_user(conn, f"corpus-user-{k}@example.org") for k in range(users)]
        for number, identifier in enumerate(community_identifiers(communities)):
            if not store.exists(conn, identifier):
                store.create(conn, owner_ids[number % users], {
                    "identifier": identifier, "title": identifier.replace("-", " ").title() + " community",
                    "description": f"<p>Records about {identifier.replace('-', ' ')}.</p>"})
    return owner_ids


def loaded(db) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """How many concepts and records the database already holds."""
    from sqlalchemy import func, select

    from repository.storage.tables import records as tables

    with db.read() as conn:
        return (conn.execute(select(func.count()).select_from(tables.concepts)).scalar_one(),
                conn.execute(select(func.count()).select_from(tables.records)).scalar_one())


def load(args: argparse.Namespace, ctx: Context) -> int:
    """Generate a deterministic, realistic corpus of N published records and load it in bulk (database, files, index).

    The settings and the (migrated) database come from the command-line preamble of repository/cli/."""
    from tqdm import tqdm

    from repository.files.store import FileStore
    from repository.search.open import open_search
    from repository.worker.bulk import BulkLoader

    db, settings = ctx.db, ctx.settings
    owner_ids = prepare(db, args.users, args.communities)
    if args.index_only:
        return load_index_only(args, ctx, owner_ids)
    loaded_concepts, loaded_records = loaded(db)
    if loaded_records:  # an interrupted load goes on where it stopped (concept i is the same in every run)
        print(f"resuming after {loaded_records} records ({loaded_concepts} concepts)", file=sys.stderr)
    loader = BulkLoader(db, settings, open_search(settings.SEARCH_URL), FileStore(settings.FILES_ROOT))
    source = concepts((args.seed, args.users, args.communities), args.records - loaded_records, owner_ids,
                      args.jobs, first=loaded_concepts)
    with tqdm(total=args.records, initial=loaded_records, unit="rec", disable=args.quiet, file=sys.stderr) as bar:
        report = loader.load(source, batch_records=args.batch, progress=bar.update)
    phases = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in report.phases.items())
    print(f"loaded {report.records} records ({report.concepts} concepts, {report.files} files) in "
          f"{report.seconds:.1f} s: {report.rate:.0f} records/s ({phases})")
    return 0


def load_index_only(args: argparse.Namespace, ctx: Context, owner_ids: list[int]) -> int:
    """The corpus's search documents only, into a new index of a new instance (bench/corpus_index.py)."""
    from tqdm import tqdm

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # its neighbour, also when imported as bench.*
    from corpus_index import load as load_index

    from repository.search.open import open_search

    if loaded(ctx.db)[1]:
        raise SystemExit("this instance holds records: --index-only needs a new INSTANCE_PATH")
    source = concepts((args.seed, args.users, args.communities), args.records, owner_ids, args.jobs)
    with tqdm(total=args.records, unit="rec", disable=args.quiet, file=sys.stderr) as bar:
        count, seconds = load_index(ctx.settings, ctx.db, open_search(ctx.settings.SEARCH_URL), source, bar.update)
    print(f"indexed {count} records (index only: no records rows, no files) in {seconds:.1f} s: "
          f"{count / seconds:.0f} records/s")
    return 0


GENERATE_CORPUS = Command("generate-corpus", load, summary=__doc__.splitlines()[0], migrate=True, arguments=[
    arg("--records", type=int, required=True, help="how many records (versions included)"),
    arg("--seed", type=int, default=SEED),
    arg("--batch", type=int, default=1000, help="records per transaction and index commit"),
    arg("--jobs", type=int, default=1, help="generator processes (0: generate in this process)"),
    arg("--users", type=int, default=USERS),
    arg("--communities", type=int, default=COMMUNITIES),
    arg("--quiet", action="store_true", help="no progress bar"),
    arg("--index-only", action="store_true",
        help="the records' search documents only, no records rows or files (bench/corpus_index.py)"),
])


def main(argv: list[str] | None = None) -> int:
    """Not an operator command (not in `repository-admin`), but run through the same preamble."""
    return invoke(GENERATE_CORPUS, argv)


if __name__ == "__main__":
    sys.exit(main())
