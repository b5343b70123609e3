"""Capabilities of the transactions resource: the bank's booked lines, searched, counted and
corrected (counterparty, reference, category, notes — never what the bank booked)."""

from __future__ import annotations

from typing import Any

from domain.transactions import TotalsKey
from domain.where import WhereClause
from engines.keyring import Keyring
from persistence.ids import utcnow
from persistence.money import from_cents
from resolvers.framework import cursors
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, NotFound, store_errors
from resolvers.framework.registry import MEMBERS, capability
from resolvers.services.bank.reconciliation import decision_for
from resolvers.services.bank.transaction_views import transaction_view
from schema.transactions import (
    BankTransaction,
    CountTransactions,
    CurrencyFlow,
    GetTransaction,
    MatchCandidate,
    MatchSignal,
    SearchTransactions,
    TransactionCandidates,
    TransactionCandidatesInput,
    TransactionCount,
    TransactionFlow,
    TransactionGroupKey,
    TransactionPage,
    TransactionResult,
    TransactionTotals,
    TransactionTotalsGroup,
    UpdateTransaction,
    as_node,
)

# Offsets beyond this are refused: narrow the where clause instead of paging that deep.
MAX_OFFSET = 100_000


@capability(
    "transactions.search",
    input=SearchTransactions,
    output=TransactionPage,
    permissions=["read_documents"],
    effect="read",
)
async def search(ctx: Context, args: SearchTransactions) -> TransactionPage:
    """Bank transactions matching where (amounts signed: debits negative), sorted by sortBy,
    in pages of limit with nextCursor.
    """
    workspace_id = ctx.require_workspace()
    keyring = ctx.services.keyring
    offset = page_offset(args, keyring)
    if offset > MAX_OFFSET:
        why = f"pages end after {MAX_OFFSET:,} rows; narrow the where clause"
        raise cursors.refused_cursor(why)
    rows = await ctx.store.transactions.search(
        workspace_id,
        args.where,
        sort_by=args.sortBy,
        sort_order=args.sortOrder,
        skip=offset,
        limit=args.limit + 1,
    )
    next_cursor = None
    if len(rows) > args.limit:
        rows = rows[: args.limit]
        next_cursor = position_cursors(args, keyring, offset + args.limit, 1)[0]
    return TransactionPage(
        transactions=[transaction_view(row) for row in rows], nextCursor=next_cursor
    )


def _query_print(args: SearchTransactions) -> str:
    """What a search's cursors are bound to: its where clause and its order."""
    return cursors.fingerprint(
        {
            "capability": "transactions.search",
            "where": args.where.model_dump() if args.where else None,
            "sort": [args.sortBy, args.sortOrder],
        }
    )


def page_offset(args: SearchTransactions, keyring: Keyring) -> int:
    """The row a search's page starts at: 0, or where its cursor points."""
    if args.cursor is None:
        return 0
    state = cursors.decode(args.cursor, _query_print(args), keyring)
    return cursors.offset_of(state, default=None)


def position_cursors(
    args: SearchTransactions, keyring: Keyring, start: int, count: int
) -> list[str]:
    """The cursors of the rows after positions ``start`` … ``start + count - 1`` of the search
    ``args`` asks for: a page of that search continues after the row (the GraphQL face's
    per-edge cursors are these, so each edge can be an ``after``)."""
    query_print = _query_print(args)
    return [cursors.encode_offset(start + i, query_print, keyring) for i in range(count)]


async def _load(ctx: Context, transaction_id: str) -> dict[str, Any]:
    record = await ctx.store.transactions.get(ctx.require_workspace(), transaction_id)
    if record is None:
        raise NotFound(f"Transaction '{transaction_id}' not found")
    return record


@capability(
    "transactions.get",
    input=GetTransaction,
    output=TransactionResult,
    permissions=["read_documents"],
    effect="read",
)
async def get(ctx: Context, args: GetTransaction) -> TransactionResult:
    """One bank transaction with where it was read, what the bank wrote and its corrections."""
    return TransactionResult(transaction=transaction_view(await _load(ctx, args.id)))


@capability(
    "transactions.candidates",
    input=TransactionCandidatesInput,
    output=TransactionCandidates,
    permissions=["read_documents"],
    effect="read",
    cost=1,
)
async def candidates(ctx: Context, args: TransactionCandidatesInput) -> TransactionCandidates:
    """The documents that could account for a bank transaction, best first, each with the
    signals that scored it (amount, date, merchant, reference, currency, card) and what each
    contributed, and whether matching would pair them automatically or leave it to a person
    (and why). Reads only; nothing is matched.
    """
    decision, settings = await decision_for(ctx, await _load(ctx, args.id))
    return TransactionCandidates(
        transactionId=args.id,
        outcome=decision.outcome,
        why=decision.why,
        threshold=settings.threshold,
        margin=settings.margin,
        candidates=[
            MatchCandidate(
                documentIds=list(found.document_ids),
                kind=found.kind,
                score=round(found.score, 1),
                signals=[
                    MatchSignal(
                        name=signal.name,
                        contribution=round(signal.contribution, 1),
                        reason=signal.reason,
                    )
                    for signal in found.signals
                ],
            )
            for found in decision.candidates
        ],
    )


@capability(
    "transactions.count",
    input=CountTransactions,
    output=TransactionCount,
    permissions=["read_documents"],
    effect="read",
)
async def count(ctx: Context, args: CountTransactions) -> TransactionCount:
    """Counts the transactions matching where, with money out (debits), in (credits) and net
    per currency.
    """
    groups = await ctx.store.transactions.totals(ctx.require_workspace(), args.where)
    return TransactionCount(
        count=sum(group["count"] for group in groups),
        totals=[
            CurrencyFlow(
                currency=group["_id"],
                count=group["count"],
                debits=from_cents(group["debits"]),
                credits=from_cents(group["credits"]),
                net=from_cents(group["debits"] + group["credits"]),
            )
            for group in groups
        ],
    )


@capability(
    "transactions.update",
    input=UpdateTransaction,
    output=TransactionResult,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
)
async def update(ctx: Context, args: UpdateTransaction) -> TransactionResult:
    """Corrects a bank transaction's counterparty or reference, or sets its category or notes.
    Send only the fields to change (null clears). Amount, dates, currency and account are the
    bank's: they cannot change. Each change is kept in editHistory.
    """
    changes = args.model_dump(exclude_unset=True, exclude={"id"})
    if not changes:
        raise BadRequest("Invalid request: no fields to update; send at least one field besides id")
    workspace_id = ctx.require_workspace()
    record = await _load(ctx, args.id)
    now = utcnow()
    edits = [
        {
            "field": field,
            "oldValue": record.get(field),
            "newValue": value,
            "editedBy": ctx.user_id,
            "editedAt": now,
        }
        for field, value in changes.items()
        if record.get(field) != value
    ]
    if not edits:
        return TransactionResult(transaction=transaction_view(record))
    changed = {edit["field"]: edit["newValue"] for edit in edits}
    updated = await ctx.store.transactions.update_fields(workspace_id, args.id, changed, edits)
    if updated is None:
        raise NotFound(f"Transaction '{args.id}' not found")
    return TransactionResult(transaction=transaction_view(updated))


# -- reads of the GraphQL graph (node(id:), a document's transactions): batches, not capabilities


async def transactions_by_id(ctx: Context, ids: list[str]) -> list[BankTransaction]:
    """The transactions of the context's workspace among ``ids``, in one read (ids of other
    workspaces, or of nothing, are simply absent)."""
    rows = await ctx.store.transactions.by_ids(ctx.require_workspace(), ids)
    return [as_node(transaction_view(row)) for row in rows]


async def transactions_of_documents(
    ctx: Context, document_ids: list[str]
) -> dict[str, list[BankTransaction]]:
    """For each of ``document_ids``, the transactions of the context's workspace matched to it
    (oldest booking first), in one read."""
    wanted = set(document_ids)
    found: dict[str, list[BankTransaction]] = {document_id: [] for document_id in document_ids}
    for row in await ctx.store.transactions.matched_to(ctx.require_workspace(), document_ids):
        view = as_node(transaction_view(row))
        linked = {i for match in row.get("matches") or [] for i in match.get("documentIds") or []}
        for document_id in sorted(linked & wanted):
            found[document_id].append(view)
    return found


# The groups transaction totals list at most (as documentsAggregate).
MAX_TOTALS_GROUPS = 500


async def transaction_totals(
    ctx: Context, where: WhereClause | None, keys: list[TotalsKey]
) -> TransactionTotals:
    """The context's workspace's transactions matching ``where``, grouped by ``keys`` and
    currency: spent, receipted (matched to documents), missing and received, per group. One
    aggregation in the store (and a count when the groups are truncated)."""
    workspace_id = ctx.require_workspace()
    wanted = [key for key in dict.fromkeys(keys) if key != "currency"]
    with store_errors():
        rows = await ctx.store.transactions.flows(workspace_id, where, wanted, MAX_TOTALS_GROUPS)
        truncated = len(rows) > MAX_TOTALS_GROUPS
        rows = rows[:MAX_TOTALS_GROUPS]
        total = (
            await ctx.store.transactions.count(workspace_id, where)
            if truncated
            else sum(int(row["count"]) for row in rows)
        )

    def flow(row: dict[str, Any], name: str) -> TransactionFlow:
        return TransactionFlow(count=row[f"{name}_count"], sum=from_cents(row[f"{name}_sum"]))

    groups = []
    for row in rows:
        spent, receipted = flow(row, "out"), flow(row, "matched")
        groups.append(
            TransactionTotalsGroup(
                key=TransactionGroupKey(**row["_id"]),
                count=row["count"],
                spent=spent,
                receipted=receipted,
                missing=TransactionFlow(
                    count=spent.count - receipted.count, sum=spent.sum - receipted.sum
                ),
                received=flow(row, "in"),
            )
        )
    return TransactionTotals(totalCount=total, groups=groups, groupsTruncated=truncated)
