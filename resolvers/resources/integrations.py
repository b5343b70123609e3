"""Capabilities of the integrations resource: the catalog and connections, account mapping,
sending a document to accounting and unlinking it again.

integrations.send and integrations.unlink are gated (``ApprovalGate``): in execute mode they
wait for an owner's or admin's approval unless the workspace switched the gate off.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from engines.connectors.base import Bill, Plan
from engines.connectors.catalog import CATALOG, CatalogEntry
from engines.connectors.errors import ConnectorError, RemoteGone
from engines.connectors.mapping import NotExportable, build_bill, effective_mapping
from persistence.exports import ExportExists
from persistence.ids import utcnow
from resolvers.framework.context import Context
from resolvers.framework.errors import BadGateway, BadRequest, NotFound
from resolvers.framework.registry import MANAGERS, MEMBERS, ApprovalGate, capability
from resolvers.services.connections.export_delivery import DELIVER_EXPORT, summary_of
from resolvers.services.connections.gateway import provider_call
from resolvers.services.connections.integration_connections import (
    access_token,
    connection_of,
    connector_of,
    tenants_of,
    unseal,
)
from schema.integrations import (
    ConfigureIntegration,
    ExportRequest,
    Integration,
    IntegrationList,
    IntegrationRef,
    IntegrationSettings,
    IntegrationStatus,
    IntegrationTenant,
    ListIntegrations,
    RemoteAttachment,
    SendResult,
    SendToIntegration,
    UnlinkDocument,
    UnlinkResult,
)

DELIVERY_ATTEMPTS = 6


def _view(ctx: Context, entry: CatalogEntry, connection: dict[str, Any] | None) -> Integration:
    connector = ctx.services.connectors.get(entry.id)
    state = (connection or {}).get("status")
    connected = state == "connected" and bool((connection or {}).get("tokens"))
    status: IntegrationStatus = (
        "connected" if connected else "error" if state == "error" else "available"
    )
    mapping = effective_mapping(entry.id, (connection or {}).get("settings"))
    return Integration(
        id=entry.id,
        name=entry.name,
        category=entry.category,  # type: ignore[arg-type]
        status=status,
        configured=connector is not None and connector.configured(),
        connectUrl=f"{ctx.services.base_url}/v1/integrations/{entry.id}/connect"
        if connector is not None
        else None,
        tenants=[
            IntegrationTenant(id=t["id"], name=t.get("name") or t["id"])
            for t in (connection or {}).get("tenants") or []
        ]
        if status != "available"
        else [],
        connectedAt=(connection or {}).get("connectedAt") if status != "available" else None,
        lastError=(connection or {}).get("lastError"),
        lastErrorReason=(connection or {}).get("lastErrorReason"),
        settings=IntegrationSettings(
            accountCodes=mapping.account_codes,
            defaultAccountCode=mapping.default_account,
            taxCodes=mapping.tax_codes,
            paymentAccount=mapping.payment_account,
        )
        if connector is not None
        else None,
    )


def _entry(integration_id: str) -> CatalogEntry:
    for entry in CATALOG:
        if entry.id == integration_id:
            return entry
    raise NotFound(f"Integration '{integration_id}' not found")


@capability(
    "integrations.list",
    input=ListIntegrations,
    output=IntegrationList,
    permissions=["read_integrations"],
    effect="read",
)
async def list_integrations(ctx: Context, args: ListIntegrations) -> IntegrationList:
    """Lists this workspace's integrations: id (the integrationId other capabilities take), name,
    category, status, connected tenants (their ids are integrations.send's tenantId) and account
    mapping. An accounting product is connected by opening its connectUrl with your API key.
    """
    connections = {
        c["integrationId"]: c
        for c in await ctx.store.integrations.list_for(ctx.require_workspace())
    }
    views = [_view(ctx, entry, connections.get(entry.id)) for entry in CATALOG]
    return IntegrationList(
        integrations=[
            view
            for view in views
            if (args.category is None or view.category == args.category)
            and (args.status is None or view.status == args.status)
        ]
    )


@capability(
    "integrations.configure",
    input=ConfigureIntegration,
    output=Integration,
    permissions=["write_integrations"],
    effect="write",
    roles=MANAGERS,
)
async def configure(ctx: Context, args: ConfigureIntegration) -> Integration:
    """Sets how documents map to an accounting integration's accounts (owners and admins):
    accountCodes (category → account code, merged), defaultAccountCode, taxCodes (rate in
    percent such as "20" → tax code) and paymentAccount (QuickBooks); null removes a mapping.
    """
    entry = _entry(args.integrationId)
    workspace_id = ctx.require_workspace()
    connection = await ctx.store.integrations.get(workspace_id, entry.id)
    settings = dict((connection or {}).get("settings") or {})
    for name in ("accountCodes", "taxCodes"):
        changes = getattr(args, name)
        if changes is not None:
            merged = {**(settings.get(name) or {}), **changes}
            settings[name] = {k: v for k, v in merged.items() if v is not None}
    for name in ("defaultAccountCode", "paymentAccount"):
        if getattr(args, name) is not None:
            settings[name] = getattr(args, name)
    stored = await ctx.store.integrations.set_settings(workspace_id, entry.id, settings)
    return _view(ctx, entry, stored)


@capability(
    "integrations.disconnect",
    input=IntegrationRef,
    output=Integration,
    permissions=["write_integrations"],
    effect="destructive",
    roles=MANAGERS,
)
async def disconnect(ctx: Context, args: IntegrationRef) -> Integration:
    """Disconnects an accounting integration from this workspace (owners and admins), revoking its
    grant. Exported bills stay in the books; account mappings are kept for a reconnect.
    """
    entry = _entry(args.integrationId)
    workspace_id = ctx.require_workspace()
    connector = connector_of(ctx.services, entry.id)
    connection = await connection_of(ctx.services, workspace_id, entry.id)
    tokens = unseal(ctx.services, workspace_id, entry.id, connection["tokens"])
    try:
        token = await access_token(ctx.services, workspace_id, entry.id)
        await connector.disconnect(
            dataclasses.replace(tokens, access_token=token), tenants_of(connection)
        )
    except (ConnectorError, BadGateway, BadRequest):
        # The grant may already be gone at the provider; forgetting it here is what matters.
        pass
    await ctx.store.integrations.disconnect(workspace_id, entry.id)
    return _view(ctx, entry, await ctx.store.integrations.get(workspace_id, entry.id))


async def _document(ctx: Context, document_id: str) -> dict[str, Any]:
    """The document as the API's values: sending and unlinking read it and write only its
    export state (by id), never the record itself."""
    found = await ctx.store.documents.reads.document(ctx.require_workspace(), document_id)
    if found is None:
        raise NotFound(f"Document '{document_id}' not found")
    return found


def describe_send(args: SendToIntegration) -> str:
    return (
        f"Send document {args.documentId} to {args.integrationId} (tenant {args.tenantId}) "
        "as a bill with its original attached"
    )


@capability(
    "integrations.send",
    input=SendToIntegration,
    output=SendResult,
    permissions=["write_integrations"],
    effect="write",
    roles=MEMBERS,
    aliases=["integrations.send-to-integration"],
    approval=ApprovalGate("Send a document to accounting", describe=describe_send),
)
async def send(ctx: Context, args: SendToIntegration) -> SendResult:
    """Sends a document to an accounting integration (Xero or QuickBooks Online) as a bill. dryRun
    true (default) previews the exact requests, with warnings for what had to be assumed. dryRun
    false queues an export record (see exports.get), delivered with retries and never twice; the
    document's exportStatus becomes exported. Needs an owner's or admin's approval unless
    switched off.
    """
    workspace_id = ctx.require_workspace()
    connector = connector_of(ctx.services, args.integrationId)
    document = await _document(ctx, args.documentId)
    connection = await connection_of(ctx.services, workspace_id, args.integrationId)
    tenants = tenants_of(connection)
    if args.tenantId not in {t.id for t in tenants}:
        known = ", ".join(f"{t.id} ({t.name})" for t in tenants)
        raise BadRequest(
            f"Invalid request: tenantId: '{args.tenantId}' is not a tenant of this "
            f"{connector.name} connection (tenants: {known})"
        )
    if document.get("archived"):
        raise BadRequest("Invalid request: documentId: the document is archived")
    warnings: list[str] = []
    existing = await ctx.store.exports.active_for(
        workspace_id, args.documentId, args.tenantId, args.integrationId
    )
    if existing is not None:
        # Refused in preview too, so a gated call never reaches a reviewer only to fail.
        raise BadRequest(
            f"Invalid request: documentId: the document is already {existing['status']} to "
            f"this tenant (export {existing['_id']}); unlink it first to send it again"
        )
    mapping = effective_mapping(args.integrationId, connection.get("settings"))
    try:
        bill, assumed = build_bill(document, mapping, today=utcnow().date())
    except NotExportable as exc:
        raise BadRequest(f"Invalid request: documentId: {exc}") from None
    token = await access_token(ctx.services, workspace_id, args.integrationId)
    with provider_call(connector.name):
        plan = await connector.plan(token, args.tenantId, bill)
    warnings += assumed + list(plan.warnings)
    requests = [
        ExportRequest(
            step=r.step,
            method=r.method,
            url=connector.request_url(args.tenantId, r.path),
            headers=r.headers,
            body=r.body,
            note=r.note,
        )
        for r in plan.requests
    ]
    common: dict[str, Any] = {
        "documentId": args.documentId,
        "integrationId": args.integrationId,
        "tenantId": args.tenantId,
        "requests": requests,
        "warnings": warnings,
    }
    if args.dryRun:
        return SendResult(status="preview", dryRun=True, **common)
    try:
        record = await _create_export(ctx, workspace_id, args, plan, warnings, bill)
    except ExportExists:
        raise BadRequest(
            "Invalid request: documentId: the document is already being exported to this "
            "tenant; unlink it first to send it again"
        ) from None
    await ctx.store.jobs.enqueue(
        workspace_id,
        DELIVER_EXPORT,
        {"exportId": record["_id"], "requestId": ctx.request_id},
        max_attempts=DELIVERY_ATTEMPTS,
        dedupe_key=f"export:{record['_id']}",
    )
    ctx.services.wake_workers()
    return SendResult(status="queued", dryRun=False, exportRecordId=record["_id"], **common)


async def _create_export(
    ctx: Context,
    workspace_id: str,
    args: SendToIntegration,
    plan: Plan,
    warnings: list[str],
    bill: Bill,
) -> dict[str, Any]:
    return await ctx.store.exports.create(
        workspace_id,
        {
            "documentId": args.documentId,
            "integrationId": args.integrationId,
            "tenantId": args.tenantId,
            "plan": {
                "requests": [r.as_dict() for r in plan.requests],
                "vendorId": plan.vendor_id,
            },
            "warnings": warnings,
            "summary": summary_of(bill),
            "requestedBy": ctx.user_id,
            "approvedBy": ctx.approved_by,
        },
    )


def describe_unlink(args: UnlinkDocument) -> str:
    which = f"export {args.exportRecordId}" if args.exportRecordId else "its current export"
    return (
        f"Unlink document {args.documentId} from accounting ({which}): the remote bill is "
        "voided or deleted (irreversible)"
    )


@capability(
    "integrations.unlink",
    input=UnlinkDocument,
    output=UnlinkResult,
    permissions=["write_integrations"],
    effect="destructive",
    roles=MEMBERS,
    aliases=["integrations.unlink-document"],
    approval=ApprovalGate("Unlink a document from accounting", describe=describe_unlink),
)
async def unlink(ctx: Context, args: UnlinkDocument) -> UnlinkResult:
    """Unlinks a document from an accounting integration. dryRun true (default) shows the remote
    bill and the attachments it would orphan. dryRun false voids or deletes the remote bill and
    returns the document to not-exported: IRREVERSIBLE. exportRecordId defaults to the current
    export. Needs approval unless switched off.
    """
    workspace_id = ctx.require_workspace()
    document = await _document(ctx, args.documentId)
    export_id = args.exportRecordId or document.get("exportId")
    if not export_id:
        raise BadRequest(
            f"Invalid request: documentId: document '{args.documentId}' is not exported"
        )
    record = await ctx.store.exports.get(workspace_id, str(export_id))
    if record is None:
        raise NotFound(f"Export record '{export_id}' not found")
    if record["documentId"] != args.documentId:
        raise BadRequest(
            f"Invalid request: exportRecordId: export '{export_id}' is not an export of "
            f"document '{args.documentId}'"
        )
    if record["status"] != "exported":
        raise BadRequest(
            f"Invalid request: exportRecordId: export '{export_id}' is {record['status']}; "
            "only an exported document can be unlinked"
        )
    connector = connector_of(ctx.services, record["integrationId"])
    token = await access_token(ctx.services, workspace_id, record["integrationId"])
    warnings: list[str] = []
    with provider_call(connector.name):
        try:
            remote = await connector.describe(token, record["tenantId"], record["remote"])
        except RemoteGone:  # nothing left to remove there: unlinking is fincap's side only
            remote = {
                "invoiceId": record["remote"].get("invoiceId"),
                "status": "gone",
                "attachments": [],
                "action": "none",
            }
            warnings.append("The remote bill no longer exists: unlinking only updates fincap")
    common: dict[str, Any] = {
        "documentId": args.documentId,
        "exportRecordId": record["_id"],
        "integrationId": record["integrationId"],
        "tenantId": record["tenantId"],
        "action": remote.get("action", "delete"),
        "orphanedAttachments": [RemoteAttachment(**a) for a in remote.get("attachments", [])],
        "warnings": warnings,
    }
    if args.dryRun:
        shown = {k: v for k, v in remote.items() if k not in ("attachments", "syncToken")}
        return UnlinkResult(
            status="preview", dryRun=True, remoteInvoice=shown, exportStatus="exported", **common
        )
    if remote.get("status") != "gone":
        with provider_call(connector.name):
            done = await connector.remove(token, record["tenantId"], record["remote"])
        remote = {**remote, "status": done["status"]}
    await ctx.store.exports.transition(
        workspace_id,
        record["_id"],
        "unlinked",
        note=f"remote bill {remote.get('status')}",
        only_from=("exported",),
        extra={"remote.status": remote.get("status")},
    )
    await ctx.store.documents.writes.set_export_status(
        workspace_id, args.documentId, "not-exported", None
    )
    shown = {k: v for k, v in remote.items() if k not in ("attachments", "syncToken")}
    return UnlinkResult(
        status="unlinked", dryRun=False, remoteInvoice=shown, exportStatus="not-exported", **common
    )
