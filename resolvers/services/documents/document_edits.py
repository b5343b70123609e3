"""What a correction changes: the one builder of edit-history entries (documents.update,
documents.bulk-edit and rules record their changes through it), the summary made again
when a correction changes what it says, and the amounts checked against each other."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from engines.extraction.fields import describe
from engines.extraction.fields.secondary import check_amounts
from persistence.documents import EditEntry
from resolvers.services.documents.document_views import jsonable


def edit_entries(
    current: Mapping[str, Any],
    changes: Mapping[str, Any],
    *,
    by: str,
    via: str,
    at: datetime,
) -> list[EditEntry]:
    """One entry per field of ``changes`` whose value differs from ``current`` (API-level
    values, compared as the API shows them: 4.1 and Decimal("4.10") are the same)."""
    entries: list[EditEntry] = []
    for name, value in changes.items():
        old, new = jsonable(current.get(name)), jsonable(value)
        if old != new:
            entries.append(
                EditEntry(field=name, oldValue=old, newValue=new, editedBy=by, editedAt=at, via=via)
            )
    return entries


# What the extracted summary says ("Receipt from Shell dated 2024-03-14 for 13.50 EUR.").
SUMMARY_FIELDS = ("docType", "merchant", "docDate", "amount", "currency")


def with_summary(current: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """``changes``, plus the summary made again from the corrected values when they change
    what the summary says and it is still the one extraction wrote (a summary a person wrote
    or corrected is theirs, a change that sets ``summary`` itself wins, and a document with
    no summary gets none)."""
    out = dict(changes)
    if "summary" in changes or not any(name in changes for name in SUMMARY_FIELDS):
        return out
    written = current.get("summary")
    if written is None or written not in _summaries(current):
        return out  # no summary to keep up to date, or one a person wrote
    after = _summaries({**current, **changes})[0]
    if after != written:
        out["summary"] = after
    return out


def _summaries(values: Mapping[str, Any]) -> list[str]:
    """The summary of ``values``, its amount spelt in cents as money is stored (first), and
    as extraction may have printed it (13.5, 1200)."""
    amount = _decimal(values.get("amount"))
    spellings = [amount] if amount is None else [_cents(amount), amount, amount.normalize()]
    when = values.get("docDate")
    day = when if isinstance(when, date) else _date(when)
    return [
        describe(values.get("docType"), values.get("merchant"), day, spelt, values.get("currency"))
        for spelt in dict.fromkeys(spellings)
    ]


# The amounts a correction is checked against each other, and the fields a failed check flags
# (the checks' names → the API's).
AMOUNT_FIELDS = ("amount", "subtotal", "taxAmount", "tipAmount", "lineItems", "taxLines")
FLAGGED_BY_CHECK = {
    "subtotal": "subtotal",
    "tax_amount": "taxAmount",
    "line_items": "lineItems",
    "tax_lines": "taxLines",
}


def checked_evidence(
    evidence: list[dict[str, Any]], values: Mapping[str, Any], edited: set[str]
) -> list[dict[str, Any]]:
    """``evidence`` with the amount checks of ``values`` (API-level, after a correction of
    ``edited``): a field that does not add up carries a warning saying what (the values stay
    as the person wrote them: never a silent change of the total), one that does now loses
    an earlier warning."""
    warnings = check_amounts(
        _decimal(values.get("amount")),
        _decimal(values.get("subtotal")),
        _decimal(values.get("taxAmount")),
        _decimal(values.get("tipAmount")),
        [_decimal(item.get("amount")) for item in values.get("lineItems") or []],
        [
            (_decimal(line.get("rate")), _decimal(line.get("net")), tax)
            for line in values.get("taxLines") or []
            if (tax := _decimal(line.get("tax"))) is not None
        ],
    )
    flagged = {FLAGGED_BY_CHECK[name]: text for name, text in warnings.items()}
    out: list[dict[str, Any]] = []
    for entry in evidence:
        name = entry.get("field")
        if name in FLAGGED_BY_CHECK.values():
            entry = {key: value for key, value in entry.items() if key != "warning"}
            if name in flagged:
                entry["warning"] = flagged.pop(name)
        out.append(entry)
    for name, text in flagged.items():  # a field no evidence spoke of yet
        certain = name in edited
        out.append(
            {
                "field": name,
                "confidence": 1.0 if certain else 0.5,
                "source": "edited" if certain else "check",
                "warning": text,
            }
        )
    return out


def _decimal(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _cents(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"))


def _date(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, str):
        try:
            return date.fromisoformat(value[:10])
        except ValueError:
            return None
    return None
