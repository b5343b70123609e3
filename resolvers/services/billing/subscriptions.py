"""Subscriptions over time: opening them, changing plans, closing periods into invoices.

A workspace gets a subscription to the catalog's default plan when it is created (``fincap
admin bootstrap`` / ``create-workspace``), or lazily — the first ``billing.get`` or the next
period close — for workspaces that existed before billing. It is billed to its owner's billing
account. Periods run midnight to midnight UTC, monthly (or yearly) from the day the workspace
was created.

A plan change of the same interval takes effect at once and is prorated at the period close
(``engines/billing/invoice.py``); a change between a monthly and a yearly plan is scheduled for
the next renewal (prorating a year's price over a month's period would be wrong both ways).

The ``billing-close-periods`` job (one at a time: a dedupe key) closes every period that ended
at least ``CLOSE_DELAY`` ago — long enough for every API process to flush its buffered call
counts — into an invoice and opens the next period, then asks to run again at the next period
end (at most an hour later). Issuing is idempotent: the invoice id is derived from the
subscription and period, and the period moves on by compare-and-set, so two workers (or a job
taken over after a crash) issue each invoice exactly once.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from engines.billing.invoice import InvoiceDraft, PlanChange, draft_invoice, plan_of
from engines.billing.periods import next_period_end, period_bounds, period_index
from engines.billing.plans import PlanCatalog
from persistence.billing import invoice_id
from persistence.ids import new_id
from persistence.jobs import JobRecord
from persistence.store import Store
from resolvers.framework.errors import BadRequest, Conflict, NotFound
from resolvers.framework.job_kinds import RunAgain, job_kind

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.billing")

CLOSE_JOB = "billing-close-periods"
SYSTEM_WORKSPACE = "_system"  # the jobs collection wants a workspace; this job serves them all
CLOSE_DELAY = timedelta(minutes=5)
SWEEP_EVERY = timedelta(hours=1)
CAS_ATTEMPTS = 8


@dataclass(frozen=True)
class PeriodUsage:
    documents_processed: int
    api_calls: int


async def open_subscription(
    store: Store, catalog: PlanCatalog, workspace: dict[str, Any], now: datetime
) -> dict[str, Any]:
    """The workspace's subscription, opened on the default plan when it has none.

    The period anchor is the workspace's creation day; the first period is the one containing
    ``now`` (a workspace older than billing is not billed for the past).
    """
    existing = await store.subscriptions.for_workspace(workspace["_id"])
    if existing is not None:
        return existing
    owner = workspace["createdBy"]
    account = await store.billing_accounts.get_or_create(owner, catalog.currency)
    plan = catalog.default
    created = workspace.get("createdAt") or now
    anchor = created.astimezone(UTC).date() if created.tzinfo else created.date()
    start, end = period_bounds(anchor, plan.months, period_index(anchor, plan.months, now))
    record = {
        "_id": new_id("sub"),
        "workspaceId": workspace["_id"],
        "accountId": account["_id"],
        "ownerId": owner,
        "planId": plan.id,
        "pendingPlanId": None,
        "status": "active",
        "anchorDay": anchor.day,
        "currentPeriodStart": start,
        "currentPeriodEnd": end,
        "changes": [{"planId": plan.id, "start": start}],
        "version": 0,
        "createdAt": now,
        "updatedAt": now,
    }
    return await store.subscriptions.insert_if_missing(record)


async def ensure_subscription(
    store: Store, catalog: PlanCatalog, workspace_id: str, now: datetime
) -> dict[str, Any]:
    """The subscription of ``workspace_id``, opened lazily for a workspace from before billing."""
    found = await store.subscriptions.for_workspace(workspace_id)
    if found is not None:
        return found
    workspace = await store.workspaces.get_unscoped(workspace_id)
    if workspace is None:
        raise NotFound(f"no workspace {workspace_id!r}")
    return await open_subscription(store, catalog, workspace, now)


async def open_missing(store: Store, catalog: PlanCatalog, now: datetime) -> int:
    """Open subscriptions for every workspace without one; how many were opened."""
    missing = set(await store.workspaces.ids_unscoped()) - await store.subscriptions.workspace_ids()
    for workspace_id in sorted(missing):
        await ensure_subscription(store, catalog, workspace_id, now)
    return len(missing)


def plan_changes(subscription: dict[str, Any]) -> list[PlanChange]:
    return [PlanChange(change["planId"], change["start"]) for change in subscription["changes"]]


async def period_usage(store: Store, subscription: dict[str, Any]) -> PeriodUsage:
    """Documents processed and API calls in the subscription's current period.

    Documents processed are counted from the documents themselves (each outcome writes its
    billed day in the same write: ``documents.writes.set_processing``), so a worker killed between a
    document's outcome and anything after it loses no count, and a job run again adds none;
    the usage rows' ``documentsProcessed`` holds only counts made before that (kept as
    counted)."""
    workspace_id = subscription["workspaceId"]
    first = subscription["currentPeriodStart"].date()
    end = subscription["currentPeriodEnd"].date()
    totals = await store.usage.totals(workspace_id, first, end)
    billed = await store.documents.totals.billed(workspace_id, first, end)
    return PeriodUsage(totals["documentsProcessed"] + billed, totals["apiCalls"])


async def draft_current(
    store: Store, catalog: PlanCatalog, subscription: dict[str, Any]
) -> tuple[InvoiceDraft, PeriodUsage]:
    """The invoice the current period comes to if nothing changes before it ends."""
    usage = await period_usage(store, subscription)
    draft = draft_invoice(
        catalog,
        plan_changes(subscription),
        subscription["currentPeriodStart"],
        subscription["currentPeriodEnd"],
        usage.documents_processed,
    )
    return draft, usage


def invoice_entry(
    subscription: dict[str, Any], draft: InvoiceDraft, issued_at: datetime
) -> dict[str, Any]:
    return {
        "_id": invoice_id(subscription["_id"], draft.period_start),
        "kind": "invoice",
        "status": "issued",
        "userId": subscription["ownerId"],
        "accountId": subscription["accountId"],
        "workspaceId": subscription["workspaceId"],
        "subscriptionId": subscription["_id"],
        "description": (
            f"Subscription, {draft.period_start:%Y-%m-%d} to {draft.period_end:%Y-%m-%d}"
        ),
        "periodStart": draft.period_start,
        "periodEnd": draft.period_end,
        "currency": draft.currency,
        "lines": [
            {
                "kind": line.kind,
                "description": line.description,
                "quantity": line.quantity,
                "unitAmount": line.unit_amount,
                "amount": line.amount,
                "planId": line.plan_id,
                "periodStart": line.start,
                "periodEnd": line.end,
            }
            for line in draft.lines
        ],
        "total": draft.total,
        "issuedAt": issued_at,
    }


async def close_due_periods(
    store: Store,
    catalog: PlanCatalog,
    subscription: dict[str, Any],
    until: datetime,
    now: datetime | None = None,
) -> int:
    """Invoice every period of ``subscription`` that ended at or before ``until`` and open the
    next one (issued at ``now``, default ``until``); how many invoices this call inserted (0
    when another worker did)."""
    issued = 0
    current: dict[str, Any] | None = subscription
    while current is not None and current["currentPeriodEnd"] <= until:
        draft, _ = await draft_current(store, catalog, current)
        if await store.billing_ledger.insert_once(invoice_entry(current, draft, now or until)):
            issued += 1
            log.info(
                "invoice issued",
                extra={"subscriptionId": current["_id"], "total": draft.total},
            )
        plan_id = current.get("pendingPlanId") or current["planId"]
        start = current["currentPeriodEnd"]
        end = next_period_end(start, plan_of(catalog, plan_id).months, current["anchorDay"])
        moved = await store.subscriptions.replace_if_version(
            current["_id"],
            current["version"],
            {
                "planId": plan_id,
                "pendingPlanId": None,
                "currentPeriodStart": start,
                "currentPeriodEnd": end,
                "changes": [{"planId": plan_id, "start": start}],
            },
        )
        # None: another worker moved it first; carry on from what it wrote.
        current = moved or await store.subscriptions.for_workspace(current["workspaceId"])
    return issued


async def change_plan(
    store: Store, catalog: PlanCatalog, workspace_id: str, plan_id: str, now: datetime
) -> dict[str, Any]:
    """Move the workspace to ``plan_id``: at once (prorated) within the same interval, at the
    next renewal across intervals; the updated subscription."""
    new_plan = catalog.get(plan_id)
    if new_plan is None:
        raise BadRequest(
            f"Invalid request: planId: unknown plan {plan_id!r}; one of "
            f"{', '.join(sorted(catalog.plans))}"
        )
    for _ in range(CAS_ATTEMPTS):
        subscription = await ensure_subscription(store, catalog, workspace_id, now)
        if subscription["currentPeriodEnd"] <= now:
            # A period that ended but is not closed yet: close it first, so the change lands in
            # the period it happens in.
            await close_due_periods(store, catalog, subscription, now)
            continue
        current = plan_of(catalog, subscription["planId"])
        if current.months != new_plan.months:
            pending = None if plan_id == current.id else plan_id
            changes: dict[str, Any] = {"pendingPlanId": pending}
        elif plan_id == subscription["planId"]:
            changes = {"pendingPlanId": None}
        else:
            changes = {
                "planId": plan_id,
                "pendingPlanId": None,
                "changes": [*subscription["changes"], {"planId": plan_id, "start": now}],
            }
        updated = await store.subscriptions.replace_if_version(
            subscription["_id"], subscription["version"], changes
        )
        if updated is not None:
            return updated
    raise Conflict("The subscription changed while the plan was being changed; try again")


async def add_charge(
    store: Store,
    catalog: PlanCatalog,
    user_id: str,
    amount_cents: int,
    description: str,
    now: datetime,
    workspace_id: str | None = None,
) -> dict[str, Any]:
    """A one-off charge on the user's billing account (an operator's action)."""
    description = description.strip()
    if not 1 <= len(description) <= 500:
        raise BadRequest("description must be 1 to 500 characters")
    if amount_cents == 0:
        raise BadRequest("amount must not be zero (negative amounts are credits)")
    account = await store.billing_accounts.get_or_create(user_id, catalog.currency)
    entry = {
        "_id": new_id("chg"),
        "kind": "charge",
        "status": "issued",
        "userId": user_id,
        "accountId": account["_id"],
        "workspaceId": workspace_id,
        "subscriptionId": None,
        "description": description,
        "periodStart": None,
        "periodEnd": None,
        "currency": account["currency"],
        "lines": [
            {
                "kind": "charge",
                "description": description,
                "quantity": 1,
                "unitAmount": amount_cents,
                "amount": amount_cents,
                "planId": None,
                "periodStart": None,
                "periodEnd": None,
            }
        ],
        "total": amount_cents,
        "issuedAt": now,
    }
    await store.billing_ledger.insert_once(entry)
    return entry


async def schedule_period_closes(store: Store) -> None:
    """Make sure the close job exists (a dedupe key keeps it to one); run at API start."""
    await store.jobs.enqueue(SYSTEM_WORKSPACE, CLOSE_JOB, {}, dedupe_key=CLOSE_JOB)


async def close_periods(services: Services, now: datetime) -> tuple[int, datetime]:
    """One sweep: open missing subscriptions, close due periods; (invoices issued, next run)."""
    store, catalog = services.store, services.plans
    await services.api_calls.flush(store.usage)
    await open_missing(store, catalog, now)
    issued = 0
    cutoff = now - CLOSE_DELAY
    while True:
        due = await store.subscriptions.due(cutoff)
        if not due:
            break
        progressed = False
        for subscription in due:
            try:
                issued += await close_due_periods(store, catalog, subscription, cutoff, now)
                progressed = True
            except Exception:
                # One broken subscription must not hold up everyone else's invoices.
                log.exception("closing a billing period failed", extra={"id": subscription["_id"]})
        if not progressed:
            break
        if len(due) < 500:
            break
    next_end = await store.subscriptions.next_period_end()
    next_run = now + SWEEP_EVERY
    if next_end is not None:
        next_run = min(next_run, max(next_end + CLOSE_DELAY, now + timedelta(seconds=1)))
    return issued, next_run


@job_kind(CLOSE_JOB)
async def run_close_periods(services: Services, job: JobRecord) -> RunAgain:
    """Close ended billing periods into invoices, then wait for the next period end."""
    issued, next_run = await close_periods(services, services.clock())
    if issued:
        log.info("billing periods closed", extra={"invoices": issued})
    return RunAgain(next_run)
