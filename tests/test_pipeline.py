"""The pipeline runner: steps in order, notes make a warning, StopPipeline ends the document."""

from __future__ import annotations

import dataclasses
import inspect
from typing import ClassVar

import pytest

from app.host.config import Settings
from app.host.services import build_services
from persistence.store import Store
from resolvers.services.processing import pipeline
from resolvers.services.processing.pipeline import STEPS, process_document
from resolvers.services.processing.pipeline_contract import Intake, StepContext, StopPipeline
from tests.conftest import Tenant
from tests.documents.conftest import doc


def test_steps_have_unique_names_and_say_what_they_do() -> None:
    names = [step.name for step in STEPS]
    assert len(names) == len(set(names))
    assert all(inspect.getdoc(type(step)) for step in STEPS)


class Note:
    """Adds a note (a warning) and the merchant it found."""

    name: ClassVar[str] = "note"

    def applies(self, intake: Intake) -> bool:
        return True

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        return dataclasses.replace(
            intake, fields={"merchant": "Probe Shop"}, notes=(*intake.notes, "Check me.")
        )


class Skip:
    """Ends the document as skipped."""

    name: ClassVar[str] = "skip"

    def applies(self, intake: Intake) -> bool:
        return "skip" in (intake.record.get("summary") or "")

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        raise StopPipeline("skipped", "Not for us")


async def received(store: Store, tenant: Tenant, document_id: str, summary: str) -> str:
    activity = await store.activity.create(tenant.org_id, "upload", [document_id], {})
    await store.documents.writes.insert_many(
        tenant.org_id, [doc(document_id, processingStatus="queued", summary=summary)]
    )
    return str(activity["_id"])


async def test_steps_run_in_order_and_their_notes_make_a_warning(
    store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "STEPS", (Skip(), Note()))
    services = build_services(Settings(), store)
    kept = await received(store, alice, "doc_kept", "a receipt")
    await process_document(services, alice.org_id, "doc_kept", kept)
    record = await store.documents.reads.get(alice.org_id, "doc_kept")
    assert record is not None and record["processingStatus"] == "warning"
    assert record["processingReason"].startswith("Check me. Extracted Probe Shop")
    activity = await store.activity.get(alice.org_id, kept)
    assert activity is not None and [h["status"] for h in activity["history"]] == [
        "queued",
        "processing",
        "warning",
    ]

    skipped = await received(store, alice, "doc_skip", "skip this")
    await process_document(services, alice.org_id, "doc_skip", skipped)
    record = await store.documents.reads.get(alice.org_id, "doc_skip")
    assert record is not None
    assert (record["processingStatus"], record["processingReason"]) == ("skipped", "Not for us")


async def test_a_finished_document_is_not_processed_again(
    store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pipeline, "STEPS", (Note(),))
    activity = await received(store, alice, "doc_done", "x")
    await store.documents.writes.set_processing(
        alice.org_id, "doc_done", "processed", "done before"
    )
    await process_document(build_services(Settings(), store), alice.org_id, "doc_done", activity)
    record = await store.documents.reads.get(alice.org_id, "doc_done")
    assert record is not None and record["processingReason"] == "done before"
