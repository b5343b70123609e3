"""Automatic matching at statement import: the matcher (``engines.reconciliation``) over the
transactions an import has just stored, and only those, against the workspace's documents.

A new transaction is matched without a person only when the matcher decides so with the
workspace's settings (matches.configure: on, above the threshold, one-to-one, no rival within
the margin), the pair was never rejected or undone, the document accounts for no other
transaction, and no person ever took the document back from an automatic match. Everything
else stays unmatched, with its candidates for a person (transactions.candidates).

The reads are bounded by the statement's booking dates, as ``decision_for`` bounds its own: the
documents dated where one of its bookings could pay them, and the workspace's other unmatched
transactions booked near them (a rival stops an automatic match).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from domain.transactions import MAX_STATEMENT_LINES
from engines.reconciliation import RateBookRates, match
from engines.reconciliation.policy import EARLY_DAYS, REFERENCE_LAG_DAYS
from persistence.documents import DocumentQuery
from persistence.ids import utcnow
from resolvers.framework.context import Context
from resolvers.services.bank.reconciliation import (
    DOCUMENT_FIELDS,
    RIVAL_DAYS,
    between,
    booking,
    candidate,
    day_of,
)
from resolvers.services.documents.preferences import matching_settings, preferred_currency
from resolvers.services.rules.rule_runner import queue_match_rules

# Documents read for one import, newest first. A window holding more is read in part: the
# bookings whose own window reaches past what was read are left to a person.
MAX_DOCUMENTS = 50_000
# Other unmatched transactions read as possible rivals, at most this many.
MAX_RIVALS = MAX_STATEMENT_LINES


async def auto_match(ctx: Context, workspace_id: str, fresh: list[dict[str, Any]]) -> int:
    """Match the just-stored transactions ``fresh`` where the matcher is sure; how many were."""
    if not fresh:
        return 0
    currency = await preferred_currency(ctx.store, workspace_id, ctx.user_id)
    settings = await matching_settings(ctx.store, workspace_id, currency)
    if not settings.auto:
        return 0
    new = [booking(record) for record in fresh]
    first = min(txn.booking_date for txn in new)
    last = max(max(txn.booking_date, txn.value_date or txn.booking_date) for txn in new)
    documents = await ctx.store.documents.reads.find(
        workspace_id,
        DocumentQuery(
            where=between(
                "docDate", first - timedelta(REFERENCE_LAG_DAYS), last + timedelta(EARLY_DAYS)
            )
        ),
        limit=MAX_DOCUMENTS,
        fields=DOCUMENT_FIELDS,
    )
    # Read in part: a booking is decided only when all of its window was read (the oldest
    # day read may be cut, so it does not count).
    days = [day for day in (day_of(d.get("docDate")) for d in documents) if day is not None]
    covered_from = min(days) + timedelta(days=1) if len(documents) >= MAX_DOCUMENTS else None
    fresh_ids = {record["_id"] for record in fresh}
    near = between(
        "bookingDate", first - timedelta(RIVAL_DAYS), last + timedelta(RIVAL_DAYS), matched=False
    )
    others = await ctx.store.transactions.search(
        workspace_id, near, sort_by="bookingDate", sort_order=-1, skip=0, limit=MAX_RIVALS
    )
    rivals = [o for o in others if o["_id"] not in fresh_ids and not o.get("matched")]
    ids = [str(d["_id"]) for d in documents]
    # A document accounts for one transaction; one a person took back from an automatic
    # match is left to a person from now on (the matcher's ``manual``).
    taken = await ctx.store.transactions.matched_documents(workspace_id, ids)
    undone = await ctx.store.transactions.auto_undone_documents(workspace_id, ids)
    candidates = [
        c
        for c in (candidate(dict(d), currency) for d in documents if d["_id"] not in taken)
        if c is not None
    ]
    rejected = [(o["_id"], doc_id) for o in (*fresh, *rivals) for doc_id in o.get("rejected") or []]
    bookings = [*new, *(booking(o) for o in rivals)]
    rates = RateBookRates(ctx.services.rate_book())
    # CPU work (up to 20,000 bookings): off the event loop.
    decisions = await asyncio.to_thread(
        match, bookings, candidates, rates, settings, rejected, undone
    )
    earliest = {txn.id: txn.booking_date - timedelta(REFERENCE_LAG_DAYS) for txn in new}
    import_id, now = fresh[0]["source"]["importId"], utcnow()
    chosen: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    used: set[str] = set()
    for decision in decisions:
        found = decision.matched
        if decision.transaction_id not in fresh_ids or found is None:
            continue
        if covered_from is not None and earliest[decision.transaction_id] < covered_from:
            continue
        document_ids = list(found.document_ids)
        if used & set(document_ids):  # one-to-one already, by the margin; kept so regardless
            continue
        used |= set(document_ids)
        # Made by nobody (``by`` None, ``via`` auto), at this import.
        match_record = {
            "documentIds": document_ids,
            "kind": found.kind,
            "score": round(found.score, 1),
            "reasons": list(found.reasons),
            "by": None,
            "at": now,
            "via": "auto",
        }
        event = {
            "action": "auto_match",
            "documentIds": document_ids,
            "by": None,
            "at": now,
            "via": "auto",
            "importId": import_id,
        }
        chosen.append((decision.transaction_id, match_record, event))
    # One round trip for them all (one by one, 2,000 matches took seconds on the wire). A
    # document a person (or another import) claimed since the reads above is left out there.
    made = await ctx.store.transactions.set_matches(workspace_id, chosen)
    # The workspace's transaction-matched rules act on the matched documents: one job for the
    # whole import (it acts on the match each transaction holds when it runs).
    await queue_match_rules(ctx.services, workspace_id, [txn_id for txn_id, _, _ in chosen])
    return made
