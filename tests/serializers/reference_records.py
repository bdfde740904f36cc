"""Reference records (v1 record dicts, the serializers' input) covering every type and field."""

from __future__ import annotations

import copy
from typing import Any
from urllib.parse import quote

BASE = "https://repo.example.org"
PREFIX = "10.5281"


def _files(recid: int, bucket: str, *names: tuple[str, int, str]) -> list[dict[str, Any]]:
    return [
        {
            "id": f"00000000-0000-4000-8000-{recid:08d}{index:04d}",
            "bucket": bucket,
            "checksum": f"md5:{digest}",
            "key": key,
            "size": size,
            "type": key.rsplit(".", 1)[-1].lower() if "." in key else "",
            "links": {"self": f"{BASE}/api/files/{bucket}/{quote(key)}"},
        }
        for index, (key, size, digest) in enumerate(names)
    ]


def make_record(recid: int, metadata: dict[str, Any], *, files: list | None = None, **top: Any) -> dict:
    """A published record as the records module builds it; `metadata` holds the record-form fields."""
    concept = str(recid - 1)
    doi = metadata.get("doi") or f"{PREFIX}/repo.{recid}"
    access = metadata.setdefault("access_right", "open")
    metadata.setdefault(
        "access_right_category", {"open": "success", "embargoed": "warning"}.get(access, "danger")
    )
    metadata["doi"] = doi
    metadata.setdefault(
        "relations",
        {
            "version": [
                {
                    "index": 0,
                    "is_last": True,
                    "count": 1,
                    "parent": {"pid_type": "recid", "pid_value": concept},
                    "last_child": {"pid_type": "recid", "pid_value": str(recid)},
                }
            ]
        },
    )
    record: dict[str, Any] = {
        "id": recid,
        "conceptrecid": concept,
        "doi": doi,
        "conceptdoi": f"{PREFIX}/repo.{concept}",
        "created": "2024-03-01T10:00:00+00:00",
        "updated": "2024-03-02T11:30:45+00:00",
        "revision": 3,
        "owners": [7],
        "stats": {"downloads": 4, "unique_downloads": 3, "views": 12, "unique_views": 9, "volume": 2048,
                  "version_downloads": 4, "version_unique_downloads": 3, "version_views": 12,
                  "version_unique_views": 9, "version_volume": 2048},
        "links": {
            "self": f"{BASE}/api/records/{recid}",
            "html": f"{BASE}/records/{recid}",
            "doi": f"https://doi.org/{doi}",
            "badge": f"{BASE}/badge/doi/{doi}.svg",
            "conceptdoi": f"https://doi.org/{PREFIX}/repo.{concept}",
            "conceptbadge": f"{BASE}/badge/doi/{PREFIX}/repo.{concept}.svg",
            "latest": f"{BASE}/api/records/{recid}/versions/latest",
            "latest_html": f"{BASE}/records/{recid}/latest",
        },
        "metadata": metadata,
    }
    if files:
        record["files"] = files
        record["links"]["bucket"] = f"{BASE}/api/files/{files[0]['bucket']}"
    if not doi.startswith(PREFIX + "/"):
        # External DOIs get no concept DOI (docs/reference-behaviour.md#doi-rules).
        del record["conceptdoi"], record["links"]["conceptdoi"], record["links"]["conceptbadge"]
    record.update(top)
    return record


CREATOR_FULL = {
    "name": "Müller-Lüdenscheidt, Zoë Ågot",
    "affiliation": "Universität Zürich",
    "orcid": "0000-0002-1825-0097",
    "gnd": "170118215",
}

GRANTS = [
    {
        "code": "654321",
        "title": "Open Research <Data> & Infrastructure",
        "acronym": "ORDI",
        "program": "H2020",
        "funder": {"doi": "10.13039/501100000780", "name": "European Commission", "acronyms": ["EC"],
                   "links": {"self": f"{BASE}/api/funders/10.13039/501100000780"}},
        "links": {"self": f"{BASE}/api/grants/10.13039/501100000780::654321"},
    },
    {
        "code": "1R01GM123456",
        "title": "Structural biology of things",
        "acronym": "",
        "program": "",
        "funder": {"doi": "10.13039/100000002", "name": "National Institutes of Health", "acronyms": ["NIH"],
                   "links": {"self": f"{BASE}/api/funders/10.13039/100000002"}},
        "links": {"self": f"{BASE}/api/grants/10.13039/100000002::1R01GM123456"},
    },
]


def _article() -> dict:
    return make_record(1001, {
        "title": "Über die Effizienz von naïve Verfahren: résumé",
        "publication_date": "2024-02-29",
        "description": "<p>An <strong>abstract</strong> with a formula a &lt; b &amp; c.</p>",
        "resource_type": {"type": "publication", "subtype": "article", "title": "Journal article"},
        "license": {"id": "CC-BY-4.0"},
        "creators": [CREATOR_FULL, {"name": "O'Brien, Seán", "affiliation": "Trinity College Dublin"},
                     {"name": "Consortium for Open Science"}],
        "contributors": [
            {"name": "Smith, Jane", "type": "Editor", "affiliation": "CERN", "orcid": "0000-0001-5109-3700"},
            {"name": "Data Desk", "type": "DataCurator"},
            {"name": "Roe, Richard", "type": "ContactPerson", "gnd": "118540238"},
        ],
        "keywords": ["efficiency", "naïve methods", "Zürich"],
        "subjects": [{"term": "Computer science", "identifier": "https://id.loc.gov/authorities/subjects/sh89003285",
                      "scheme": "url"}],
        "journal": {"title": "Journal of Reproducible Results", "volume": "12", "issue": "3",
                    "pages": "101-120", "year": "2024"},
        "grants": GRANTS,
        "communities": [{"id": "open-science"}, {"id": "physics"}],
        "related_identifiers": [
            {"identifier": "10.1234/foo.bar", "relation": "cites", "scheme": "doi",
             "resource_type": "publication-article"},
            {"identifier": "https://github.com/example/repo/tree/v1.0", "relation": "isSupplementTo",
             "scheme": "url"},
            {"identifier": "arXiv:2101.00001", "relation": "isAlternateIdentifier", "scheme": "arxiv"},
            {"identifier": f"{PREFIX}/repo.1000", "relation": "isVersionOf", "scheme": "doi"},
        ],
        "references": ["Doe, J. (2020). Something & more. J. Stuff 1, 2-3.",
                       "Roe, R. (2019). Other <things>."],
        "language": "eng",
        "version": "v2.1.0",
        "notes": "Preliminary results; see <em>errata</em>.",
        "method": "<p>Monte-Carlo simulation with 10⁶ samples.</p>",
        "dates": [{"start": "2023-01-01", "end": "2023-06-30", "type": "Collected",
                   "description": "Field season"},
                  {"start": "2024-01-01", "end": "2024-01-01", "type": "Valid"}],
        "locations": [{"lat": 47.3769, "lon": 8.5417, "place": "Zürich, Switzerland",
                       "description": "Main campus"}],
    }, files=_files(1001, "b0c1d2e3-0000-4000-8000-000000001001",
                    ("paper.pdf", 123456, "5d41402abc4b2a76b9719d911017c592"),
                    ("data table.csv", 42, "7d793037a0760186574b0282f2f435e7")))


def _patent() -> dict:
    return make_record(1002, {
        "title": "一种用于数据存储的方法及装置",
        "publication_date": "2023-07-15",
        "description": "本发明公开了一种数据存储方法。",
        "resource_type": {"type": "publication", "subtype": "patent", "title": "Patent"},
        "license": {"id": "cc-by"},
        "creators": [{"name": "王, 小明", "affiliation": "清华大学"}, {"name": "李, 华"}],
        "keywords": ["数据存储"],
        "language": "zho",
        "related_identifiers": [{"identifier": "CN112345678A", "relation": "isIdenticalTo", "scheme": "url"}],
    }, files=_files(1002, "b0c1d2e3-0000-4000-8000-000000001002",
                    ("patent.pdf", 9000, "0cc175b9c0f1b6a831c399e269772661")))


def _thesis() -> dict:
    return make_record(1003, {
        "title": "Modelle der Verdunstung in ariden Gebieten",
        "publication_date": "2022-10-01",
        "description": "<p>Dissertation über Verdunstung. ملخص باللغة العربية: التبخر في المناطق الجافة.</p>",
        "resource_type": {"type": "publication", "subtype": "thesis", "title": "Thesis"},
        "access_right": "embargoed",
        "embargo_date": "2027-01-01",
        "license": {"id": "CC-BY-SA-4.0"},
        "creators": [{"name": "حداد, ليلى", "affiliation": "جامعة القاهرة", "orcid": "0000-0002-9079-593X"}],
        "thesis": {"university": "Technische Universität München",
                   "supervisors": [{"name": "Schröder, Klaus", "affiliation": "TUM",
                                    "orcid": "0000-0003-1419-2405"}, {"name": "Ng, Amy"}]},
        "language": "deu",
        "dates": [{"start": "2027-01-01", "type": "Withdrawn", "description": "planned"}],
    }, files=_files(1003, "b0c1d2e3-0000-4000-8000-000000001003",
                    ("thesis.pdf", 5555, "92eb5ffee6ae2fec3ad71c777531578f")))


def _book() -> dict:
    return make_record(1004, {
        "title": "ספר הדוגמאות: מבוא",
        "publication_date": "2021-05-05",
        "description": "תיאור הספר בעברית.",
        "resource_type": {"type": "publication", "subtype": "book", "title": "Book"},
        "license": {"id": "CC0-1.0"},
        "creators": [{"name": "כהן, דוד"}],
        "imprint": {"publisher": "Magnes Press", "place": "Jerusalem, Israel", "isbn": "978-3-16-148410-0"},
        "language": "heb",
        "related_identifiers": [{"identifier": "978-0-306-40615-7", "relation": "isVariantFormOf",
                                 "scheme": "isbn"}],
    })


def _section() -> dict:
    return make_record(1005, {
        "title": "Chapter 7: Kinetics",
        "publication_date": "2020-12-01",
        "description": "A chapter.",
        "resource_type": {"type": "publication", "subtype": "section", "title": "Book section"},
        "access_right": "restricted",
        "access_conditions": "<p>Only for members of the <b>lab</b>.</p>",
        "doi": "10.1000/external.chapter.7",
        "creators": [{"name": "Tanaka, Hiroshi", "affiliation": "東京大学"}],
        "part_of": {"title": "Handbook of Chemical Kinetics", "pages": "201-250"},
        "imprint": {"publisher": "Springer", "place": "Berlin, Germany", "isbn": "978-3-540-00000-2"},
        "language": "jpn",
    })


def _conference() -> dict:
    return make_record(1006, {
        "title": "Parsing <XML> & friends\x0b safely 🚀",
        "publication_date": "2019-09-10",
        "description": "Uses \"quotes\", 'apostrophes', {braces}, 100% of $cash, a_b #tag ~ ^ \\ and \x0bvtab.",
        "resource_type": {"type": "publication", "subtype": "conferencepaper", "title": "Conference paper"},
        "license": {"id": "MIT"},
        "creators": [{"name": "Émile, Zola & Co"}, {"name": "Søren, Kierkegaard"}],
        "meeting": {"title": "International Conference on Markup <ICM> 2019", "acronym": "ICM'19",
                    "dates": "9-12 September 2019", "place": "Montréal, Canada",
                    "url": "https://icm.example.org/2019", "session": "S3", "session_part": "2"},
        "part_of": {"title": "Proceedings of ICM 2019", "pages": "33-40"},
        "keywords": ["xml", "<escaping>", "a & b"],
        "language": "fra",
        "notes": "Best paper 🏆 {braces} 100% $5 a_b #1 ~x^2 C:\\path end",
    })


def _dataset() -> dict:
    return make_record(1007, {
        "title": "Sensor readings from the North Sea, 2020–2023",
        "publication_date": "2023-11-30",
        "description": "Hourly readings.",
        "resource_type": {"type": "dataset", "title": "Dataset"},
        "license": {"id": "CC0-1.0"},
        "creators": [{"name": "Doe, John", "affiliation": "CERN", "orcid": "0000-0002-1694-233X"}],
        "contributors": [{"name": "Hosting Inst.", "type": "HostingInstitution"},
                         {"name": "Funding Body", "type": "Funder"}],
        "locations": [{"lat": 56.0, "lon": 3.0, "place": "North Sea"}, {"place": "Bergen, Norway"}],
        "dates": [{"start": "2020-01-01", "type": "Collected"}],
        "subjects": [{"term": "Oceanography", "identifier": "http://www.wikidata.org/entity/Q3057",
                      "scheme": "url"}],
        "related_identifiers": [{"identifier": "10.5281/repo.999", "relation": "isDerivedFrom", "scheme": "doi"},
                                {"identifier": "PMC1234567", "relation": "isReferencedBy", "scheme": "pmcid"}],
        "grants": GRANTS[1:],
        "communities": [{"id": "ocean"}],
        "method": "Buoys.",
        "version": "2023.11",
    }, files=_described(_files(1007, "b0c1d2e3-0000-4000-8000-000000001007",
                               ("readings.csv", 987654321, "e2fc714c4727ee9395f324cd2e7f331f"))))


def _described(files: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The file details a view adds for the formats that show them (serializers/__init__.py): the first file's
    SHA-256 and, as a tabular descriptor describes it, its columns."""
    columns = (("country", "string"), ("year", "integer"), ("value", "number"), ("indicator", "string"),
               ("source", "string"), ("unit", "string"), ("notes", "string"))
    files[0]["sha256"] = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    files[0]["fields"] = [{"name": name, "type": kind} for name, kind in columns]
    return files


def _software() -> dict:
    return make_record(1008, {
        "title": "example/repo: v1.2.0",
        "publication_date": "2023-03-14",
        "description": "<p>Release notes</p>",
        "resource_type": {"type": "software", "title": "Software"},
        "license": {"id": "Apache-2.0"},
        "creators": [{"name": "Doe, John"}, {"name": "Smith, Jane", "orcid": "0000-0001-5109-3700"}],
        "related_identifiers": [
            {"identifier": "https://github.com/example/repo/tree/v1.2.0", "relation": "isSupplementTo",
             "scheme": "url"},
            {"identifier": "swh:1:rev:309cf2674ee7a0749978cf8265ab91a60aea0f7d", "relation": "isIdenticalTo",
             "scheme": "swh"},
            {"identifier": "10.5281/repo.1", "relation": "requires", "scheme": "doi"},
        ],
        "version": "v1.2.0",
        "keywords": ["python"],
        "language": "eng",
    }, files=_files(1008, "b0c1d2e3-0000-4000-8000-000000001008",
                    ("example/repo-v1.2.0.zip", 2048, "c4ca4238a0b923820dcc509a6f75849b")))


def _photo() -> dict:
    return make_record(1009, {
        "title": "Sunset over the fjord",
        "publication_date": "2018-06-21",
        "description": "A photo.",
        "resource_type": {"type": "image", "subtype": "photo", "title": "Photo"},
        "access_right": "closed",
        "creators": [{"name": "Nilsen, Åse"}],
        "locations": [{"lat": -33.8688, "lon": 151.2093, "place": "Sydney"}],
    })


def _video() -> dict:
    return make_record(1010, {
        "title": "Lecture recording",
        "publication_date": "2017-01-02",
        "description": "Video of a talk.",
        "resource_type": {"type": "video", "title": "Video/Audio"},
        "license": {"id": "other-open"},
        "creators": [{"name": "Speaker, A."}],
        "language": "spa",
    }, files=_files(1010, "b0c1d2e3-0000-4000-8000-000000001010", ("talk.mp4", 10, "abc123abc123abc123abc123abc123ab")))


def _lean(recid: int, kind: str, subtype: str | None, title: str) -> dict:
    rtype = {"type": kind, "title": title} | ({"subtype": subtype} if subtype else {})
    return make_record(recid, {
        "title": f"A {title.lower()}", "publication_date": "2024-01-15", "description": f"{title}.",
        "resource_type": rtype, "license": {"id": "CC-BY-4.0"}, "creators": [{"name": "Lean, Lee"}],
    })


def all_records() -> dict[str, dict]:
    """Fixture name -> a fresh record dict (callers may mutate it)."""
    return copy.deepcopy(_RECORDS)


_RECORDS = {
    "article": _article(),
    "patent": _patent(),
    "thesis": _thesis(),
    "book": _book(),
    "section": _section(),
    "conferencepaper": _conference(),
    "dataset": _dataset(),
    "software": _software(),
    "photo": _photo(),
    "video": _video(),
    "poster": _lean(1011, "poster", None, "Poster"),
    "presentation": _lean(1012, "presentation", None, "Presentation"),
    "lesson": _lean(1013, "lesson", None, "Lesson"),
    "physicalobject": _lean(1014, "physicalobject", None, "Physical object"),
    "other": _lean(1015, "other", None, "Other"),
    "figure": _lean(1016, "image", "figure", "Figure"),
    "report": _lean(1017, "publication", "report", "Report"),
}
