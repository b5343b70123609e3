"""The total, subtotal and tax of a document, checked against each other.

Each line is classified by its label (total, subtotal, tax, payment, other) and gives the
amount printed at its right, or on the next line when OCR split the row. The total is the
best-scored total line; a candidate that equals subtotal + tax, or that the customer
paid (cash / card line with the same amount), scores higher.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from .money import find_amounts, last_amount

STRONG_TOTAL = re.compile(
    r"grand\s*total|total\s*(amount|due|payable|to\s*pay|incl|inc\b|\(incl|rm|rounded|sales|"
    r"eur|usd|ttc|\(rm\))|amount\s*(due|payable)|balance\s*due|invoice\s*total|"
    r"zu\s*zahlen|gesamtbetrag|endbetrag|rechnungsbetrag|summe|total\s*:|te\s*betalen|"
    r"totaal|montant\s*ttc|net\s*total|nett\s*total|total\s*net\s*amount|jumlah",
    re.I,
)
TOTAL = re.compile(r"total|gesamt|betrag|totaal|amount", re.I)
SUBTOTAL = re.compile(
    r"sub\s*-?\s*total|zwischensumme|total\s*(excl|ex\b|before|w/o|excluding|ht\b)|"
    r"net\s*amount|amount\s*untaxed|netto|total\s*exclusive|subtotaal|excl\.?\s*(btw|vat)",
    re.I,
)
TAX = re.compile(r"\b(tax|gst|vat|mwst|ust|btw|tva|iva|sst|hst|pst)\b|steuer|gst\s*\d|\d\s*%", re.I)
# Lines whose amount is never the total even though they say "total".
NOT_TOTAL = re.compile(
    r"total\s*(qty|quantity|items?|discount|savings|saved|tax|gst|vat|excl|number|no\b|"
    r"pcs|weight|points)|rounding|change|rückgeld|wechselgeld|discount|rabatt|item\s*count|"
    r"tendered|balance\s*(brought|forward)|previous|saved|you\s*save|points",
    re.I,
)
PAID = re.compile(
    r"cash|bar\b|visa|master|card|karte|girocard|debit|credit|paid|bezahlt|tunai|payment|"
    r"gegeben",
    re.I,
)
CENT = Decimal("0.01")
TAX_TABLE = re.compile(r"(gst|tax|vat|mwst)\s*summary|\d\s*%|@\s*\d|mwst|netto", re.I)


@dataclass(frozen=True)
class Totals:
    amount: Decimal | None
    subtotal: Decimal | None
    tax: Decimal | None
    source: str | None  # "total-line", "subtotal+tax", "largest"
    consistent: bool | None


@dataclass(frozen=True)
class Candidate:
    value: Decimal
    line_index: int
    score: float


def find_totals(lines: list[str]) -> Totals:
    """Find total, subtotal and tax amounts and check that they agree."""
    subtotal = _first_labelled(lines, SUBTOTAL, exclude=None)
    tax = _tax_amount(lines)
    paid = {value for line in lines if PAID.search(line) for value in _line_values(line)}
    candidates = _total_candidates(lines)
    best: Candidate | None = None
    for candidate in candidates:
        score = candidate.score
        if subtotal is not None and tax is not None and subtotal + tax == candidate.value:
            score += 3
        if subtotal is not None and tax is None and candidate.value == subtotal:
            score += 0.5  # untaxed invoices print the same amount twice
        if candidate.value in paid:
            score += 1.5
        if best is None or score > best.score:
            best = Candidate(candidate.value, candidate.line_index, score)
    if best is not None:
        return Totals(
            best.value, subtotal, tax, "total-line", _consistent(best.value, subtotal, tax)
        )
    if subtotal is not None and tax is not None:
        return Totals(subtotal + tax, subtotal, tax, "subtotal+tax", True)
    largest = _largest_amount(lines)
    if largest is not None:
        return Totals(largest, subtotal, tax, "largest", _consistent(largest, subtotal, tax))
    return Totals(None, subtotal, tax, None, None)


def _total_candidates(lines: list[str]) -> list[Candidate]:
    found = []
    count = len(lines)
    for index, line in enumerate(lines):
        if not is_total_label(line):
            continue
        value = _amount_here_or_below(lines, index)
        if value is None or value <= 0:
            continue
        strong = bool(STRONG_TOTAL.search(line))
        penalty = 0.0
        recent = lines[max(0, index - 3) : index]
        if len(find_amounts(line)) >= 2 and any(TAX_TABLE.search(above) for above in recent):
            # The "Total" row of a GST/VAT summary table ends in the tax column, not the
            # amount paid; it sits below the real total, so position alone would pick it.
            penalty = 2.5
        # Totals sit in the lower part of a document; headers ("Total amount" column
        # titles) sit higher. Later lines win ties.
        position = index / max(1, count - 1)
        found.append(Candidate(value, index, (2.0 if strong else 1.0) + position - penalty))
    return found


def is_total_label(line: str) -> bool:
    """True for a line labelled as the total (not subtotal, not 'total qty')."""
    if SUBTOTAL.search(line) or NOT_TOTAL.search(line):
        return False
    return bool(STRONG_TOTAL.search(line) or TOTAL.search(line))


def _amount_here_or_below(lines: list[str], index: int) -> Decimal | None:
    value = last_amount(lines[index])
    if value is None and index + 1 < len(lines) and not is_total_label(lines[index + 1]):
        value = last_amount(lines[index + 1])
    return value


def _first_labelled(
    lines: list[str], label: re.Pattern[str], exclude: re.Pattern[str] | None
) -> Decimal | None:
    for index, line in enumerate(lines):
        if label.search(line) and not (exclude and exclude.search(line)):
            value = _amount_here_or_below(lines, index)
            if value is not None and value >= 0:
                return value
    return None


def _tax_amount(lines: list[str]) -> Decimal | None:
    """The tax line's amount; several tax lines (7 % and 19 %) are added up."""
    values: list[Decimal] = []
    for index, line in enumerate(lines):
        if not TAX.search(line) or SUBTOTAL.search(line) or re.search(r"\bid\b|reg", line, re.I):
            continue
        if STRONG_TOTAL.search(line) and not re.search(r"total\s*(tax|gst|vat)", line, re.I):
            continue
        value = _amount_here_or_below(lines, index)
        if value is not None and value >= 0:
            values.append(value)
    if not values:
        return None
    # Receipts often repeat the tax in a summary table: don't double count equal values.
    return sum(dict.fromkeys(values), Decimal(0)).quantize(CENT)


def _line_values(line: str) -> list[Decimal]:
    return [token.value for token in find_amounts(line)]


def _largest_amount(lines: list[str]) -> Decimal | None:
    values = [
        value
        for line in lines
        if not NOT_TOTAL.search(line)
        for value in _line_values(line)
        if value > 0
    ]
    return max(values) if values else None


def _consistent(amount: Decimal, subtotal: Decimal | None, tax: Decimal | None) -> bool | None:
    if subtotal is None or tax is None:
        return None
    return subtotal + tax == amount
