"""Invoice arithmetic: plan segments of a period, prorated, plus documents beyond the quota.

Everything is on integer cents and exact fractions. A period's plan history is a list of
segments (the plan in force from one moment to the next); each segment costs its plan's price
times the share of the period it covers. Segment amounts are rounded cumulatively (each line is
the rounded running total minus the previous rounded running total), so the lines always add up
to the rounded exact total: a plan changed twice never bills a cent more or less than the exact
proration. The document quota is prorated the same way (rounded up, in the customer's favour);
documents processed beyond it are billed at the overage price of the plan in force at the end of
the period, or not at all when that plan has none.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from typing import Literal

from engines.billing.periods import round_half_up, share
from engines.billing.plans import Plan, PlanCatalog


@dataclass(frozen=True)
class PlanChange:
    """From ``start`` on, ``plan_id`` is in force (until the next change)."""

    plan_id: str
    start: datetime


@dataclass(frozen=True)
class InvoiceLine:
    kind: Literal["plan", "overage"]
    description: str
    quantity: int
    unit_amount: int  # cents
    amount: int  # cents
    plan_id: str
    start: datetime
    end: datetime


@dataclass(frozen=True)
class InvoiceDraft:
    period_start: datetime
    period_end: datetime
    currency: str
    lines: tuple[InvoiceLine, ...]
    documents_included: int
    documents_over: int  # beyond the quota, billed or not
    total: int  # cents


def segments(
    changes: Sequence[PlanChange], period_start: datetime, period_end: datetime
) -> list[tuple[str, datetime, datetime]]:
    """``(plan_id, start, end)`` covering the period, from the plan changes (sorted by time).

    The change in force at the period start is the last one at or before it; changes at the same
    moment keep the last; empty segments are dropped.
    """
    if not changes:
        raise ValueError("a period needs the plan in force at its start")
    ordered = sorted(changes, key=lambda change: change.start)
    cut: list[tuple[str, datetime]] = []
    for change in ordered:
        start = min(max(change.start, period_start), period_end)
        if cut and cut[-1][1] == start:
            cut[-1] = (change.plan_id, start)
        elif not cut or cut[-1][0] != change.plan_id:
            cut.append((change.plan_id, start))
    if cut[0][1] > period_start:
        # The first known plan is extended back to the period start.
        cut[0] = (cut[0][0], period_start)
    result = []
    for index, (plan_id, start) in enumerate(cut):
        end = cut[index + 1][1] if index + 1 < len(cut) else period_end
        if end > start:
            result.append((plan_id, start, end))
    return result


def draft_invoice(
    catalog: PlanCatalog,
    changes: Sequence[PlanChange],
    period_start: datetime,
    period_end: datetime,
    documents_processed: int,
) -> InvoiceDraft:
    """The invoice of one period: prorated plan lines, then an overage line if any."""
    parts = segments(changes, period_start, period_end)
    lines: list[InvoiceLine] = []
    running = Fraction(0)
    billed = 0
    included = Fraction(0)
    plan: Plan = catalog.default
    for plan_id, start, end in parts:
        plan = plan_of(catalog, plan_id)
        fraction = share(start, end, period_start, period_end)
        running += plan.price * fraction
        amount = round_half_up(running) - billed
        billed += amount
        included += plan.documents_included * fraction
        prorated = "" if fraction == 1 else f", prorated {_percent(fraction)} of the period"
        lines.append(
            InvoiceLine(
                kind="plan",
                description=f"{plan.name} plan, {_when(start)} to {_when(end)}{prorated}",
                quantity=1,
                unit_amount=plan.price,
                amount=amount,
                plan_id=plan.id,
                start=start,
                end=end,
            )
        )
    documents_included = math.ceil(included)
    over = max(0, documents_processed - documents_included)
    if over and plan.overage_per_document is not None:
        lines.append(
            InvoiceLine(
                kind="overage",
                description=f"Documents beyond the {documents_included} included "
                f"({documents_processed} processed)",
                quantity=over,
                unit_amount=plan.overage_per_document,
                amount=over * plan.overage_per_document,
                plan_id=plan.id,
                start=period_start,
                end=period_end,
            )
        )
    return InvoiceDraft(
        period_start=period_start,
        period_end=period_end,
        currency=catalog.currency,
        lines=tuple(lines),
        documents_included=documents_included,
        documents_over=over,
        total=sum(line.amount for line in lines),
    )


def plan_of(catalog: PlanCatalog, plan_id: str) -> Plan:
    """The plan ``plan_id``; a plan since removed from the catalog bills as the default plan
    (issued invoices keep the lines they were issued with)."""
    return catalog.get(plan_id) or catalog.default


def _when(moment: datetime) -> str:
    if moment.hour == moment.minute == moment.second == moment.microsecond == 0:
        return moment.strftime("%Y-%m-%d")
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _percent(fraction: Fraction) -> str:
    return f"{float(fraction) * 100:.2f}%"
