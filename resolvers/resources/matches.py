"""Matches: a person decides which documents account for a bank transaction.

``matches.confirm`` records the documents (one, or the receipts of a split payment) with who and
when, and the candidate's score and reasons when the matcher proposed it; ``matches.reject`` says
a candidate is wrong, and it is never proposed for that transaction again; ``matches.undo`` takes
a match back, and its documents are never proposed for the transaction again either (an undone
match is a rejected one). Every step is in the transaction's ``matchHistory``. A document
accounts for one transaction at a time: confirming one already matched elsewhere is a 409.

``matches.settings`` and ``matches.configure`` are the workspace's automatic matching (at
statement import): on or off, the threshold and the margin (owners and admins change them).
"""

from __future__ import annotations

from typing import Any

from persistence.ids import utcnow
from persistence.transactions import DocumentTaken
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Conflict, NotFound
from resolvers.framework.registry import MANAGERS, MEMBERS, capability
from resolvers.services.bank.reconciliation import decision_for
from resolvers.services.bank.transaction_views import transaction_view
from resolvers.services.documents.preferences import matching_settings
from resolvers.services.rules.rule_runner import queue_match_rules
from schema.matches import (
    ConfigureMatching,
    ConfirmMatch,
    GetMatchSettings,
    MatchingSettings,
    MatchResult,
    RejectMatch,
    UndoMatch,
)


async def _transaction(ctx: Context, transaction_id: str) -> dict[str, Any]:
    record = await ctx.store.transactions.get(ctx.require_workspace(), transaction_id)
    if record is None:
        raise NotFound(f"Transaction '{transaction_id}' not found")
    return record


def _event(ctx: Context, action: str, document_ids: list[str]) -> dict[str, Any]:
    return {"action": action, "documentIds": document_ids, "by": ctx.user_id, "at": utcnow()}


@capability("matches.confirm", input=ConfirmMatch, output=MatchResult,
            permissions=["write_documents"], effect="write", roles=MEMBERS, cost=1)  # fmt: skip
async def confirm(ctx: Context, args: ConfirmMatch) -> MatchResult:
    """Records which documents account for a bank transaction: one, or up to 3 receipts of a
    split payment, with who confirmed it and when (and the matcher's score and reasons when it
    proposed them). 409 when the transaction is already matched (matches.undo first) or a
    document is matched to another transaction.
    """
    workspace_id = ctx.require_workspace()
    record = await _transaction(ctx, args.transactionId)
    if record.get("matched"):
        raise Conflict("This transaction is already matched; undo its match first (matches.undo)")
    wanted = list(dict.fromkeys(args.documentIds))
    found = await ctx.store.documents.reads.get_many(workspace_id, wanted, ["archived"])
    active = {d["_id"] for d in found if not d.get("archived")}
    for document_id in wanted:
        if document_id not in active:
            raise BadRequest(
                f"Invalid request: documentIds: '{document_id}' is not an active document of "
                "this workspace"
            )
    # A cheap first refusal; the claims set_match writes are what holds when two calls race.
    taken = await ctx.store.transactions.matched_documents(workspace_id, wanted)
    if taken:
        raise _taken(sorted(taken)[0])
    decision, _ = await decision_for(ctx, record)
    proposed = next((c for c in decision.candidates if set(c.document_ids) == set(wanted)), None)
    match = {
        "documentIds": wanted,
        "kind": "single" if len(wanted) == 1 else "split",
        "score": round(proposed.score, 1) if proposed is not None else None,
        "reasons": list(proposed.reasons) if proposed is not None else [],
        "by": ctx.user_id,
        "at": utcnow(),
        "via": "person",
    }
    try:
        updated = await ctx.store.transactions.set_match(
            workspace_id, args.transactionId, match, _event(ctx, "confirm", wanted)
        )
    except DocumentTaken as taken_now:
        raise _taken(taken_now.document_id) from None
    if updated is None:
        raise Conflict("This transaction was matched meanwhile; read it again")
    # The workspace's transaction-matched rules act on the documents, in a job (not here).
    await queue_match_rules(ctx.services, workspace_id, [args.transactionId])
    return MatchResult(transaction=transaction_view(updated))


def _taken(document_id: str) -> Conflict:
    """The 409 of a document already matched to another transaction (the cheap first check and
    the claim that holds when two calls race say the same)."""
    return Conflict(f"Document '{document_id}' is matched to another transaction")


@capability("matches.reject", input=RejectMatch, output=MatchResult,
            permissions=["write_documents"], effect="write", roles=MEMBERS)  # fmt: skip
async def reject(ctx: Context, args: RejectMatch) -> MatchResult:
    """Says a document does not account for a bank transaction: it is never proposed for that
    transaction again (transactions.candidates leaves it out). 409 when it is the
    transaction's confirmed match (matches.undo takes a match back).
    """
    record = await _transaction(ctx, args.transactionId)
    for match in record.get("matches") or []:
        if args.documentId in (match.get("documentIds") or []):
            raise Conflict("That document is this transaction's match; use matches.undo")
    updated = await ctx.store.transactions.reject(
        ctx.require_workspace(),
        args.transactionId,
        args.documentId,
        _event(ctx, "reject", [args.documentId]),
    )
    if updated is None:
        raise NotFound(f"Transaction '{args.transactionId}' not found")
    return MatchResult(transaction=transaction_view(updated))


@capability("matches.undo", input=UndoMatch, output=MatchResult,
            permissions=["write_documents"], effect="write", roles=MEMBERS)  # fmt: skip
async def undo(ctx: Context, args: UndoMatch) -> MatchResult:
    """Takes back a transaction's match, recording who and when; its documents are never
    proposed for that transaction again, and after an automatic match never matched
    automatically again. 409 when the transaction has no match.
    """
    record = await _transaction(ctx, args.transactionId)
    matches = record.get("matches") or []
    if not record.get("matched") or not matches:
        raise Conflict("This transaction has no match to undo")
    match = matches[0]
    documents = list(match.get("documentIds") or [])
    # Which kind of match was undone: an automatic one's documents are never matched
    # automatically again (persistence.transactions.clear_match).
    event = {**_event(ctx, "undo", documents), "via": match.get("via") or "person"}
    updated = await ctx.store.transactions.clear_match(
        ctx.require_workspace(), args.transactionId, match, documents, event
    )
    if updated is None:
        raise Conflict("This transaction's match changed meanwhile; read it again")
    return MatchResult(transaction=transaction_view(updated))


async def _settings(ctx: Context) -> MatchingSettings:
    # The currency plays no part in what is shown here.
    chosen = await matching_settings(ctx.store, ctx.require_workspace(), currency="")
    return MatchingSettings(autoMatch=chosen.auto, threshold=chosen.threshold, margin=chosen.margin)


@capability("matches.settings", input=GetMatchSettings, output=MatchingSettings,
            permissions=["read_documents"], effect="read")  # fmt: skip
async def settings(ctx: Context, args: GetMatchSettings) -> MatchingSettings:
    """The workspace's automatic matching: whether statements.import matches on its own, the
    score a match needs (threshold) and how far ahead of any rival it must be (margin).
    transactions.candidates decides with the same settings.
    """
    return await _settings(ctx)


@capability("matches.configure", input=ConfigureMatching, output=MatchingSettings,
            permissions=["write_workspaces"], effect="write", roles=MANAGERS)  # fmt: skip
async def configure(ctx: Context, args: ConfigureMatching) -> MatchingSettings:
    """Changes the workspace's automatic matching (owners and admins): autoMatch false leaves
    every transaction to a person; threshold (65 to 125) and margin (0 to 50) set how sure the
    matcher must be. What is left out keeps its value.
    """
    changes = args.model_dump(exclude_none=True)
    if not changes:
        raise BadRequest("Invalid request: send autoMatch, threshold or margin")
    await ctx.store.workspaces.set_matching(ctx.require_workspace(), changes)
    return await _settings(ctx)
