"""Which extracted fields a person should check, and why.

A page read a second time because the first reading found nothing says so first.

A document whose amount or date was read with a confidence below ``WARNING_CONFIDENCE``
(or not found at all), or whose amounts do not add up (a field's evidence carries a
``warning``: the lines against the subtotal, subtotal and tax against the total), ends
processing with status ``warning`` and this reason, so people know what to look at.
Confidences are calibrated probabilities of being right, so the threshold is a policy, not a
fit: a value with more than a one-in-five chance of being wrong is worth a person's look.
``bench/extraction.py`` prints how many wrong values it catches and how many right ones it
flags.
"""

from __future__ import annotations

from domain.review import REVIEW_CONFIDENCE

from .fields import ParsedFields

# The review queue's threshold (``domain.review``): what processing warns about is what it lists.
WARNING_CONFIDENCE = REVIEW_CONFIDENCE
# The fields a financial record cannot do without.
CHECKED = (("amount", "amount"), ("doc_date", "date"))


def review_reason(fields: ParsedFields) -> str | None:
    """A sentence naming the weak core fields and what does not add up, or None when they
    look right."""
    problems = []
    for name, label in CHECKED:
        confidence = fields.confidence(name)
        if confidence is None:
            problems.append(f"no {label} found")
        elif fields.evidence[name].warning:
            continue  # said below, in the check's own words
        elif confidence < WARNING_CONFIDENCE:
            evidence = fields.evidence[name]
            where = f" from '{evidence.text}'" if evidence.text else ""
            value = fields.amount if name == "amount" else fields.doc_date
            problems.append(f"{label} {value} read with low confidence ({confidence:.2f}){where}")
    # Subtotal and tax may share one sentence: each is said once.
    problems += dict.fromkeys(found.warning for found in fields.evidence.values() if found.warning)
    note = f"{fields.reading_note} " if fields.reading_note else ""
    if not problems:
        # A page that needed a second reading is worth a look even when it then read well.
        return note.strip() or None
    return note + "Please check: " + "; ".join(problems) + "."
