"""Subject vocabularies (docs/operators/subjects.md): `repository-admin load-subjects` loads a file of terms under a
vocabulary's name (again: nothing changes; terms gone from the file go; other vocabularies stay; a bad file changes
nothing), and `/api/vocabularies/subjects` suggests the terms with their identifiers."""

from __future__ import annotations

from pathlib import Path

from repository.cli import COMMANDS, invoke

SAMPLE = str(Path(__file__).parent.parent / "data" / "subjects" / "mesh-sample.jsonl")
DIABETES = "https://id.nlm.nih.gov/mesh/D003920"


def _load(settings, path: str, name: str = "MeSH") -> int:  # type: ignore[no-untyped-def]
    return invoke(COMMANDS["load-subjects"], [path, "--vocabulary", name], settings)


def _terms(client, q: str = "", size: int = 50) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    answer = client.get("/api/vocabularies/subjects", query_string={"q": q, "size": size})
    assert answer.status_code == 200, answer.get_json()
    return [(hit["term"], hit["vocabulary"]) for hit in answer.get_json()["hits"]]


def test_a_vocabulary_loads_again_without_change_and_follows_its_file(settings, client, tmp_path, capsys):
    assert _load(settings, SAMPLE) == 0
    assert "MeSH: 6 added, 0 updated, 0 removed" in capsys.readouterr().out
    assert _load(settings, SAMPLE) == 0
    assert "MeSH: 0 added, 0 updated, 0 removed" in capsys.readouterr().out
    lines = Path(SAMPLE).read_text().splitlines()
    newer = tmp_path / "mesh.jsonl"
    newer.write_text("\n".join([lines[0].replace("Diabetes Mellitus", "Diabetes  mellitus"), *lines[1:5]]) + "\n")
    assert _load(settings, str(newer)) == 0
    assert "MeSH: 0 added, 1 updated, 1 removed" in capsys.readouterr().out
    other = tmp_path / "local.csv"
    other.write_text("term,identifier\nSea level,https://vocab.example.org/sea-level\n")
    assert _load(settings, str(other), "Local") == 0
    assert [t for t, _ in _terms(client)] == ["Asthma", "Cardiovascular Diseases", "Diabetes mellitus", "Hypertension",
                                              "Neoplasms", "Sea level"]


def test_a_bad_file_changes_nothing_and_says_where(settings, client, tmp_path, capsys):
    assert _load(settings, SAMPLE) == 0
    cases = {"bad.jsonl": ('{"term": "A", "identifier": "https://a.example/1"}\n{"term": "B", "identifier": "not one"}\n',
                           "line 2"),
             "twice.jsonl": ('{"term": "A", "identifier": "https://a.example/1"}\n'
                             '{"term": "B", "identifier": "https://a.example/1"}\n', "appears twice"),
             "empty-term.jsonl": ('{"term": " ", "identifier": "https://a.example/1"}\n', "`term` must be"),
             "header.csv": ("name,id\nA,https://a.example/1\n", "header must name")}
    for name, (text, message) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        capsys.readouterr()
        assert _load(settings, str(path)) == 2, name
        assert message in capsys.readouterr().err, name
    assert _load(settings, SAMPLE, " ") == 2
    assert len(_terms(client)) == 6  # the loaded vocabulary as it was


def test_terms_are_suggested_with_their_identifiers(settings, client):
    assert _load(settings, SAMPLE) == 0
    answer = client.get("/api/vocabularies/subjects", query_string={"q": "diab"})
    assert answer.status_code == 200 and answer.headers["Cache-Control"].startswith("public")
    assert answer.get_json() == {"hits": [{"term": "Diabetes Mellitus", "identifier": DIABETES, "scheme": "url",
                                           "vocabulary": "MeSH"}], "total": 1}
    assert _terms(client, "D009369") == [("Neoplasms", "MeSH")]  # by its identifier too
    assert _terms(client, "asthma")[0] == ("Asthma", "MeSH")
    assert client.get("/api/vocabularies/subjects", query_string={"size": 0}).status_code == 400
    again = client.get("/api/vocabularies/subjects", query_string={"q": "diab"},
                       headers={"If-None-Match": answer.headers["ETag"]})
    assert again.status_code == 304
