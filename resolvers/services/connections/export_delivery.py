"""The durable job that delivers an export to an accounting product, and what exports.get and
the preview show of its payload.

The ``deliver-export`` job sends the plan stored on the record (the requests the preview
showed) through the integration's connector. Each step's remote id is saved as soon as it
exists and every creating request carries the provider's idempotency key (the export id and
the step), so a retried job resumes where the last attempt stopped and never creates a second
bill. A provider's 429, 5xx or a network failure is retried with the jobs' backoff; any other
refusal fails the export at once with the provider's message.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from engines.connectors.base import Bill, Plan, PlannedRequest
from engines.connectors.errors import ConnectorError, reason_of
from persistence.jobs import JobRecord
from resolvers.framework.errors import BadGateway, BadRequest
from resolvers.framework.job_kinds import job_kind
from resolvers.services.connections.integration_connections import access_token, connector_of

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.exports")
DELIVER_EXPORT = "deliver-export"


def summary_of(bill: Bill) -> dict[str, Any]:
    """What exports.get shows of the payload (the full requests stay on the record)."""
    return {
        "vendor": bill.vendor,
        "date": bill.date.isoformat(),
        "dueDate": bill.due_date.isoformat(),
        "currency": bill.currency,
        "total": float(bill.total),
        "taxTotal": float(bill.tax_total) if bill.tax_total is not None else None,
        "reference": bill.reference,
        "lines": len(bill.lines),
        "attachment": bill.attachment.file_name if bill.attachment else None,
    }


def plan_from(stored: dict[str, Any]) -> Plan:
    return Plan(
        requests=tuple(PlannedRequest(**request) for request in stored["requests"]),
        warnings=(),
        vendor_id=stored.get("vendorId"),
    )


async def _gave_up(services: Services, job: JobRecord, error: str) -> None:
    workspace_id, export_id = job["workspaceId"], job["payload"]["exportId"]
    # The last attempt's failure was recorded with its kind: the record keeps saying it.
    last = await services.store.exports.get(workspace_id, export_id) or {}
    await services.store.exports.transition(
        workspace_id,
        export_id,
        "failed",
        error=f"gave up after {job['attempts']} attempts: {error}",
        error_reason=last.get("errorReason"),
        only_from=("queued", "sending"),
    )


@job_kind(DELIVER_EXPORT, on_give_up=_gave_up)
async def deliver_export(services: Services, job: JobRecord) -> None:
    """Deliver one export record (see the module docstring)."""
    workspace_id = job["workspaceId"]
    export_id = job["payload"]["exportId"]
    exports = services.store.exports
    record = await exports.transition(
        workspace_id,
        export_id,
        "sending",
        note=f"attempt {job['attempts']}",
        only_from=("queued", "sending"),
    )
    if record is None:  # exported, failed or unlinked meanwhile: nothing to do
        return None
    connector = connector_of(services, record["integrationId"])
    plan = plan_from(record["plan"])
    try:
        token = await access_token(services, workspace_id, record["integrationId"])
    except BadRequest as exc:  # the grant is gone: retrying cannot help
        await exports.transition(
            workspace_id, export_id, "failed", error=exc.message, error_reason=reason_of(exc)
        )
        return None
    except BadGateway as exc:
        await exports.transition(
            workspace_id, export_id, "queued", error=exc.message, error_reason=reason_of(exc)
        )
        raise
    original: bytes | None = None
    if any(r.step == "attachment" for r in plan.requests) and not record["remote"].get(
        "attachmentIds"
    ):
        document = await services.store.documents.reads.get(workspace_id, record["documentId"])
        if document is not None and document.get("file"):
            original = await services.store.files.read(workspace_id, document["file"])

    async def save(progress: dict[str, Any]) -> None:
        await exports.save_remote(workspace_id, export_id, progress)

    try:
        remote = await connector.deliver(
            token, record["tenantId"], plan, original, export_id, dict(record["remote"]), save
        )
    except ConnectorError as exc:
        # A job: the failure is recorded on the export (words and kind); one that may succeed
        # later leaves it queued and is raised for the jobs queue to retry.
        status = "queued" if exc.retryable else "failed"
        await exports.transition(
            workspace_id,
            export_id,
            status,
            error=str(exc),
            error_reason=exc.reason,
            note="will retry" if exc.retryable else None,
        )
        if exc.retryable:
            raise
        return None
    await exports.transition(
        workspace_id, export_id, "exported", note="delivered", extra={"remote": remote}
    )
    await services.store.documents.writes.set_export_status(
        workspace_id, record["documentId"], "exported", export_id
    )
    log.info("export delivered", extra={"exportId": export_id, "remote": remote.get("invoiceId")})
    return None
