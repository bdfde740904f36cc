"""scripts/migrate.py: `--check` (exit 1 when migrations are pending), `--sql` (print them, run nothing),
`--current`; and no command's `--help` ever touches the database."""

from __future__ import annotations

import pytest
from alembic import command

from repository.cli import COMMANDS, invoke
from repository.config import Settings
from repository.storage import open_database
from repository.storage.migrate import alembic_config, head_revision
from scripts import migrate


def _behind(tmp_path, revision: str) -> Settings:  # type: ignore[no-untyped-def]
    """A SQLite database left at an older `revision`, as after upgrading the code but not yet the schema."""
    url = f"sqlite:///{tmp_path}/old.db"
    db = open_database(url)
    command.upgrade(alembic_config(db), revision)
    db.dispose()
    return Settings.build(INSTANCE_PATH=str(tmp_path), DATABASE_URL=url, SECRET_KEY="test-secret")


@pytest.mark.slow  # 0.4 s and more of work
def test_check_sql_and_current_look_without_migrating(tmp_path, capsys):
    settings = _behind(tmp_path, "0012")
    assert migrate.main(["--current"], settings) == 0
    assert capsys.readouterr().out.strip() == "0012"
    assert migrate.main(["--check"], settings) == 1
    out = capsys.readouterr().out
    assert "pending: 0013" in out and head_revision() in out and "database at 0012" in out
    assert migrate.main(["--sql"], settings) == 0
    sql = capsys.readouterr().out
    assert "CREATE TABLE access_requests" in sql
    assert f"UPDATE alembic_version SET version_num='{head_revision()}'" in sql
    assert migrate.main(["--current"], settings) == 0
    assert capsys.readouterr().out.strip() == "0012"  # --check and --sql ran nothing
    assert migrate.main([], settings) == 0
    assert migrate.main(["--check"], settings) == 0
    assert capsys.readouterr().out.endswith(f"up to date at revision {head_revision()}\n")


def test_on_an_up_to_date_database(settings, capsys):
    """On the test database (SQLite, or PostgreSQL with TEST_DATABASE_URL)."""
    assert migrate.main(["--check"], settings) == 0
    assert migrate.main(["--current"], settings) == 0
    assert migrate.main(["--sql"], settings) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == head_revision() and out[2].startswith("-- nothing to apply")


def test_the_options_exclude_each_other(settings, capsys):
    with pytest.raises(SystemExit) as exit_:
        migrate.main(["--check", "--sql"], settings)
    assert exit_.value.code == 2 and "not allowed with" in capsys.readouterr().err


def test_a_database_from_a_newer_release_is_reported(tmp_path, capsys):
    settings = _behind(tmp_path, "0012")
    db = open_database(settings.DATABASE_URL)
    with db.write() as conn:
        conn.exec_driver_sql("UPDATE alembic_version SET version_num = '9999'")
    db.dispose()
    assert migrate.main(["--check"], settings) == 2
    assert "revision 9999, which this release does not know" in capsys.readouterr().err


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_never_touches_the_database(name, tmp_path, capsys):
    path = tmp_path / "never.db"
    settings = Settings.build(INSTANCE_PATH=str(tmp_path / "instance"), DATABASE_URL=f"sqlite:///{path}",
                              SECRET_KEY="test-secret")
    with pytest.raises(SystemExit) as exit_:
        invoke(COMMANDS[name], ["--help"], settings)
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out
    assert not path.exists() and not (tmp_path / "instance").exists()
