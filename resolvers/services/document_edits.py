"""What a correction changes: the one builder of edit-history entries (documents.update,
documents.bulk-edit and rules record their changes through it), and the summary made again
when a correction changes what it says."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from engines.extraction.fields import describe
from persistence.documents.edits import EditEntry
from resolvers.services.document_views import jsonable


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
