"""Which documents need a person's review, and why: one rule for every writer.

A document needs review when processing finished with something a person should check:

- ``flaggedField``: a field's evidence carries a warning (the lines do not add up to the
  total) or was read with a confidence below ``REVIEW_CONFIDENCE``;
- ``processingWarning``: processing ended ``warning`` (its reason says what to check);
- ``possibleDuplicate``: it repeats another document (``duplicateOf``);
- ``noAmount``: it has no total.

A review accepts the reasons the document had then (``reviewAccepted``, stored only); it needs
review again only for a reason it did not have when accepted, or after processing finishes
again (a reprocess starts with nothing accepted). Writers store the result as ``needsReview``
and ``reviewReasons`` (``persistence.documents.writes``), so the queue is an indexed read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal, get_args

from domain.documents import SAVED
from domain.vocabulary import vocabulary

ReviewReason = Literal["flaggedField", "processingWarning", "possibleDuplicate", "noAmount"]
REVIEW_REASONS: tuple[ReviewReason, ...] = get_args(ReviewReason)

# Confidences are calibrated probabilities of being right: a value with more than a one-in-five
# chance of being wrong is worth a person's look (``engines.extraction.review`` uses it too).
REVIEW_CONFIDENCE = 0.8
# Outcomes that leave a document with fields to check; queued, processing and skipped (not a
# financial document) ones have none yet, or none to keep.
REVIEWABLE_STATUSES = frozenset((*SAVED, "failed"))


def flagged_fields(evidence: Iterable[Mapping[str, Any]] | None) -> list[str]:
    """The fields whose evidence says a person should check them: a warning, or a weak
    reading (a correction's evidence, source ``edited``, is certain)."""
    flagged: list[str] = []
    for found in evidence or ():
        confidence = found.get("confidence")
        weak = isinstance(confidence, int | float) and confidence < REVIEW_CONFIDENCE
        # A corrected value is certain; a warning (amounts that do not add up) still counts.
        if found.get("warning") or (weak and found.get("source") != "edited"):
            flagged.append(str(found.get("field")))
    return list(dict.fromkeys(flagged))


def review_reasons(document: Mapping[str, Any]) -> list[ReviewReason]:
    """Why ``document`` (stored or API-level fields) needs a look, in ``REVIEW_REASONS``
    order; none before processing finishes."""
    if document.get("processingStatus") not in REVIEWABLE_STATUSES:
        return []
    reasons: list[ReviewReason] = []
    if flagged_fields(document.get("evidence")):
        reasons.append("flaggedField")
    if document.get("processingStatus") == "warning":
        reasons.append("processingWarning")
    if document.get("duplicateOf"):
        reasons.append("possibleDuplicate")
    if document.get("amount") is None:
        reasons.append("noAmount")
    return reasons


def review_state(document: Mapping[str, Any]) -> dict[str, Any]:
    """The stored ``needsReview`` and ``reviewReasons`` of ``document`` as it now is: it needs
    review for any reason its last review (``reviewAccepted``) did not accept."""
    reasons = review_reasons(document)
    accepted = set(document.get("reviewAccepted") or ())
    return {
        "needsReview": any(reason not in accepted for reason in reasons),
        "reviewReasons": reasons,
    }


# What each value means (the GraphQL enum values' descriptions read it).
REVIEW_REASON_MEANINGS = vocabulary(
    ReviewReason,
    {
        "flaggedField": "A field read with low confidence, or whose evidence warns",
        "processingWarning": "Processing ended with a warning (processingReason says what)",
        "possibleDuplicate": "It may repeat another document (duplicateOf)",
        "noAmount": "No total was found",
    },
)
