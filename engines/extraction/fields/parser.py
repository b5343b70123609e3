"""``parse_fields``: OCR or PDF text in, the fields of a receipt or invoice out.

A pipeline of small steps over one draft; each step reads what earlier steps found
(dates need the country and currency, the summary needs everything).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from .countries import Country
from .currency import detect_currency
from .dates import find_doc_date
from .doc_type import classify, non_financial_reason
from .field_types import ParsedFields, ParseHints
from .identifiers import find_invoice_id, find_receipt_id
from .line_items import find_line_items
from .location import detect_country, detect_location
from .merchant import find_merchant
from .money import find_amounts
from .payment import find_card_ending, find_payment_method
from .totals import find_totals


@dataclass
class Draft:
    """What the steps share: the input, and the fields found so far."""

    lines: list[str]
    text: str
    upper: str
    hints: ParseHints
    country: Country | None = None
    values: dict[str, Any] = field(default_factory=dict)


def step_country_and_currency(draft: Draft) -> None:
    draft.country = detect_country(draft.upper, draft.hints)
    draft.values["currency"] = detect_currency(draft.text, draft.country, draft.hints)
    draft.values["expense_location"] = detect_location(draft.upper, draft.country)


def step_date(draft: Draft) -> None:
    today = draft.hints.today or date.today()
    draft.values["doc_date"] = find_doc_date(draft.lines, _date_order(draft), today)


def step_totals(draft: Draft) -> None:
    totals = find_totals(draft.lines)
    draft.values.update(
        amount=totals.amount,
        subtotal=totals.subtotal,
        tax_amount=totals.tax,
        amount_source=totals.source,
        totals_consistent=totals.consistent,
    )


def step_identifiers(draft: Draft) -> None:
    draft.values["invoice_id"] = find_invoice_id(draft.lines)
    draft.values["receipt_id"] = find_receipt_id(draft.lines)


def step_payment(draft: Draft) -> None:
    draft.values["payment_method"] = find_payment_method(draft.lines)
    draft.values["payment_method_ending"] = find_card_ending(draft.lines)


def step_merchant_and_items(draft: Draft) -> None:
    draft.values["merchant"] = find_merchant(draft.lines)
    draft.values["line_items"] = find_line_items(draft.lines)


def step_doc_type(draft: Draft) -> None:
    amount_count = sum(len(find_amounts(line)) for line in draft.lines)
    has_total_line = draft.values.get("amount_source") in {"total-line", "subtotal+tax"}
    reason = non_financial_reason(draft.text, amount_count, has_total_line)
    doc_type = classify(draft.text, amount_count > 0, has_total_line)
    if (
        doc_type == "receipt"
        and draft.values.get("invoice_id")
        and not draft.values.get("receipt_id")
    ):
        # Till slips titled "Invoice No." (common in Malaysia) still carry a receipt number.
        draft.values["receipt_id"] = draft.values["invoice_id"]
    draft.values.update(
        doc_type="other" if reason else doc_type, financial=reason is None, skip_reason=reason
    )


def step_summary(draft: Draft) -> None:
    values = draft.values
    if not values["financial"]:
        values["summary"] = f"Not a financial document: {values['skip_reason']}."
        return
    parts = [values["doc_type"].capitalize()]
    if values.get("merchant"):
        parts.append(f"from {values['merchant']}")
    if values.get("doc_date"):
        parts.append(f"dated {values['doc_date'].isoformat()}")
    if values.get("amount") is not None:
        parts.append(
            f"for {values['amount']}{' ' + values['currency'] if values.get('currency') else ''}"
        )
    values["summary"] = " ".join(parts) + "."


STEPS: tuple[Callable[[Draft], None], ...] = (
    step_country_and_currency,
    step_date,
    step_totals,
    step_identifiers,
    step_payment,
    step_merchant_and_items,
    step_doc_type,
    step_summary,
)
FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(ParsedFields))


def parse_fields(text: str, hints: ParseHints | Mapping[str, Any] | None = None) -> ParsedFields:
    """Parse the fields of a receipt or invoice from its text.

    ``hints`` is a ``ParseHints`` or a mapping with the same keys (``country_code``,
    ``currency``, ``today``); unknown keys are ignored so callers can pass their context.
    """
    resolved = _hints(hints)
    lines = [line.strip() for line in text.replace("\f", "\n").splitlines() if line.strip()]
    draft = Draft(lines=lines, text=text, upper=text.upper(), hints=resolved)
    for step in STEPS:
        step(draft)
    return ParsedFields(**{k: v for k, v in draft.values.items() if k in FIELD_NAMES})


def has_core_fields(text: str) -> bool:
    """True when the text yields a total from a labelled line and a date.

    The OCR plan uses this to decide whether a cheap reading is good enough.
    """
    fields = parse_fields(text)
    return fields.doc_date is not None and fields.amount_source in {"total-line", "subtotal+tax"}


def _date_order(draft: Draft) -> str:
    if draft.country is not None:
        return draft.country.date_order
    currency = draft.values.get("currency")
    # Without a country, "$" alone most often means a US document.
    return "MDY" if currency == "USD" else "DMY"


def _hints(hints: ParseHints | Mapping[str, Any] | None) -> ParseHints:
    if hints is None:
        return ParseHints()
    if isinstance(hints, ParseHints):
        return hints
    known = {f.name for f in dataclasses.fields(ParseHints)}
    aliases = {"countryCode": "country_code", "country": "country_code"}
    cleaned = {aliases.get(k, k): v for k, v in hints.items()}
    return ParseHints(**{k: v for k, v in cleaned.items() if k in known})
