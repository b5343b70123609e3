"""The matcher (``engines.reconciliation``) over a workspace's stored transactions and
documents: what transactions.candidates shows for one transaction.

The engine is pure; here its inputs are read: the documents dated where a booking could pay
them (``REFERENCE_LAG_DAYS`` before the booking, a card's early days after), and the workspace's
other unmatched transactions booked near it, since a second booking that wants the same
document within the margin is a rival that stops an automatic match. Both reads are bounded.
"""

from __future__ import annotations

import asyncio
from datetime import date, datetime, timedelta
from typing import Any

from domain.where import WhereClause
from engines.reconciliation import (
    BankTransaction,
    CandidateDocument,
    Decision,
    MatchSettings,
    RateBookRates,
    card_ending,
    match,
)
from engines.reconciliation.policy import EARLY_DAYS, REFERENCE_LAG_DAYS
from persistence.documents import DocumentQuery
from persistence.money import from_cents
from resolvers.framework.context import Context
from resolvers.services.documents.preferences import matching_settings, preferred_currency

# Documents read for one booking, newest first; a workspace with more in its window is matched
# against these (the window is half a year: a busy workspace, not a single payment).
MAX_DOCUMENTS = 5_000
# Other unmatched bookings this near are read as possible rivals, at most this many.
RIVAL_DAYS = 14
MAX_RIVALS = 500
DOCUMENT_FIELDS = [
    "id", "docDate", "amount", "currency", "convertedAmount", "preferredCurrency",
    "merchant", "merchantLegalName", "invoiceId", "paymentMethodEnding", "tipAmount",
]  # fmt: skip


def day_of(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    return value if isinstance(value, date) else None


def booking(record: dict[str, Any]) -> BankTransaction:
    """A stored transaction as the matcher takes it."""
    reference = record.get("reference") or ""
    return BankTransaction(
        id=record["_id"],
        booking_date=record["bookingDate"].date(),
        value_date=day_of(record.get("valueDate")),
        amount=from_cents(record["amount"]),
        currency=record["currency"],
        counterparty=record.get("counterparty") or "",
        reference=reference,
        account=record.get("account") or "",
        card_last4=card_ending(reference),
    )


def candidate(record: dict[str, Any], currency: str) -> CandidateDocument | None:
    """A stored document as the matcher takes it; None without a date, amount or currency."""
    day, cents = day_of(record.get("docDate")), record.get("amount")
    if day is None or not isinstance(cents, int) or not record.get("currency"):
        return None
    converted = record.get("preferredCents")
    tip = record.get("tipAmount")
    return CandidateDocument(
        id=record["_id"],
        date=day,
        total=from_cents(cents),
        currency=record["currency"],
        converted_amount=(
            from_cents(converted)
            if isinstance(converted, int) and record.get("preferredCurrency") == currency
            else None
        ),
        merchant=record.get("merchant") or "",
        seller=record.get("merchantLegalName") or "",
        invoice_number=record.get("invoiceId") or "",
        card_last4=record.get("paymentMethodEnding"),
        tip=from_cents(tip) if isinstance(tip, int) else None,
    )


def between(field: str, first: date, last: date, matched: bool | None = None) -> WhereClause:
    """``field`` from ``first`` to ``last`` (both included); only (un)matched ones if given."""
    conditions: list[dict[str, Any]] = [
        {"field": field, "op": "gte", "value": first.isoformat()},
        {"field": field, "op": "lte", "value": last.isoformat()},
    ]
    if matched is not None:
        conditions.append({"field": "matched", "op": "eq", "value": matched})
    return WhereClause.model_validate({"conditions": conditions})


async def decision_for(
    ctx: Context, record: dict[str, Any], settings: MatchSettings | None = None
) -> tuple[Decision, MatchSettings]:
    """What the matcher decides for the stored transaction ``record`` today."""
    workspace_id = ctx.require_workspace()
    txn = booking(record)
    currency = await preferred_currency(ctx.store, workspace_id, ctx.user_id)
    chosen = settings or await matching_settings(ctx.store, workspace_id, currency)
    day = txn.booking_date
    documents = await ctx.store.documents.reads.find(
        workspace_id,
        DocumentQuery(where=between("docDate", day - timedelta(REFERENCE_LAG_DAYS),
                                     day + timedelta(EARLY_DAYS))),
        limit=MAX_DOCUMENTS,
        fields=DOCUMENT_FIELDS,
    )  # fmt: skip
    near = between("bookingDate", day - timedelta(RIVAL_DAYS), day + timedelta(RIVAL_DAYS))
    others = await ctx.store.transactions.search(
        workspace_id, near, sort_by="bookingDate", sort_order=-1, skip=0, limit=MAX_RIVALS
    )
    rivals = [o for o in others if o["_id"] != txn.id and not o.get("matched")]
    bookings = [txn, *(booking(o) for o in rivals)]
    # A document already accounts for another transaction: not a candidate for this one.
    taken = await ctx.store.transactions.matched_documents(
        workspace_id, [str(d["_id"]) for d in documents]
    )
    candidates = [
        c
        for c in (candidate(dict(d), currency) for d in documents if d["_id"] not in taken)
        if c is not None
    ]
    # What a person rejected or undid is never proposed again, for them as for the rivals; a
    # document a person took back from an automatic match is never matched automatically again.
    rejected = [(o["_id"], doc_id) for o in (record, *rivals) for doc_id in o.get("rejected") or []]
    manual = await ctx.store.transactions.auto_undone_documents(
        workspace_id, [c.id for c in candidates]
    )
    rates = RateBookRates(ctx.services.rate_book())
    # CPU work (a few thousand comparisons at most): off the event loop.
    decisions = await asyncio.to_thread(
        match, bookings, candidates, rates, chosen, rejected, manual
    )
    return next(d for d in decisions if d.transaction_id == txn.id), chosen
