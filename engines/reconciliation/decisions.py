"""The decision for one transaction: matched automatically only above the workspace's threshold
and without a rival within the margin, on either side; everything else for review, with the
ranked candidates and the reason it was not matched."""

from __future__ import annotations

from .policy import MatchSettings
from .types import Candidate, Decision


def decide(
    txn_id: str,
    candidates: list[Candidate],
    wanted: dict[str, list[tuple[float, str]]],
    settings: MatchSettings,
    manual: frozenset[str] = frozenset(),
) -> Decision:
    """Auto-match the best candidate only when it is a single document at or above the
    threshold, no other candidate comes within the margin, no other transaction wants the
    document within the margin of this one's score, and it is not one of the ``manual``
    documents (a person took it back from an automatic match once)."""
    shown = tuple(candidates[: settings.top])
    if not candidates:
        return Decision(txn_id, "no_candidate", why="no document fits the amount and date")
    best = candidates[0]
    if best.kind != "single":
        return Decision(
            txn_id, "needs_review", shown, why=f"a {best.kind} match is never made without a person"
        )
    if best.score < settings.threshold:
        return Decision(
            txn_id,
            "needs_review",
            shown,
            why=f"best score {best.score:.0f} is below the threshold {settings.threshold:.0f}",
        )
    if len(candidates) > 1 and candidates[1].score >= best.score - settings.margin:
        second = candidates[1]
        return Decision(
            txn_id,
            "needs_review",
            shown,
            why=f"{', '.join(second.document_ids)} scores {second.score:.0f}, within "
            f"{settings.margin:.0f} of {best.score:.0f}",
        )
    if not settings.auto:
        return Decision(
            txn_id, "needs_review", shown, why="automatic matching is off in this workspace"
        )
    doc_id = best.document_ids[0]
    if doc_id in manual:
        return Decision(
            txn_id,
            "needs_review",
            shown,
            why=f"{doc_id} was taken back from an automatic match once: a person decides",
        )
    rivals = sorted(
        other
        for score, other in wanted[doc_id]
        if other != txn_id and score >= best.score - settings.margin
    )
    if rivals:
        return Decision(
            txn_id,
            "needs_review",
            shown,
            why=f"{', '.join(rivals)} also wants {doc_id} within {settings.margin:.0f} points",
            rivals=tuple(rivals),
        )
    return Decision(txn_id, "auto_match", shown, matched=best, why="above the threshold, no rival")
