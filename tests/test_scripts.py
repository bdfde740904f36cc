"""The automation interface: create_token prints only the token, creating database and user as needed."""

from helpers.http import https_client

from app import create_app
from repository.config import Settings
from scripts import create_token, tokens


def test_create_token_creates_database_user_and_token(tmp_path, capsys, database_url):
    # No worker thread: this app is never shut down, and the database is the one the next tests of this process use.
    settings = Settings.build(INSTANCE_PATH=str(tmp_path / "fresh"), DATABASE_URL=database_url, BASE_URL="https://localhost",
                              BACKGROUND_WORKER=False)
    assert create_token.main(["--email", "Ada@Example.org", "--scopes", "deposit:write"], settings) == 0
    out = capsys.readouterr().out
    token = out.strip()
    assert out == token + "\n" and len(token) >= 43
    client = https_client(create_app(settings))
    listed = client.get("/api/tokens/", headers={"Authorization": f"Bearer {token}"}).json
    assert listed[0]["scopes"] == ["deposit:write"]


def test_create_token_on_a_brand_new_sqlite_file(tmp_path, capsys):
    settings = Settings.build(INSTANCE_PATH=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path}/new/db.sqlite")
    assert create_token.main(["--email", "new@example.org"], settings) == 0
    assert (tmp_path / "new" / "db.sqlite").exists()
    assert capsys.readouterr().out.strip()


def test_bad_scope_fails_with_a_message(settings, capsys):
    assert create_token.main(["--email", "a@example.org", "--scopes", "admin"], settings) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "admin" in captured.err


def test_list_and_revoke_from_the_command_line(settings, capsys):
    create_token.main(["--email", "a@example.org"], settings)
    token = capsys.readouterr().out.strip()
    assert tokens.main(["list", "--email", "a@example.org"], settings) == 0
    line = capsys.readouterr().out.strip()
    token_id = int(line.split("\t")[0])
    assert line.endswith("active")
    assert tokens.main(["revoke", "--email", "a@example.org", "--id", str(token_id)], settings) == 0
    capsys.readouterr()
    client = https_client(create_app(settings))
    assert client.get("/api/", headers={"Authorization": f"Bearer {token}"}).status_code == 401
    assert tokens.main(["revoke", "--email", "a@example.org", "--id", str(token_id)], settings) == 2
