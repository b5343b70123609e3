"""Which extracted fields a person should check, and why.

A document whose amount or date was read with a confidence below ``WARNING_CONFIDENCE``
(or not found at all) ends processing with status ``warning`` and this reason, so people
know what to look at. The threshold sits where the cross-validated confidences of the dev
set separate right from wrong readings: about 98 % of amounts at or above it are right,
about three in four below it (``bench/extraction.py`` prints the figures).
"""

from __future__ import annotations

from .fields import ParsedFields

WARNING_CONFIDENCE = 0.8
# The fields a financial record cannot do without.
CHECKED = (("amount", "amount"), ("doc_date", "date"))


def review_reason(fields: ParsedFields) -> str | None:
    """A sentence naming the weak core fields, or None when they look right."""
    problems = []
    for name, label in CHECKED:
        confidence = fields.confidence(name)
        if confidence is None:
            problems.append(f"no {label} found")
        elif confidence < WARNING_CONFIDENCE:
            evidence = fields.evidence[name]
            where = f" from '{evidence.text}'" if evidence.text else ""
            value = fields.amount if name == "amount" else fields.doc_date
            problems.append(f"{label} {value} read with low confidence ({confidence:.2f}){where}")
    if not problems:
        return None
    return "Please check: " + "; ".join(problems) + "."
