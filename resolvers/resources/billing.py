"""Capabilities of the billing resource: the account, the subscription, usage and history.

Who sees what: any member of a workspace sees its subscription, usage and upcoming invoice
(``billing.get``); only its owner changes the plan; the history of invoices and charges is
always the caller's own account's (``billing.listHistory`` ignores the workspace: a member of
someone else's workspace never sees the owner's invoices).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engines.billing.invoice import InvoiceDraft, plan_of
from engines.billing.plans import Plan, PlanCatalog
from persistence.money import from_cents
from resolvers.framework import cursors
from resolvers.framework.context import Context
from resolvers.framework.registry import OWNERS, capability
from resolvers.services.billing.subscriptions import (
    CLOSE_DELAY,
    change_plan,
    close_due_periods,
    draft_current,
    ensure_subscription,
)
from schema.billing import (
    BillingAccount,
    BillingFeature,
    BillingHistory,
    BillingHistoryEntry,
    BillingInvoiceLine,
    BillingOverview,
    BillingPlan,
    BillingSubscription,
    BillingUpcomingInvoice,
    BillingUsage,
    ChangeBillingPlan,
    GetBilling,
    ListBillingHistory,
)

MEGABYTE = 1024 * 1024


@capability(
    "billing.get",
    input=GetBilling,
    output=BillingOverview,
    permissions=["read_workspaces"],
    effect="read",
    needs_workspace=False,
)
async def get_billing(ctx: Context, args: GetBilling) -> BillingOverview:
    """Billing account and subscription of the active workspace: this period's usage, the plan's
    features and the upcoming invoice. Without a workspace, the caller's own billing account and
    every subscription it pays for.
    """
    store, catalog, now = ctx.store, ctx.services.plans, ctx.services.clock()
    if ctx.workspace_id is None:
        account = await store.billing_accounts.get_or_create(ctx.user_id, catalog.currency)
        owned = await store.subscriptions.for_account(account["_id"])
        return BillingOverview(
            account=_account(account, ctx.user_id),
            subscription=None,
            subscriptions=[await _subscription(ctx, catalog, row) for row in owned],
            usage=None,
            features=None,
            upcomingInvoice=None,
        )
    subscription = await ensure_subscription(store, catalog, ctx.workspace_id, now)
    if subscription["currentPeriodEnd"] <= now - CLOSE_DELAY:
        # No worker closed it (none running?): close it here, exactly as the worker would.
        await ctx.services.api_calls.flush(store.usage)
        await close_due_periods(store, catalog, subscription, now - CLOSE_DELAY, now)
        subscription = await ensure_subscription(store, catalog, ctx.workspace_id, now)
    return await _overview(ctx, subscription, args)


@capability(
    "billing.change-plan",
    input=ChangeBillingPlan,
    output=BillingOverview,
    permissions=["all"],
    effect="write",
    roles=OWNERS,
)
async def change_billing_plan(ctx: Context, args: ChangeBillingPlan) -> BillingOverview:
    """Moves the active workspace to another plan (owner only): at once within the same interval
    (the invoice prorates both plans), at the next renewal between monthly and yearly
    (pendingPlanId). Returns the billing as billing.get does.
    """
    workspace_id = ctx.require_workspace()
    catalog = ctx.services.plans
    subscription = await change_plan(
        ctx.store, catalog, workspace_id, args.planId, ctx.services.clock()
    )
    return await _overview(ctx, subscription, GetBilling())


@capability(
    "billing.listHistory",
    input=ListBillingHistory,
    output=BillingHistory,
    permissions=["read_workspaces"],
    effect="read",
    needs_workspace=False,
)
async def list_billing_history(ctx: Context, args: ListBillingHistory) -> BillingHistory:
    """Invoices and one-off charges of the caller's own billing account, newest first; a credential
    restricted to one workspace sees only that workspace's. Page with startingAfter = the
    previous nextCursor.
    """
    keyring = ctx.services.keyring
    restricted = ctx.principal.restricted_to
    query_print = cursors.fingerprint(
        {"capability": "billing.listHistory", "user": ctx.user_id, "only": restricted}
    )
    after: tuple[datetime, str] | None = None
    if args.startingAfter is not None:
        issued, row_id = cursors.key_of(cursors.decode(args.startingAfter, query_print, keyring))
        if not isinstance(issued, datetime):
            raise cursors.not_a_cursor()
        after = (issued, row_id)
    rows = await ctx.store.billing_ledger.page_for_user(
        ctx.user_id, args.limit + 1, after, workspace_id=restricted
    )
    has_more = len(rows) > args.limit
    rows = rows[: args.limit]
    next_cursor = None
    if has_more:
        last = rows[-1]
        next_cursor = cursors.encode_key(last["issuedAt"], last["_id"], query_print, keyring)
    return BillingHistory(
        entries=[_history_entry(row) for row in rows], hasMore=has_more, nextCursor=next_cursor
    )


async def _overview(
    ctx: Context, subscription: dict[str, Any], args: GetBilling
) -> BillingOverview:
    store, catalog = ctx.store, ctx.services.plans
    account = await store.billing_accounts.get(subscription["accountId"])
    if account is None:  # pragma: no cover - accounts are never removed
        account = await store.billing_accounts.get_or_create(
            subscription["ownerId"], catalog.currency
        )
    plan = plan_of(catalog, subscription["planId"])
    usage = upcoming = None
    if args.includeUsage or args.includeUpcomingInvoice:
        await ctx.services.api_calls.flush(store.usage)  # this process's calls count at once
        draft, counted = await draft_current(store, catalog, subscription)
        if args.includeUsage:
            usage = BillingUsage(
                periodStart=subscription["currentPeriodStart"],
                periodEnd=subscription["currentPeriodEnd"],
                documentsProcessed=counted.documents_processed,
                documentsIncluded=draft.documents_included,
                documentsOverQuota=draft.documents_over,
                apiCalls=counted.api_calls,
                apiCallsIncluded=plan.api_calls_included,
                storageBytes=await store.files.bytes_stored(subscription["workspaceId"]),
                storageBytesIncluded=plan.storage_mb_included * MEGABYTE,
                seatsUsed=await store.workspaces.member_count(subscription["workspaceId"]),
                seatsIncluded=plan.seats,
            )
        if args.includeUpcomingInvoice:
            upcoming = _upcoming(draft)
    features = None
    if args.includeFeatures:
        features = [
            BillingFeature(key=key, name=name, included=key in plan.features)
            for key, name in catalog.features.items()
        ]
    return BillingOverview(
        account=_account(account, ctx.user_id),
        subscription=await _subscription(ctx, catalog, subscription),
        subscriptions=[],
        usage=usage,
        features=features,
        upcomingInvoice=upcoming,
    )


def _account(account: dict[str, Any], caller: str) -> BillingAccount:
    return BillingAccount(
        id=account["_id"],
        currency=account["currency"],
        provider=account["provider"],
        ownedByCaller=account["userId"] == caller,
        createdAt=account["createdAt"],
    )


async def _subscription(
    ctx: Context, catalog: PlanCatalog, row: dict[str, Any]
) -> BillingSubscription:
    workspace = await ctx.store.workspaces.get_unscoped(row["workspaceId"])
    return BillingSubscription(
        id=row["_id"],
        workspaceId=row["workspaceId"],
        workspaceName=workspace["name"] if workspace else None,
        status=row["status"],
        plan=_plan(catalog, plan_of(catalog, row["planId"])),
        pendingPlanId=row.get("pendingPlanId"),
        currentPeriodStart=row["currentPeriodStart"],
        currentPeriodEnd=row["currentPeriodEnd"],
        createdAt=row["createdAt"],
    )


def _plan(catalog: PlanCatalog, plan: Plan) -> BillingPlan:
    return BillingPlan(
        id=plan.id,
        name=plan.name,
        price=from_cents(plan.price),
        currency=catalog.currency,
        interval=plan.interval,
        documentsIncluded=plan.documents_included,
        overagePerDocument=(
            from_cents(plan.overage_per_document) if plan.overage_per_document is not None else None
        ),
        seats=plan.seats,
        apiCallsIncluded=plan.api_calls_included,
        storageBytesIncluded=plan.storage_mb_included * MEGABYTE,
        features=list(plan.features),
    )


def _upcoming(draft: InvoiceDraft) -> BillingUpcomingInvoice:
    return BillingUpcomingInvoice(
        periodStart=draft.period_start,
        periodEnd=draft.period_end,
        currency=draft.currency,
        lines=[
            BillingInvoiceLine(
                kind=line.kind,
                description=line.description,
                quantity=line.quantity,
                unitAmount=from_cents(line.unit_amount),
                amount=from_cents(line.amount),
                planId=line.plan_id,
                periodStart=line.start,
                periodEnd=line.end,
            )
            for line in draft.lines
        ],
        total=from_cents(draft.total),
    )


def _history_entry(row: dict[str, Any]) -> BillingHistoryEntry:
    return BillingHistoryEntry(
        id=row["_id"],
        kind=row["kind"],
        status=row["status"],
        description=row["description"],
        workspaceId=row.get("workspaceId"),
        subscriptionId=row.get("subscriptionId"),
        periodStart=row.get("periodStart"),
        periodEnd=row.get("periodEnd"),
        currency=row["currency"],
        total=from_cents(row["total"]),
        lines=[
            BillingInvoiceLine(
                kind=line["kind"],
                description=line["description"],
                quantity=line["quantity"],
                unitAmount=from_cents(line["unitAmount"]),
                amount=from_cents(line["amount"]),
                planId=line.get("planId"),
                periodStart=line.get("periodStart"),
                periodEnd=line.get("periodEnd"),
            )
            for line in row["lines"]
        ],
        issuedAt=row["issuedAt"],
    )
