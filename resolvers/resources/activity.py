"""Capabilities of the activity resource: searching what came in and what became of it."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from engines.connectors.errors import ConnectorError
from engines.connectors.imap import MailboxHit
from resolvers.framework.context import Context
from resolvers.framework.registry import capability
from resolvers.services.connections.mailbox_connections import connector_for
from resolvers.services.processing.inbound_email import alias_of
from schema.activity import (
    ActivityItem,
    ActivitySearchResult,
    ActivitySourceDetails,
    ProviderReport,
    SearchActivity,
)

log = logging.getLogger("fincap.activity")


@capability(
    "activity.search",
    input=SearchActivity,
    output=ActivitySearchResult,
    permissions=["read_documents"],
    effect="read",
)
async def search(ctx: Context, args: SearchActivity) -> ActivitySearchResult:
    """Searches past source activity (connected email, WhatsApp, uploads, forwarded inbound email),
    newest first, with the processing reasoning and the documents made. Connected mailboxes are
    searched too (providerResultLimit messages each); one that fails is reported in providers.
    """
    workspace_id = ctx.require_workspace()
    store = ctx.store
    sources = list(dict.fromkeys(args.sourceTypes))
    query = args.query.strip()
    alias = await _alias_in(ctx, workspace_id, query) if "inbound-email" in sources else None
    found = {
        item["_id"]: item
        for item in await store.activity.search(
            workspace_id, query, sources, args.statuses, alias=alias
        )
    }
    providers: list[ProviderReport] = []
    hits: dict[str, MailboxHit] = {}
    if "email" in sources:
        providers, hits = await _search_mailboxes(ctx, workspace_id, args)
        for item in await store.activity.find_by_message_ids(workspace_id, "email", list(hits)):
            if not args.statuses or item["status"] in args.statuses:
                found[item["_id"]] = item
    ordered = sorted(found.values(), key=lambda i: (i["createdAt"], i["_id"]), reverse=True)
    start = (args.page - 1) * args.limit
    page = ordered[start : start + args.limit]
    return ActivitySearchResult(
        items=[_item(item, hits, args.includeSourceDetails) for item in page],
        page=args.page,
        limit=args.limit,
        total=len(ordered),
        hasMore=start + args.limit < len(ordered),
        providers=providers,
    )


async def _alias_in(ctx: Context, workspace_id: str, query: str) -> str | None:
    """The workspace's alias when the query names it (as an address or the bare alias),
    current or retired."""
    record = await ctx.store.inbound_addresses.get(workspace_id)
    if record is None:
        return None
    wanted = alias_of(query, ctx.services.sources.inbound_domain) or query.lower()
    known = [record["alias"], *record.get("retired", [])]
    return wanted if wanted in known else None


async def _search_mailboxes(
    ctx: Context, workspace_id: str, args: SearchActivity
) -> tuple[list[ProviderReport], dict[str, MailboxHit]]:
    rows = await ctx.store.mailboxes.list(workspace_id)

    async def one(row: dict[str, Any]) -> tuple[ProviderReport, list[MailboxHit]]:
        where = {"mailboxId": row["_id"], "username": row["username"], "server": row["host"]}
        secret = await ctx.store.mailboxes.get_secret(workspace_id, row["_id"])
        try:
            if secret is None:  # disconnected since it was listed
                return ProviderReport(
                    **where, status="error", matched=0, error="the mailbox was disconnected"
                ), []
            hits = await connector_for(ctx.services, secret).search(
                args.query, args.providerResultLimit, args.includeSourceDetails
            )
        except ConnectorError as exc:  # reported for this mailbox: the search goes on
            report = ProviderReport(
                **where, status="error", matched=0, error=exc.message, errorReason=exc.reason
            )
            return report, []
        except Exception as exc:  # a provider must never fail the whole search
            log.exception("mailbox search failed", extra={"mailboxId": row["_id"]})
            error = f"unexpected error: {type(exc).__name__}"
            return ProviderReport(**where, status="error", matched=0, error=error), []
        return ProviderReport(**where, status="ok", matched=len(hits), error=None), hits

    answers = await asyncio.gather(*(one(row) for row in rows))
    reports = [report for report, _ in answers]
    hits = {hit.message_id: hit for _, found in answers for hit in found if hit.message_id}
    return reports, hits


def _item(item: dict[str, Any], hits: dict[str, MailboxHit], details: bool) -> ActivityItem:
    source = None
    if details:
        stored = item.get("details") or {}
        hit = hits.get(item.get("messageId") or "")
        if hit is not None:
            source = ActivitySourceDetails(
                subject=hit.subject or stored.get("subject"),
                sender=hit.sender or stored.get("from"),
                snippet=hit.snippet or stored.get("snippet"),
                mailboxId=stored.get("mailboxId"),
                fromProvider=True,
            )
        else:
            source = ActivitySourceDetails(
                subject=stored.get("subject"),
                sender=stored.get("from") or stored.get("uploadedBy"),
                snippet=stored.get("snippet") or stored.get("caption") or None,
                recipient=stored.get("address"),
                fileName=stored.get("fileName"),
                mailboxId=stored.get("mailboxId"),
            )
    return ActivityItem(
        id=item["_id"],
        sourceType=item["sourceType"],
        status=item["status"],
        reasoning=item["reasoning"],
        errorReason=(item.get("details") or {}).get("errorReason"),
        documentIds=list(item.get("documentIds") or []),
        messageId=item.get("messageId"),
        createdAt=item["createdAt"],
        updatedAt=item["updatedAt"],
        source=source,
    )
