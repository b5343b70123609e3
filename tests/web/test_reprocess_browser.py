"""Read again (issue 41 item 6) on a document's page in headless Chromium against a live
``fincap serve``, in an English and a German browser: an uploaded PDF, processed, its merchant
corrected by a person; "Read again" with *keep corrections* keeps the correction (the page
learns the job is done from the document's event: "Last read again"); without it, the current
extraction's merchant comes back, the page says so and the history records it. axe-core finds
no serious or critical violation."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.requires import requires
from tests.web.accessibility import assert_accessible
from tests.web.dashboard_live import LiveDashboard, Page, result
from tests.web.shared_dashboard import SharedDashboard, signed_in_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
PDF = Path(__file__).parents[1] / "fixtures" / "extraction" / "text-layer.pdf"
WAIT = 120  # the job reads the PDF again in the server's worker
SHOWN_MERCHANT = "document.querySelector('#value-merchant .value')?.textContent"
READ_AT = "document.querySelector('#reprocessed-at')?.dataset.at"


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "reprocess", 0)


@pytest.fixture(scope="module")
def tab(live: LiveDashboard, dashboard: SharedDashboard) -> Iterator[Page]:
    with signed_in_context(dashboard, live) as page:
        yield page


def processed_upload(live: LiveDashboard) -> dict[str, Any]:
    data = base64.b64encode(PDF.read_bytes()).decode()
    started = result(live.call("files.upload", {"fileName": "invoice.pdf", "base64Data": data}))
    deadline = time.monotonic() + WAIT
    while True:
        document = result(live.call("documents.get", {"id": started["documentId"]}))["document"]
        if document["processingStatus"] in ("processed", "warning"):
            return dict(document)
        assert time.monotonic() < deadline, f"not processed: {document['processingStatus']}"
        time.sleep(0.5)


@pytest.mark.parametrize("locale", ["en-US", "de-DE"])
def test_read_again_keeps_a_correction_unless_told_not_to(
    live: LiveDashboard, tab: Page, locale: str
) -> None:
    page = tab
    read = processed_upload(live)
    corrected = f"Corner Bistro {locale}"
    result(live.call("documents.update", {"id": read["id"], "merchant": corrected}))
    page.call("Emulation.setLocaleOverride", locale=locale)
    try:
        page.go("about:blank")
        page.go(f"{live.base}/app/#/documents/{read['id']}")
        page.wait(
            f"{SHOWN_MERCHANT} === {json.dumps(corrected)} "
            "&& !!document.querySelector('#reprocess') && window.__fincapLive?.status === 'open'",
            WAIT,
        )
        assert page.js(READ_AT) is None
        assert page.js("document.querySelector('#reprocess-keep').checked") is True
        assert_accessible(page)

        # Kept: the job's event repaints the page with when it was read; the correction stays.
        page.click("#reprocess")
        page.wait(f"!!{READ_AT}", WAIT)
        first = page.js(READ_AT)
        assert page.js(SHOWN_MERCHANT) == corrected
        assert "nothing changed" in page.js(
            "document.querySelector('#changed-elsewhere').textContent"
        )

        # Not kept: the current extraction's merchant comes back.
        page.click("#reprocess-keep")
        page.click("#reprocess")
        page.wait(f"{READ_AT} && {READ_AT} !== {json.dumps(first)}", WAIT)
        page.wait(f"{SHOWN_MERCHANT} === {json.dumps(read['merchant'])}", WAIT)
        said = page.js("document.querySelector('#changed-elsewhere').textContent")
        assert "Read again" in said and "merchant" in said
        after = result(live.call("documents.get", {"id": read["id"]}))["document"]
        entries = [e for e in after["editHistory"] if e["via"] == "reprocess"]
        # (The summary, made again from the corrected merchant, comes back too.)
        assert ("merchant", corrected, read["merchant"]) in [
            (e["field"], e["oldValue"], e["newValue"]) for e in entries
        ]
        assert_accessible(page)
    finally:
        page.call("Emulation.setLocaleOverride")


def test_read_again_for_a_selection_keeps_the_corrections(live: LiveDashboard, tab: Page) -> None:
    """The Documents page's bulk bar reads the chosen documents again in one call (up to 50 ids
    a call); each row says it was queued, and their corrections stay."""
    page = tab
    first, second = processed_upload(live), processed_upload(live)
    chosen = {first["id"]: "Bulk Bistro One", second["id"]: "Bulk Bistro Two"}
    for document_id, merchant in chosen.items():
        result(live.call("documents.update", {"id": document_id, "merchant": merchant}))
    page.go("about:blank")
    page.go(f"{live.base}/app/#/documents")
    rows = " && ".join(f"!!document.querySelector('tr[data-id={json.dumps(i)}]')" for i in chosen)
    page.wait(rows, WAIT)
    for document_id in chosen:
        box = f"document.querySelector('tr[data-id={json.dumps(document_id)}] .pick-row')"
        page.js(f"(b => {{ b.checked = true; b.dispatchEvent(new Event('change')); }})({box})")
    page.click("#bulk-reprocess")
    page.wait("!!document.querySelector('#bulk-reprocess-form')", WAIT)
    assert page.js("document.querySelector('#bulk-keep-corrections').checked") is True
    assert_accessible(page)
    page.js("document.querySelector('#bulk-reprocess-form').requestSubmit()")
    page.wait("document.querySelector('#bulk-status').textContent.includes('2 queued')", WAIT)
    for document_id in chosen:
        note = f"document.querySelector('tr[data-id={json.dumps(document_id)}]').dataset.result"
        assert page.js(note) == "ok"

    deadline = time.monotonic() + WAIT
    for document_id, merchant in chosen.items():
        while True:
            document = result(live.call("documents.get", {"id": document_id}))["document"]
            if document.get("reprocessedAt"):
                break
            assert time.monotonic() < deadline, "not read again"
            time.sleep(0.5)
        assert document["merchant"] == merchant  # the person's correction is kept
