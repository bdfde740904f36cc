"""RO-Crate, Croissant, CodeMeta and CITATION.cff of every golden record and of generated ones, each checked by its
community's own validator, offline (validators.py says how each is run)."""

from __future__ import annotations

import pytest
import yaml
from generated_records import generated
from helpers.format_validators import (
    cff_errors,
    codemeta_predicates,
    codemeta_undefined_terms,
    croissant_warnings,
    rocrate_issues,
)
from reference_records import all_records

from serializers import REGISTRY, cff, codemeta, croissant, rocrate
from serializers.errors import NotDescribable

# rdflib deprecates what roc-validator's checks still call (warnings are errors in this suite): not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")
NAMES = sorted(all_records())
DATASETS = generated("dataset", 4)
SOFTWARE = generated("software", 4)
SEMVER_WARNING = "Version doesn't follow MAJOR.MINOR.PATCH"


def _of_type(kind: str) -> list[str]:
    return [name for name, record in all_records().items() if record["metadata"]["resource_type"]["type"] == kind]


# --- RO-Crate ----------------------------------------------------------------------------------------------------

@pytest.mark.slow  # ~1.5 s a crate: the fast suite validates the dataset's (below)
@pytest.mark.parametrize("name", NAMES)
def test_every_golden_record_is_a_valid_detached_crate(records, ctx, name, monkeypatch):
    assert rocrate_issues(monkeypatch, metadata=rocrate.crate(records[name], ctx)) == []


@pytest.mark.slow
def test_the_dataset_is_a_valid_crate_in_both_forms(records, ctx, monkeypatch, tmp_path):
    record = records["dataset"]
    assert rocrate_issues(monkeypatch, metadata=rocrate.crate(record, ctx)) == []
    (tmp_path / rocrate.METADATA_NAME).write_bytes(rocrate.render_packaged(record, ctx))
    (tmp_path / "readings.csv").write_bytes(b"country,year\n")
    assert rocrate_issues(monkeypatch, folder=tmp_path) == []


@pytest.mark.slow
def test_the_validator_finds_a_packaged_crate_missing_a_file_invalid(records, ctx, monkeypatch, tmp_path):
    (tmp_path / rocrate.METADATA_NAME).write_bytes(rocrate.render_packaged(records["dataset"], ctx))
    assert rocrate_issues(monkeypatch, folder=tmp_path)  # readings.csv is not there


@pytest.mark.slow
def test_the_validator_finds_a_crate_without_license_invalid(records, ctx, monkeypatch):
    document = rocrate.crate(records["article"], ctx)
    root = next(entity for entity in document["@graph"] if entity["@id"] == "./")
    del root["license"]
    assert rocrate_issues(monkeypatch, metadata=document)


@pytest.mark.slow  # ~2 s a crate
@pytest.mark.parametrize("index", range(len(DATASETS) + len(SOFTWARE)))
def test_generated_records_make_valid_packaged_crates(ctx, index, monkeypatch, tmp_path):
    record, contents = (DATASETS + SOFTWARE)[index]
    (tmp_path / rocrate.METADATA_NAME).write_bytes(rocrate.render_packaged(record, ctx))
    for key, data in contents.items():
        (tmp_path / key).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / key).write_bytes(data)
    assert rocrate_issues(monkeypatch, folder=tmp_path) == []


def test_a_packaged_crate_names_each_file_by_its_path(records, ctx):
    graph = rocrate.crate(records["article"], ctx, packaged=True)["@graph"]
    files = [entity for entity in graph if entity["@type"] == "File"]
    assert [f["@id"] for f in files] == ["paper.pdf", "data%20table.csv"]
    assert files[1] | {"md5": files[1]["md5"]} == {
        "@id": "data%20table.csv", "@type": "File", "name": "data table.csv", "contentSize": "42",
        "encodingFormat": "text/csv", "md5": "7d793037a0760186574b0282f2f435e7"}


# --- Croissant ---------------------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", _of_type("dataset"))
def test_golden_datasets_load_in_mlcroissant(records, ctx, name):
    assert croissant_warnings(croissant.croissant(records[name], ctx)) == set()


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(DATASETS)))
def test_generated_datasets_load_in_mlcroissant(ctx, index):
    warnings = croissant_warnings(croissant.croissant(DATASETS[index][0], ctx))
    # The version is the depositor's to give (as "v2", or none): the only warnings allowed are about it.
    assert all(SEMVER_WARNING in warning or "schema.org/version" in warning for warning in warnings), warnings


@pytest.mark.slow  # 0.4 s and more of work
def test_a_described_csv_is_a_record_set_typed_by_its_descriptor(records, ctx):
    import mlcroissant

    dataset = mlcroissant.Dataset(jsonld=croissant.croissant(records["dataset"], ctx))
    [record_set] = dataset.metadata.record_sets
    types = {field.name: str(field.data_types[0]) for field in record_set.fields}
    assert types["year"].endswith("Integer") and types["value"].endswith("Float")
    assert types["country"].endswith("Text") and len(types) == 7


def test_mlcroissant_refuses_a_file_object_without_checksum(records, ctx):
    import mlcroissant

    document = croissant.croissant(records["dataset"], ctx)
    del document["distribution"][0]["md5"], document["distribution"][0]["sha256"]
    with pytest.raises(mlcroissant.ValidationError):
        mlcroissant.Dataset(jsonld=document)


@pytest.mark.parametrize("name", sorted(set(NAMES) - set(_of_type("dataset"))))
def test_croissant_refuses_what_is_not_a_dataset(records, ctx, name):
    with pytest.raises(NotDescribable):
        REGISTRY["croissant"].render(records[name], ctx)


# --- CodeMeta ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("index", range(1 + len(SOFTWARE)))
def test_codemeta_terms_all_expand_against_its_context(records, ctx, index):
    record = records["software"] if index == 0 else SOFTWARE[index - 1][0]
    document = codemeta.codemeta(record, ctx)
    assert codemeta_undefined_terms(document) == set()
    predicates = codemeta_predicates(document)
    # rdf:type, and rdf:first/rest of the author list (CodeMeta keeps authors in order: an @list)
    assert predicates and all(p.startswith(("http://schema.org/", "https://w3id.org/codemeta/terms/",
                                            "http://www.w3.org/1999/02/22-rdf-syntax-ns#")) for p in predicates)


def test_the_codemeta_check_finds_a_term_the_context_lacks(records, ctx):
    document = codemeta.codemeta(records["software"], ctx) | {"inLanguage": "English"}
    assert codemeta_undefined_terms(document) == {"inLanguage"}


def test_codemeta_of_the_golden_software(records, ctx):
    document = codemeta.codemeta(records["software"], ctx)
    assert document["codeRepository"] == "https://github.com/example/repo/tree/v1.2.0"
    assert document["author"][1] == {"@type": "Person", "@id": "https://orcid.org/0000-0001-5109-3700",
                                     "givenName": "Jane", "familyName": "Smith"}
    assert document["license"] == "https://spdx.org/licenses/Apache-2.0.html"


@pytest.mark.parametrize("name", sorted(set(NAMES) - {"software"}))
def test_codemeta_refuses_what_is_not_software(records, ctx, name):
    with pytest.raises(NotDescribable):
        REGISTRY["codemeta"].render(records[name], ctx)


# --- CITATION.cff ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("index", range(2 + len(DATASETS) + len(SOFTWARE)))
def test_cff_validates_against_the_cff_schema(records, ctx, index):
    record = [records["software"], records["dataset"], *(r for r, _ in DATASETS + SOFTWARE)][index]
    text = cff.render(record, ctx).decode()
    assert cff_errors(text) == []
    assert yaml.safe_load(text)["type"] == record["metadata"]["resource_type"]["type"]


def test_the_cff_check_finds_a_license_cff_does_not_list(records, ctx):
    text = cff.render(records["software"], ctx).decode().replace("license: Apache-2.0", "license: other-open")
    assert any(error.startswith("license") for error in cff_errors(text))


def test_cff_keeps_strings_strings(records, ctx):
    text = cff.render(records["dataset"], ctx).decode()
    parsed = yaml.safe_load(text)
    assert parsed["version"] == "2023.11" and parsed["date-released"] == "2023-11-30"
    assert parsed["license"] == "CC0-1.0" and parsed["doi"] == "10.5281/repo.1007"


@pytest.mark.parametrize("name", sorted(set(NAMES) - {"software", "dataset"}))
def test_cff_refuses_what_is_neither_software_nor_a_dataset(records, ctx, name):
    with pytest.raises(NotDescribable):
        REGISTRY["cff"].render(records[name], ctx)


def test_a_document_shares_nothing_with_the_record_or_the_next_document(records, ctx):
    """mlcroissant changes the document it loads: that must change neither the record nor later documents."""
    import copy

    record = records["dataset"]
    kept = copy.deepcopy(record)
    first = croissant.render(record, ctx)
    croissant_warnings(croissant.croissant(record, ctx))
    assert record == kept and croissant.render(record, ctx) == first
