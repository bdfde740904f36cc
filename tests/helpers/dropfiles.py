"""What the browser tests of the deposit form's file area share (tests/pages/test_browser_dropfiles*.py): a
signed-in draft, drops on the drop zone, the lines under it, and the files as the server holds them."""

from __future__ import annotations

import uuid

from helpers.browser import api_session, sign_up_and_in

PASSWORD = "a long passphrase 4 drops"


def new_draft(page) -> int:  # type: ignore[no-untyped-def]
    """A draft made by the page's own session through the API (the CSRF token of the page's forms)."""
    return int(page.evaluate("""async () => {
        const token = document.querySelector('input[name="csrf_token"]').value;
        const answer = await fetch('/api/deposit/depositions', {method: 'POST', credentials: 'same-origin',
            headers: {'Content-Type': 'application/json', 'X-CSRFToken': token},
            body: JSON.stringify({metadata: {title: 'Glacier cores', upload_type: 'dataset'}})});
        if (answer.status !== 201) { throw new Error('create: ' + answer.status + ' ' + await answer.text()); }
        return (await answer.json()).id;
    }"""))


def signed_in_draft(page, live_server, who: str) -> int:  # type: ignore[no-untyped-def]
    sign_up_and_in(page, live_server, f"{who}-{uuid.uuid4().hex[:8]}@example.org", PASSWORD, "/deposit")
    dep_id = new_draft(page)
    page.goto(f"{live_server['url']}/deposit/{dep_id}")
    return dep_id


def listed_names(page) -> list[str]:  # type: ignore[no-untyped-def]
    return page.eval_on_selector_all("[data-files-list] > li", "items => items.map(li => li.dataset.key)")


def wait_for_status(page, text: str) -> None:  # type: ignore[no-untyped-def]
    """Until the file area says `text` (said once the batch is over and the list reloaded)."""
    page.wait_for_function("text => document.querySelector('[data-files-status]').textContent === text", arg=text)


def server_files(page, live_server, dep_id: int) -> dict[str, dict]:  # type: ignore[no-untyped-def]
    """The draft's files as the bucket lists them (with both checksums), by name, read with the page's session."""
    api = api_session(live_server)
    api.cookies.update({c["name"]: c["value"] for c in page.context.cookies()})
    deposition = api.get(f"{live_server['url']}/api/deposit/depositions/{dep_id}").json()
    bucket = api.get(deposition["links"]["bucket"]).json()
    return {o["key"]: o for o in bucket["contents"]}


def drop(page, files: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    """Drop files (name -> text) on the drop zone, as a person dragging them from their desktop does."""
    page.evaluate("""files => {
        const drop = new DataTransfer();
        Object.entries(files).forEach(([name, text]) => drop.items.add(new File([text], name, {type: 'text/plain'})));
        const zone = document.querySelector('[data-dropzone]');
        zone.dispatchEvent(new DragEvent('dragenter', {dataTransfer: drop, bubbles: true, cancelable: true}));
        zone.dispatchEvent(new DragEvent('drop', {dataTransfer: drop, bubbles: true, cancelable: true}));
    }""", files)


def upload_lines(page) -> list[dict]:  # type: ignore[no-untyped-def]
    """Each line under the drop zone: the label of its progress bar, the bar's value, its message."""
    return page.eval_on_selector_all("[data-progress] > li", """items => items.map(li => ({
        label: li.querySelector('progress').labels[0].textContent, value: li.querySelector('progress').value,
        message: li.querySelector('.upload-message').textContent}))""")
