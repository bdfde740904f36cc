"""The deposit form's pickers in a real browser (headless Chromium, Playwright), with the keyboard alone, at desktop
and phone width: the upload type chooses its default license, a license and an affiliation are picked by name (the
organisation's ROR id filled in from the suggestions of the loaded ROR dump), an ORCID iD with a typo is flagged as
it is typed and the flag goes once it is corrected; the saved draft holds the codes and ids. A subject term is picked
from a loaded vocabulary."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from helpers.browser import DESKTOP, PHONE, browser_session, check_page, screenshot, sign_up_and_in

from pages.test_browser_keyboard_deposit import _focused, press, tab_to, type_into

SAMPLE = str(Path(__file__).parent.parent / "data" / "ror" / "ror-sample-v2.json")
SUBJECTS = str(Path(__file__).parent.parent / "data" / "subjects" / "mesh-sample.jsonl")
PASSWORD = "a long passphrase 4 pickers"
MONASH = "https://ror.org/02bfwt286"


def _load_ror(live_server: dict) -> None:
    """The operator's command, run against the live server's database."""
    done = subprocess.run([sys.executable, "-m", "repository", "load-ror", SAMPLE, "--quiet"],
                          env=live_server["env"], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("organisations: "), done.stdout


@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_pickers_with_the_keyboard(live_server, width):
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    _load_ror(live_server)
    with browser_session(live_server, DESKTOP if width == "desktop" else PHONE) as (_browser, page):
        sign_up_and_in(page, live_server, f"pickers-{uuid.uuid4().hex[:8]}@example.org", PASSWORD, "/deposit/new")
        page.keyboard.press("Tab")
        press(page, "Start a new upload")
        dep_url = page.url

        tab_to(page, "upload_type")
        page.keyboard.type("Dataset")
        expect(page.locator("#license")).to_have_value("cc-zero")  # the type's default, chosen
        type_into(page, "title", "Tide gauges")
        type_into(page, "creators-0-name", "Doe, Jane")

        # The affiliation: typed by name, the suggestions come with the ROR id, which fills in the field beside it.
        type_into(page, "creators-0-affiliation", "Monash")
        expect(page.locator('#affiliations-list option[value="Monash University"]')).to_have_count(1)
        assert MONASH in page.locator('#affiliations-list option[value="Monash University"]').inner_text()
        page.keyboard.type(" University")
        expect(page.locator("#creators-0-affiliation_id")).to_have_value(MONASH)

        # The ORCID iD: flagged as soon as it is whole and wrong, beside the field; the flag goes when corrected.
        type_into(page, "creators-0-orcid", "0000-0002-1825-0098")
        orcid = page.locator("#creators-0-orcid")
        expect(page.locator("#creators-0-orcid-error")).to_contain_text("This ORCID iD does not exist")
        assert orcid.get_attribute("aria-invalid") == "true"
        assert "creators-0-orcid-error" in (orcid.get_attribute("aria-describedby") or "")
        check_page(page, "deposit form with an ORCID flagged as typed")
        if width == "desktop":  # the screenshots are taken at both widths
            screenshot(page, "pickers-orcid-typo")
        page.keyboard.press("Backspace")
        page.keyboard.type("7")
        expect(page.locator("#creators-0-orcid-error")).to_have_count(0)
        assert orcid.get_attribute("aria-invalid") is None

        # The license: by its name, which the suggestions list.
        type_into(page, "license", "MIT")
        expect(page.locator('#licenses-list option[value="MIT"]')).to_have_count(1)
        page.keyboard.press("Control+A")
        page.keyboard.type("MIT License")
        type_into(page, "description", "Hourly sea levels.")
        check_page(page, "deposit form with an affiliation and a license picked")
        if width == "desktop":
            screenshot(page, "pickers-picked")
        press(page, "Save draft")
        expect(page.locator(".notice.success")).to_contain_text("Draft saved.")
        assert _focused(page) != "error-summary"

        metadata = page.request.get(dep_url.replace("/deposit/", "/api/deposit/depositions/")).json()["metadata"]
        assert metadata["license"] == "MIT"
        # The API shows people with the specification's keys; the ROR id is kept with the draft (the form shows it).
        assert metadata["creators"] == [{"name": "Doe, Jane", "affiliation": "Monash University",
                                         "orcid": "0000-0002-1825-0097"}]
        expect(page.locator("#creators-0-affiliation_id")).to_have_value(MONASH)
        check_page(page, "deposit form saved with the picks")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_subject_picked_from_a_loaded_vocabulary(live_server, viewport):
    """The subjects' term field suggests the loaded vocabulary's terms as one types; picking one fills in its
    identifier, which the saved draft holds. The group's button then offers another subject, as the server's page
    would."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    expect = sync_api.expect
    done = subprocess.run([sys.executable, "-m", "repository", "load-subjects", SUBJECTS, "--vocabulary", "MeSH"],
                          env=live_server["env"], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stdout.startswith("MeSH: "), done.stderr
    with browser_session(live_server, viewport) as (_browser, page):
        sign_up_and_in(page, live_server, f"subjects-{uuid.uuid4().hex[:8]}@example.org", PASSWORD, "/deposit/new")
        page.keyboard.press("Tab")
        press(page, "Start a new upload")
        dep_url = page.url
        page.locator("summary", has_text="Subjects").click()
        page.get_by_role("button", name="Add a subject").click()
        expect(page.locator("#subjects [data-add-row]")).to_have_text("Add another subject")
        term = page.locator("#subjects-0-term")
        term.click()
        term.press_sequentially("Hyper")
        expect(page.locator('#subjects-list option[value="Hypertension"]')).to_have_count(1)
        term.press_sequentially("tension")
        expect(page.locator("#subjects-0-identifier")).to_have_value("https://id.nlm.nih.gov/mesh/D006973")
        check_page(page, "deposit form with a subject term picked")
        screenshot(page, "pickers-subject-picked")
        type_into(page, "title", "Blood pressure")
        press(page, "Save draft")
        expect(page.locator(".notice.success")).to_contain_text("Draft saved.")
        metadata = page.request.get(dep_url.replace("/deposit/", "/api/deposit/depositions/")).json()["metadata"]
        assert metadata["subjects"] == [{"term": "Hypertension", "identifier": "https://id.nlm.nih.gov/mesh/D006973",
                                         "scheme": "url"}]
