"""``parse_document``: the page layouts of a receipt or invoice in, its fields out.

The scored fields (amount, date, merchant, invoice number) each collect candidates with
features (``field_candidates``) and the fitted model picks one, with a confidence and the
evidence it was read from. The rest (currency, country, payment, line items, document
type) are read by rules. ``parse_fields`` takes plain text for callers without a layout.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from functools import cached_property
from typing import Any

from ..layout import PageLayout, layout_text, text_layout
from .consensus import AmountChecks, amount_checks
from .countries import Country
from .currency import detect_currency
from .dates import date_candidates
from .decide import LEGAL_NAME, OTHER_NUMBER, decide
from .doc_type import classify, non_financial_reason
from .field_types import LineItem, ParsedFields, ParseHints, TaxLine
from .identifiers import find_receipt_id, invoice_number_candidates
from .line_items import find_line_items
from .location import detect_country, detect_location
from .merchant import buyer_segments, merchant_candidates
from .payment import find_card_ending, find_payment_method
from .refunds import magnitudes, printed_negative, titled_refund
from .scoring import Candidate, Choice, FieldEvidence, load_models
from .secondary import settle_secondary
from .tax_ids import find_seller_tax_id
from .totals import Cell, cash_facts, read_cells, settle_totals, total_candidates
from .view import DocView

# Labels that name an invoice number as such ("Invoice No.", "Rechnungsnummer", an INVOICE
# title over "# 1042"). On a till slip only these make a number the invoice's: "Nr.",
# "Doc No" or "Beleg-Nr." there number the receipt.
INVOICE_LABELS = frozenset(
    f"{where}_{kind}" for where in ("label", "above", "beside") for kind in ("invoice", "title")
)
# On a till slip a title names a number only on its own row ("INVOICE # 1042"): the row under
# a "TAX INVOICE" heading is the first article, and its product code is no number of the slip.
RECEIPT_NUMBER_LABELS = INVOICE_LABELS - {"above_title"}
# What numbers a till slip at all: a number label of any kind but another's (customer, order).
SLIP_NUMBER_LABELS = frozenset(
    f"{where}_{kind}"
    for where in ("label", "above", "beside")
    for kind in ("invoice", "title", "document", "number")
)
# The confidence of a value the document's other amounts dispute: under the warning threshold,
# so a person looks (``review``), whatever the value's own reading said.
FLAGGED = 0.5
TOTAL_FEATURES = frozenset(
    f"{where}_{kind}" for where in ("cell", "row", "above") for kind in ("total_strong", "total")
)


@dataclass
class Context:
    """What every finder may use: the layout view, the country and the caller's hints."""

    view: DocView
    text: str
    hints: ParseHints
    country: Country | None
    today: date

    @cached_property
    def printed_cells(self) -> list[Cell]:
        return read_cells(self.view)

    @cached_property
    def printed_negative(self) -> bool:
        """Every labelled total is printed below zero: a refund (``refunds``)."""
        return printed_negative(self.printed_cells)

    @cached_property
    def cells(self) -> list[Cell]:
        """The amounts as the finders read them: a refund's as their magnitudes."""
        cells = self.printed_cells
        return magnitudes(cells) if self.printed_negative else cells

    @cached_property
    def checks(self) -> AmountChecks:
        """What the document's other amounts say its total is (``consensus``)."""
        return amount_checks(self.view, self.cells, self.printed_negative)


def read_context(pages: Sequence[PageLayout], hints: ParseHints) -> Context:
    text = layout_text(pages)
    country = detect_country(text.upper(), hints)
    return Context(DocView(pages), text, hints, country, hints.today or date.today())


def field_candidates(context: Context) -> dict[str, list[Candidate]]:
    """The candidates of every scored field (the bench fits the models on these)."""
    view = context.view
    return {
        "amount": total_candidates(view, context.cells),
        "doc_date": date_candidates(view, _date_order(context), context.today),
        "merchant": merchant_candidates(view, context.country.code if context.country else None),
        "invoice_id": invoice_number_candidates(view),
    }


def parse_document(
    pages: Sequence[PageLayout], hints: ParseHints | Mapping[str, Any] | None = None
) -> ParsedFields:
    """Parse the fields of a receipt or invoice from its page layouts."""
    context = read_context(pages, _hints(hints))
    candidates = field_candidates(context)
    choices = decide(load_models(), candidates, context.cells, context.today, context.checks)
    return assemble(context, choices)


def assemble(context: Context, choices: Mapping[str, Choice | None]) -> ParsedFields:
    """The fields from the chosen candidates and the rule-based readers."""
    view = context.view
    lines = view.texts
    evidence: dict[str, FieldEvidence] = {}
    values: dict[str, Any] = {}
    for name, choice in choices.items():
        if choice is None or (
            name == "invoice_id" and OTHER_NUMBER & choice.candidate.features.keys()
        ):
            continue
        if name == LEGAL_NAME:
            values[name] = choice.candidate.value
            evidence[name] = choice.candidate.evidence(view, choice.confidence)
            continue
        values[name] = choice.candidate.value
        evidence[name] = choice.candidate.evidence(view, choice.confidence)
        if choice.warning:
            evidence[name] = dataclasses.replace(
                evidence[name], warning=choice.warning, confidence=min(choice.confidence, FLAGGED)
            )
    amount_choice = choices.get("amount")
    totals = settle_totals(values.get("amount"), context.cells)
    line_items = find_line_items(lines, (totals.subtotal, values.get("amount")))
    if context.printed_negative:  # read as magnitudes, like the totals
        line_items = tuple(_negated_item(item) for item in line_items)
    secondary = settle_secondary(
        view,
        values.get("amount"),
        totals.subtotal,
        totals.tax,
        sorted(cash_facts(context.cells).rounding),
        line_items,
        frozenset(cell.value for cell in context.cells),
        context.printed_negative,
    )
    evidence.update(secondary.evidence)
    for name, warning in secondary.warnings.items():
        found = evidence.get(name)
        evidence[name] = (
            dataclasses.replace(found, warning=warning, confidence=min(found.confidence, FLAGGED))
            if found is not None
            else FieldEvidence(FLAGGED, warning=warning, source="check")
        )
    currency = detect_currency(context.text, context.country, context.hints)
    if currency is not None:
        evidence["currency"] = FieldEvidence(
            currency.confidence, text=currency.evidence, source=currency.source
        )
    merchant_choice = choices.get("merchant")
    brand = merchant_choice.candidate.payload if merchant_choice and "merchant" in values else None
    has_total_line = bool(
        amount_choice is not None and TOTAL_FEATURES & set(amount_choice.candidate.features)
    )
    amount_count = len(context.cells)
    reason = non_financial_reason(context.text, amount_count, has_total_line)
    invoice_choice = choices.get("invoice_id")
    named_invoice = bool(
        invoice_choice is not None and INVOICE_LABELS & set(invoice_choice.candidate.features)
    )
    doc_type = classify(context.text, amount_count > 0, has_total_line, named_invoice)
    receipt_id = find_receipt_id(lines)
    if doc_type == "receipt" and "invoice_id" in values:
        assert invoice_choice is not None
        features = set(invoice_choice.candidate.features)
        if not receipt_id and (features - {"above_title"}) & SLIP_NUMBER_LABELS:
            # Till slips titled "Invoice No." (common in Malaysia) number the receipt too, and
            # "Beleg-Nr." or "Doc No" number it anyway.
            receipt_id = values["invoice_id"]
        if not RECEIPT_NUMBER_LABELS & features:
            del values["invoice_id"]
            evidence.pop("invoice_id", None)
    tax_id = find_seller_tax_id(view, buyer_segments(view, windows=False))
    if tax_id is not None:
        evidence["merchant_tax_id"] = tax_id.evidence(view)
    fields = ParsedFields(
        merchant=values.get("merchant"),
        merchant_legal_name=values.get(LEGAL_NAME),
        merchant_tax_id=tax_id.value if tax_id is not None else None,
        doc_date=values.get("doc_date"),
        amount=values.get("amount"),
        subtotal=secondary.subtotal,
        tax_amount=secondary.tax,
        tip_amount=secondary.tip,
        tax_lines=secondary.tax_lines,
        currency=currency.code if currency else None,
        invoice_id=values.get("invoice_id"),
        receipt_id=receipt_id,
        payment_method=find_payment_method(lines),
        payment_method_ending=find_card_ending(lines),
        line_items=line_items,
        expense_location=detect_location(context.text.upper(), context.country),
        doc_type="other" if reason else doc_type,
        financial=reason is None,
        skip_reason=reason,
        totals_consistent=totals.consistent and "subtotal" not in secondary.warnings,
        evidence=evidence,
        brand=brand.name if brand is not None else None,
        brand_category=brand.category if brand is not None else None,
    )
    if fields.financial and (context.printed_negative or titled_refund(view)):
        fields = money_back(fields)
    return dataclasses.replace(fields, summary=summary(fields))


def money_back(fields: ParsedFields) -> ParsedFields:
    """A refund or credit note: its amounts negative (each read as a magnitude), its type."""
    return dataclasses.replace(
        fields,
        amount=_minus(fields.amount),
        subtotal=_minus(fields.subtotal),
        tax_amount=_minus(fields.tax_amount),
        tip_amount=_minus(fields.tip_amount),
        tax_lines=tuple(
            TaxLine(line.rate, _minus(line.net), -abs(line.tax)) for line in fields.tax_lines
        ),
        line_items=tuple(
            dataclasses.replace(item, amount=_minus(item.amount)) for item in fields.line_items
        ),
        doc_type="credit-note" if fields.doc_type == "invoice" else "refund",
    )


def _minus(value: Decimal | None) -> Decimal | None:
    return -abs(value) if value is not None else None


def _negated_item(item: LineItem) -> LineItem:
    return dataclasses.replace(item, amount=-item.amount if item.amount is not None else None)


def summary(fields: ParsedFields) -> str:
    if not fields.financial:
        return f"Not a financial document: {fields.skip_reason}."
    return describe(
        fields.doc_type, fields.merchant, fields.doc_date, fields.amount, fields.currency
    )


def describe(
    doc_type: str | None,
    merchant: str | None,
    doc_date: date | None,
    amount: Decimal | None,
    currency: str | None,
) -> str:
    """The one-line summary of a financial document: "Receipt from Shell dated 2024-03-14
    for 13.50 EUR." (also made again when a person corrects one of these fields)."""
    parts = [(doc_type or "document").replace("-", " ").capitalize()]
    if merchant:
        parts.append(f"from {merchant}")
    if doc_date:
        parts.append(f"dated {doc_date.isoformat()}")
    if amount is not None:
        parts.append(f"for {amount}{' ' + currency if currency else ''}")
    return " ".join(parts) + "."


def parse_fields(
    text: str | Sequence[PageLayout], hints: ParseHints | Mapping[str, Any] | None = None
) -> ParsedFields:
    """Parse the fields of a receipt or invoice from its text (or its page layouts).

    ``hints`` is a ``ParseHints`` or a mapping with the same keys (``country_code``,
    ``currency``, ``today``); unknown keys are ignored so callers can pass their context.
    """
    if isinstance(text, str):
        pages = [text_layout(page, number) for number, page in enumerate(text.split("\f"), 1)]
        return parse_document(pages, hints)
    return parse_document(text, hints)


def has_core_fields(text: str) -> bool:
    """True when the text yields a total read from a total label, and a date.

    The OCR plan uses this to decide whether a cheap reading is good enough.
    """
    fields = parse_fields(text)
    amount = fields.evidence.get("amount")
    return fields.doc_date is not None and amount is not None and amount.confidence >= 0.5


def _date_order(context: Context) -> str:
    if context.country is not None:
        return context.country.date_order
    currency = detect_currency(context.text, None, context.hints)
    # Without a country, "$" alone most often means a US document.
    return "MDY" if currency is not None and currency.code == "USD" else "DMY"


def _hints(hints: ParseHints | Mapping[str, Any] | None) -> ParseHints:
    if hints is None:
        return ParseHints()
    if isinstance(hints, ParseHints):
        return hints
    known = {f.name for f in dataclasses.fields(ParseHints)}
    aliases = {"countryCode": "country_code", "country": "country_code"}
    cleaned = {aliases.get(k, k): v for k, v in hints.items()}
    return ParseHints(**{k: v for k, v in cleaned.items() if k in known})
