"""Capabilities of the exports resource: the record of sending a document to accounting
(delivered by ``resolvers.services.connections.export_delivery``)."""

from __future__ import annotations

from typing import Any

from resolvers.framework import cursors
from resolvers.framework.context import Context
from resolvers.framework.errors import NotFound
from resolvers.framework.registry import capability
from schema.integrations import ExportPage, ExportRecord, ExportRemote, GetExport, ListExports


def _view(record: dict[str, Any]) -> ExportRecord:
    return ExportRecord(
        id=record["_id"],
        documentId=record["documentId"],
        integrationId=record["integrationId"],
        tenantId=record["tenantId"],
        status=record["status"],
        history=record["history"],
        remote=ExportRemote.model_validate(record.get("remote") or {}),
        payloadSummary=record["summary"],
        warnings=record.get("warnings") or [],
        error=record.get("error"),
        errorReason=record.get("errorReason"),
        attempts=record.get("attempts", 0),
        requestedBy=record["requestedBy"],
        approvedBy=record.get("approvedBy"),
        createdAt=record["createdAt"],
        updatedAt=record["updatedAt"],
    )


@capability(
    "exports.get",
    input=GetExport,
    output=ExportRecord,
    permissions=["read_integrations"],
    effect="read",
)
async def get(ctx: Context, args: GetExport) -> ExportRecord:
    """One export record of this workspace: document, integration and tenant, status (queued,
    sending, exported, failed, unlinked) with its history, remote ids and link, warnings and the
    last error.
    """
    record = await ctx.store.exports.get(ctx.require_workspace(), args.id)
    if record is None:
        raise NotFound(f"Export record '{args.id}' not found")
    return _view(record)


@capability(
    "exports.list",
    input=ListExports,
    output=ExportPage,
    permissions=["read_integrations"],
    effect="read",
)
async def list_exports(ctx: Context, args: ListExports) -> ExportPage:
    """This workspace's export records, newest first (of one document or status when given), in
    pages of limit with nextCursor: each with its document, status, history and the provider's
    last error, as exports.get shows it.
    """
    query_print = cursors.fingerprint(
        {"capability": "exports.list", "documentId": args.documentId, "status": args.status}
    )
    keyring = ctx.services.keyring
    rows = await ctx.store.exports.page(
        ctx.require_workspace(),
        document_id=args.documentId,
        status=args.status,
        limit=args.limit + 1,
        after_row=cursors.keyset_after(args.cursor, query_print, keyring),
    )
    page, next_cursor = cursors.keyset_next(rows, args.limit, "createdAt", query_print, keyring)
    return ExportPage(exports=[_view(row) for row in page], nextCursor=next_cursor)
