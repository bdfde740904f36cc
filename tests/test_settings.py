"""Settings: declared once, defaults for the embedded shape, bad values stop start-up naming the setting."""

import os

import pytest

from repository.config import Settings, StartupError, settings_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_defaults_give_the_embedded_shape(tmp_path):
    settings = Settings.from_env({"INSTANCE_PATH": str(tmp_path)})
    assert settings.DATABASE_URL == f"sqlite:///{tmp_path}/repository.db"
    assert settings.SEARCH_URL == f"embedded://{tmp_path}/index"
    assert settings.FILES_ROOT == f"{tmp_path}/files"
    assert settings.RATELIMIT_STORAGE_URI == f"file://{tmp_path}/ratelimit.counters"
    assert settings.doi_prefix == "10.5281"
    assert settings.migrate_on_start


def test_environment_values_are_parsed():
    settings = Settings.from_env(
        {"SANDBOX": "true", "TRUSTED_PROXIES": "2", "DATABASE_URL": "postgresql://root@127.0.0.1/test"}
    )
    assert settings.SANDBOX is True and settings.doi_prefix == "10.5072"
    assert settings.TRUSTED_PROXIES == 2
    assert settings.DATABASE_URL == "postgresql+psycopg://root@127.0.0.1/test"
    assert not settings.migrate_on_start


@pytest.mark.parametrize(
    "name, value",
    [
        ("SANDBOX", "maybe"),
        ("TRUSTED_PROXIES", "-1"),
        ("TRUSTED_PROXIES", "two"),
        ("DATABASE_URL", "mysql://localhost/db"),
        ("SEARCH_URL", "solr://localhost"),
        ("BASE_URL", "not a url"),
        ("RATELIMIT_GUEST", "sixty a minute"),
        ("RATELIMIT_STORAGE_URI", "memcached://localhost"),
        ("REGISTRAR", "crossref"),
    ],
)
def test_bad_values_stop_start_up_naming_the_setting(name, value):
    with pytest.raises(StartupError, match=name):
        Settings.from_env({name: value})


def test_unknown_override_is_refused():
    with pytest.raises(StartupError, match="NOPE"):
        Settings.build(NOPE=1)


def test_every_setting_has_help_and_the_documented_table_is_current():
    for declared in Settings.declarations():
        assert declared.metadata["help"].strip()
    with open(os.path.join(ROOT, "docs", "operators", "settings.md"), encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    start = lines.index(settings_table().splitlines()[0])  # the table's header row
    end = next((n for n in range(start, len(lines)) if not lines[n].startswith("|")), len(lines))
    documented = "\n".join(lines[start:end])
    assert documented == settings_table(), (
        "docs/operators/settings.md's settings table is stale: paste the output of repository-admin settings-table"
    )
