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
# OCR misreads "Total" as "lotal", "Totai", "T0tal" or "Tota1"; a bare "Due" labels the total
# on some till slips.
TOTAL = re.compile(r"[tl7][o0]ta[l1i]|gesamt|betrag|totaal|amount|\bdue\b", re.I)
# "Total after rounding" is the total even though "rounding" lines usually are not.
ROUNDED_TOTAL = re.compile(r"total\s*(after\s*)?round|round(ed|ing)?\s*total", re.I)
# Column titles of an item or tax table: a label line made of these carries no amount of
# its own, so the amount on the next line is a table cell, not the total.
TABLE_HEADER = re.compile(r"summary|analysis|\bqty\b|\bdesc|\bitem|\bcode\b|\bgoods\b", re.I)
# The customer's payment and the change handed back: tendered − change = total.
TENDERED = re.compile(r"cash|tender|tunai|\bbar\b|gegeben|\bpaid\b|\bpay\b|\bfay\b", re.I)
CHANGE = re.compile(r"change|\bbaki\b|rückgeld|wechselgeld", re.I)
ROUNDING = re.compile(r"round(ing)?\s*(adj|adjustment)?|rundung", re.I)
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
FIVE_CENTS = Decimal("0.05")
# The title of a tax summary table ("GST Summary", "GST Analysis"): a "Total" row shortly
# below it totals that table.
TAX_SUMMARY = re.compile(r"(gst|tax|vat|mwst)\s*(summary|analysis)", re.I)
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
    tendered_minus_change = _tendered_minus_change(lines)
    counts = _amount_counts(lines)
    steps = _rounding_steps(lines)
    sums: set[Decimal] = set()
    if subtotal is not None and tax is not None:
        # Subtotal + tax, or that plus the printed cash rounding ("ROUNDING -0.02").
        sums = {subtotal + tax + step for step in (Decimal(0), *steps, *(-s for s in steps))}
    candidates = _total_candidates(lines)
    best: Candidate | None = None
    for candidate in candidates:
        score = candidate.score
        if subtotal is not None and tax is not None and candidate.value in sums:
            score += 3
        if subtotal is not None and tax is None and candidate.value == subtotal:
            score += 0.5  # untaxed invoices print the same amount twice
        if candidate.value in paid:
            score += 1.5
        if candidate.value in tendered_minus_change:
            score += 2  # cash 100.00, change 22.80: the total was 77.20
        # The total is printed more than once (total, rounded total, card slip); a stray
        # amount that merely says "total" nearby usually is not.
        score += 0.3 * min(2, counts.get(candidate.value, 1) - 1)
        if _looks_like_tax(lines[candidate.line_index], candidate.value, candidates):
            # "GST @6% included in total RM 2.88": the tax, worded around "total".
            score -= 3
        if best is None or score > best.score:
            best = Candidate(candidate.value, candidate.line_index, score)
    if best is not None:
        amount = _rounded(best.value, steps, paid | tendered_minus_change, counts)
        return Totals(amount, subtotal, tax, "total-line", _consistent(amount, subtotal, tax))
    if subtotal is not None and tax is not None:
        return Totals(subtotal + tax, subtotal, tax, "subtotal+tax", True)
    largest = _largest_amount(lines)
    if largest is not None:
        return Totals(largest, subtotal, tax, "largest", _consistent(largest, subtotal, tax))
    return Totals(None, subtotal, tax, None, None)


def _looks_like_tax(line: str, value: Decimal, candidates: list[Candidate]) -> bool:
    """A total-labelled line that names a tax and is a small share of another total."""
    if not TAX.search(line):
        return False
    return any(other.value >= 4 * value for other in candidates)


def _tendered_minus_change(lines: list[str]) -> set[Decimal]:
    tendered = [
        value
        for line in lines
        if TENDERED.search(line) and not CHANGE.search(line)
        for value in _line_values(line)
        if value > 0
    ]
    change = [
        value
        for index, line in enumerate(lines)
        if CHANGE.search(line) and not TENDERED.search(line)
        for value in [_amount_here_or_below(lines, index)]
        if value is not None and value >= 0
    ]
    return {paid - back for paid in tendered for back in change if paid - back > 0}


def _amount_counts(lines: list[str]) -> dict[Decimal, int]:
    counts: dict[Decimal, int] = {}
    for line in lines:
        for value in _line_values(line):
            counts[abs(value)] = counts.get(abs(value), 0) + 1
    return counts


# A rounding adjustment as printed, including OCR's ".01" and "- 0.02" (no leading zero).
ROUNDING_VALUE = re.compile(r"(?P<sign>-)?\s*(?:RM|\$|€)?\s*(?P<units>\d*)[.,](?P<cents>\d{2})\s*$")


def _rounding_steps(lines: list[str]) -> list[Decimal]:
    """Printed cash-rounding adjustments (always under one unit), unsigned."""
    steps = []
    for line in lines:
        if not ROUNDING.search(line) or ROUNDED_TOTAL.search(line):
            continue
        match = ROUNDING_VALUE.search(line)
        if match:
            step = Decimal(f"{match.group('units') or 0}.{match.group('cents')}")
            if 0 < step < 1:
                steps.append(step)
    return steps


def _rounded(
    value: Decimal, steps: list[Decimal], paid: set[Decimal], counts: dict[Decimal, int]
) -> Decimal:
    """Apply a printed rounding adjustment when the rounded amount is what was paid.

    Malaysian (and Swiss, Dutch, ...) tills round cash totals to 5 cents on a separate
    line; when the chosen total lacks it, the paid or repeated amount shows which way
    (OCR often drops the sign of the adjustment).
    """
    if value in paid:
        return value
    for step in steps:
        for adjusted in (value + step, value - step):
            # Cash rounding lands on a multiple of 5 cents; anything else is a misread.
            if adjusted % FIVE_CENTS != 0:
                continue
            if adjusted in paid or counts.get(adjusted, 0) >= 2:
                return adjusted
    return value


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
        # Its title sits above a column header, a units row and the rates.
        in_tax_table = any(TAX_SUMMARY.search(above) for above in lines[max(0, index - 5) : index])
        if in_tax_table or (
            len(find_amounts(line)) >= 2 and any(TAX_TABLE.search(above) for above in recent)
        ):
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
    if SUBTOTAL.search(line):
        return False
    if ROUNDED_TOTAL.search(line):
        return True
    if NOT_TOTAL.search(line):
        return False
    return bool(STRONG_TOTAL.search(line) or TOTAL.search(line))


def _amount_here_or_below(lines: list[str], index: int) -> Decimal | None:
    line = lines[index]
    value = last_amount(line)
    if (
        value is None
        and index + 1 < len(lines)
        and not is_total_label(lines[index + 1])
        # "Payment Mode Amount" / "CASH 58.20": a payment row is not the label's amount.
        and not PAID.search(lines[index + 1])
        and _label_only(line)
    ):
        value = last_amount(lines[index + 1])
    return value


def _label_only(line: str) -> bool:
    """A short label whose amount OCR put on the next line ("TOTAL" / "9.00").

    Column titles ("Code Desc Qty Amt", "GST Summary Amount Tax") are no such label: the
    next line is a table row. "Amount" alone is a common column title, so it is not enough.
    """
    if TABLE_HEADER.search(line) or len(line.split()) > 4:
        return False
    return not re.fullmatch(r"\W*amount\W*\w{0,3}\W*", line, re.I)


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
