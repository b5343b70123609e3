"""The secondary amounts of a document — tax per rate, tip — and whether the amounts add up.

**Tax lines.** A row with a tax label or a rate ("GST 6%", "MwSt 19 %", "A 7,0%", "SR @6%")
is read as one rate's tax. Its amounts are read the way such rows are printed: the net the
tax is on and the tax ("6% 35.00 2.10"), the tax and the gross ("19% 1,90 11,90"), all three
("A 19% 10,00 1,90 11,90"), or the tax alone ("VAT 20% 2.00"). Which amount is which is
decided by the rate — the tax is the rate's share of the net (or of the gross, when the rate
is included) — never by position alone: "GST 6% 35.00 2.10" is a net of 35.00 and a tax of
2.10, not a tax of 35.00. A rate row whose amounts fit no reading gives no tax line.

**Tip.** The amount after a tip label ("Tip", "Gratuity", "Trinkgeld", "Pourboire",
"Propina", "Fooi", "Mancia").

**Checks, never repairs.** The amounts of a receipt or invoice agree with each other: the
line items add up to the subtotal (or to the total, when the lines are printed with tax),
the subtotal and the tax (and the tip, and a printed cash rounding) to the total, each tax
to its rate of its net. Where they do not, the value read stays as it was read and is
flagged with a sentence saying what does not add up, so a person checks it — a wrong
subtotal or a lost line is never "fixed" into agreement silently.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from itertools import pairwise, product

from ..layout import TextLine
from .field_types import LineItem, TaxLine
from .labels import find_labels
from .money import find_amounts
from .scoring import FieldEvidence
from .view import DocView

# A rate: "6%", "19 %", "7,0%", "@6%", "20.00%". Between 0 and 30 percent: sales taxes.
RATE = re.compile(r"(?<![\d.,])(\d{1,2}(?:[.,]\d{1,2})?)\s?%")
TIP = re.compile(r"\b(?:tip|tips|gratuity|trinkgeld|pourboire|propina|fooi|mancia)\b", re.I)
# The number of articles a till prints under the total ("ANZAHL ARTIKEL 19", "Items: 3").
ITEM_COUNT = re.compile(
    r"(?:anzahl\s*(?:der\s*)?artikel|artikel\s*anzahl|artikelanzahl|anzahl\s*positionen|"
    r"qty\s*\(s\)|total\s*qty|"
    r"(?:no\.?|number)\s*of\s*items|total\s*items|item\s*count|items\s*sold|"
    r"nombre\s*d['’]articles|n[º°o]\.?\s*(?:de\s*)?art[íi]culos|aantal\s*artikelen|"
    r"numero\s*(?:di\s*)?articoli|bil(?:angan)?\s*item)\s*[:.]?\s*(\d{1,3})(?![\d.,])",
    re.I,
)
# A notice that no tax is charged: a small business exempt from VAT, an exempt supply, a
# reverse charge (the buyer accounts for the tax). The document's tax is then zero.
NO_TAX = re.compile(
    r"no\s+(?:vat|sales\s*tax|gst|tax)\s+(?:is\s+)?charged|not\s+(?:vat|gst)[\s-]*registered|"
    r"(?:vat|tax)[\s-]*exempt|exempt\s+from\s+(?:vat|tax)|reverse[\s-]*charge|"
    r"§\s*19\s*ustg|kleinunternehmer|keine\s+umsatzsteuer|umsatzsteuerfrei|"
    r"steuerschuldnerschaft\s+des\s+leistungsempf|"
    r"tva\s+non\s+applicable|293\s*b\s+du\s+cgi|exon[ée]r[ée]e?\s+de\s+tva|autoliquidation|"
    r"exent[oa]\s+de(?:l)?\s+iva|iva\s+exent[oa]|no\s+sujet[oa]\s+a(?:l)?\s+iva|"
    r"vrijgesteld\s+van\s+btw|btw\s+verlegd|"
    r"fuori\s+campo\s+iva|esente\s+iva|non\s+soggett[oa]\s+(?:ad\s+)?iva|regime\s+forfettario",
    re.I,
)
MAX_RATE = Decimal(30)
# A tax table's rate code before the rate: "A", "B", "SR", "ZR", "S", "1", "MwSt-A".
MAX_RATE_CODE = 3
# A tax is its rate's share of the net to the cent; a till rounds each line, so the sum of
# several may be a cent or two off.
TAX_TOLERANCE = Decimal("0.02")
# What a total may differ from its parts by: a printed cash rounding (under 5 cents) is
# checked separately; this is rounding of per-line taxes.
SUM_TOLERANCE = Decimal("0.02")
CENT = Decimal("0.01")
# The confidence of a subtotal or tax the total agrees with, and of one read under its label
# that nothing checks (no total, or no subtotal to add it to).
VERIFIED = 0.97
UNVERIFIED = 0.85
HUNDRED = Decimal(100)


@dataclass(frozen=True)
class ReadTaxLine:
    """A rate row's possible tax lines (a space-grouped amount, "1 930,33", reads two ways)
    and the row they were read from."""

    readings: tuple[TaxLine, ...]
    row: TextLine


@dataclass(frozen=True)
class Secondary:
    """The secondary fields and the warnings of the checks (by field name)."""

    tax_lines: tuple[TaxLine, ...]
    tax: Decimal | None
    subtotal: Decimal | None
    tip: Decimal | None
    warnings: dict[str, str]
    evidence: dict[str, FieldEvidence]


def read_tax_lines(view: DocView, magnitudes: bool = False) -> list[ReadTaxLine]:
    """The readings of each rate row that reads consistently (the same line printed twice,
    in a summary and beside the total, counts once). ``magnitudes``: a refund printed below
    zero, whose amounts are read without their signs."""
    found: list[ReadTaxLine] = []
    seen: set[tuple[Decimal | None, Decimal]] = set()
    for row in view.lines:
        rate_match = RATE.search(row.text)
        if rate_match is None:
            continue
        rate = _decimal(rate_match.group(1).replace(",", "."))
        if rate is None or rate > MAX_RATE:
            continue
        kinds = [label.kind for label in find_labels(row.text)]
        # A total row naming the rate it includes ("Total incl. 19% MwSt 11,90") is no tax
        # line; a tax label is, and so is a row of a tax table, which opens with its rate or
        # a rate code ("A 19% 10,00 1,90", "SR @6% 35.00 2.10"). An item row whose
        # description names a rate ("Design work (20%) 5 760.11 3,800.55") is neither.
        if kinds and kinds[0] in ("total_strong", "total", "subtotal"):
            continue
        opens_with_rate = len(row.text[: rate_match.start()].strip(" @=(")) <= MAX_RATE_CODE
        if "tax" not in kinds and not opens_with_rate:
            continue
        slots = _slots(row.text, rate_match.start(), rate_match.end())
        if magnitudes:
            slots = [[abs(value) for value in slot] for slot in slots]
        readings: list[TaxLine] = []
        for amounts in product(*slots):
            read = _reading(rate, [a for a in amounts if a >= 0], "tax" in kinds)
            if read is not None and read not in readings:
                readings.append(read)
        if not readings or (readings[0].rate, readings[0].tax) in seen:
            continue
        seen.add((readings[0].rate, readings[0].tax))
        found.append(ReadTaxLine(tuple(readings), row))
    return found


def _slots(text: str, rate_start: int, rate_end: int) -> list[list[Decimal]]:
    """The row's amounts outside the rate, each with its readings (plain first)."""
    slots: list[list[Decimal]] = []
    last_end = -1
    for token in find_amounts(text, whole=True):
        if rate_start <= token.start < rate_end or token.whole:
            continue
        if slots and token.start < last_end:
            slots[-1].append(token.value)
        else:
            slots.append([token.value])
        last_end = max(last_end, token.end)
    return slots[:4]


def _reading(rate: Decimal, amounts: Sequence[Decimal], labelled: bool) -> TaxLine | None:
    """The tax line a rate row's amounts make, or None when none fits the rate."""
    share = rate / HUNDRED
    if len(amounts) == 1:
        # "VAT 20% 2.00": a labelled rate and one amount is the tax itself (a rate row of a
        # table with one amount is a net or a gross; nothing says which).
        return TaxLine(rate, None, amounts[0]) if labelled else None
    for net, tax, gross in _triples(amounts):
        if abs(net * share - tax) <= TAX_TOLERANCE and abs(net + tax - gross) <= CENT:
            return TaxLine(rate, net, tax)
    for first, second in pairwise(amounts):
        # net then tax: "6% 35.00 2.10"; tax then net: "2.10 on 35.00".
        for net, tax in ((first, second), (second, first)):
            if tax < net and abs(net * share - tax) <= TAX_TOLERANCE and (tax or not rate):
                return TaxLine(rate, net, tax)
        # tax then gross, rate included: "19% 1,90 11,90"; gross then tax.
        for tax, gross in ((first, second), (second, first)):
            if tax < gross and abs(gross * share / (1 + share) - tax) <= TAX_TOLERANCE and tax:
                return TaxLine(rate, gross - tax, tax)
    return None


def _triples(amounts: Sequence[Decimal]) -> list[tuple[Decimal, Decimal, Decimal]]:
    return [(amounts[i], amounts[i + 1], amounts[i + 2]) for i in range(len(amounts) - 2)]


def _best(read: ReadTaxLine, subtotal: Decimal | None, total: Decimal | None, rows: int) -> TaxLine:
    """The reading of a rate row the other amounts agree with: its net the subtotal, or (a
    single rate) the subtotal and it making the total; else the plain reading."""
    for reading in read.readings:
        if subtotal is not None and reading.net == subtotal:
            return reading
        if (
            rows == 1
            and subtotal is not None
            and total is not None
            and abs(subtotal + reading.tax - total) <= SUM_TOLERANCE
        ):
            return reading
    return read.readings[0]


def read_tip(view: DocView) -> tuple[Decimal, TextLine] | None:
    """The amount on a tip row, when one is printed (a blank "Tip: ____" line has none)."""
    for row in view.lines:
        match = TIP.search(row.text)
        if match is None:
            continue
        amounts = [t for t in find_amounts(row.text, whole=True) if t.start > match.end()]
        if amounts and amounts[-1].value > 0:
            return amounts[-1].value, row
    return None


def settle_secondary(
    view: DocView,
    total: Decimal | None,
    subtotal: Decimal | None,
    tax: Decimal | None,
    rounding: Sequence[Decimal],
    line_items: Sequence[LineItem],
    printed: frozenset[Decimal] = frozenset(),
    magnitudes: bool = False,
) -> Secondary:
    """The tax per rate, the tax and subtotal they make, the tip, and what does not add up.

    ``subtotal`` and ``tax`` are what the totals' labels gave (``totals.settle_totals``);
    tax lines that read consistently replace a tax that disagrees with them. ``printed``:
    every amount printed on the document — a subtotal no label names ("Net total") is the
    total less the tax when that figure is printed.
    """
    tax_lines = read_tax_lines(view, magnitudes)
    warnings: dict[str, str] = {}
    evidence: dict[str, FieldEvidence] = {}
    lines = tuple(_best(read, subtotal, total, len(tax_lines)) for read in tax_lines)
    if lines:
        summed = sum((line.tax for line in lines), Decimal(0))
        nets = [line.net for line in lines]
        if tax != summed:
            # The label read another amount (the net beside "GST 6%", say): the rate decides
            # which of the row's amounts is the tax.
            tax = summed
        if subtotal is None and all(net is not None for net in nets):
            net_sum = sum((net for net in nets if net is not None), Decimal(0))
            if total is not None and _adds_up(net_sum + tax, total, rounding):
                subtotal = net_sum
    tip_read = read_tip(view)
    tip = tip_read[0] if tip_read is not None else None
    if tax is None and total is not None and any(NO_TAX.search(text) for text in view.texts):
        tax = Decimal("0.00")
        subtotal = subtotal if subtotal is not None else total - (tip or 0)
    if subtotal is None and tax is not None and total is not None:
        rest = total - tax - (tip or 0)
        if rest in printed and rest != total:
            subtotal = rest
    if tip_read is not None:
        evidence["tip_amount"] = _evidence(view, tip_read[1], 0.85, source="label")
    _check_parts(total, subtotal, tax, tip, rounding, warnings)
    _check_lines(
        total, subtotal, tip, [i.amount for i in line_items if i.amount is not None], warnings
    )
    _check_count(view, line_items, warnings)
    # The parts agree with the total: as sure as the total; read but unchecked: less.
    agree = total is not None and subtotal is not None and "subtotal" not in warnings
    for name, value in (("subtotal", subtotal), ("tax_amount", tax)):
        if value is None or name in warnings or name in evidence:
            continue
        row = _row_printing(view, value)
        confidence = VERIFIED if agree else UNVERIFIED
        evidence[name] = (
            _evidence(view, row, confidence, source="check" if agree else "label")
            if row is not None
            else FieldEvidence(confidence, source="check" if agree else "label")
        )
    if tax is not None and total is not None and total > 0 and tax * 2 > total:
        warnings.setdefault("tax_amount", f"the tax {tax} is more than half of the total {total}")
    return Secondary(lines, tax, subtotal, tip, warnings, evidence)


def _check_parts(
    total: Decimal | None,
    subtotal: Decimal | None,
    tax: Decimal | None,
    tip: Decimal | None,
    rounding: Sequence[Decimal],
    warnings: dict[str, str],
) -> None:
    if total is None or subtotal is None:
        return
    parts = subtotal + (tax or 0) + (tip or 0)
    if _adds_up(parts, total, rounding) or (tax is None and _adds_up(subtotal, total, rounding)):
        return
    # Prices that include the tax: the subtotal is the total already.
    if tax is not None and _adds_up(subtotal + (tip or 0), total, rounding):
        return
    named = " + ".join(
        f"{name} {value}"
        for name, value in (("subtotal", subtotal), ("tax", tax), ("tip", tip))
        if value is not None
    )
    message = f"{named} = {parts}, but the total is {total}"
    warnings["subtotal"] = message
    if tax is not None:
        warnings["tax_amount"] = message


def check_amounts(
    total: Decimal | None,
    subtotal: Decimal | None,
    tax: Decimal | None,
    tip: Decimal | None,
    line_amounts: Sequence[Decimal | None],
    tax_lines: Sequence[tuple[Decimal | None, Decimal | None, Decimal]],
) -> dict[str, str]:
    """What does not add up among a document's amounts as a person corrected them: the checks
    extraction makes (the lines against the subtotal or total, subtotal + tax + tip against the
    total), and the tax lines (``(rate, net, tax)``) against the tax and each against its rate
    of its net. Keys: subtotal, tax_amount, line_items, tax_lines. Checks only: nothing is
    changed to agree."""
    warnings: dict[str, str] = {}
    _check_parts(total, subtotal, tax, tip, (), warnings)
    _check_lines(total, subtotal, tip, [a for a in line_amounts if a is not None], warnings)
    if tax_lines:
        summed = sum((line_tax for _, _, line_tax in tax_lines), Decimal(0))
        if tax is not None and abs(summed - tax) > SUM_TOLERANCE:
            said = f"the tax lines add up to {summed}, not the tax {tax}"
            warnings.setdefault("tax_amount", said)
        for rate, net, line_tax in tax_lines:
            if rate is None or net is None:
                continue
            expected = (net * rate / HUNDRED).quantize(CENT)
            if abs(expected - line_tax) > SUM_TOLERANCE:
                warnings["tax_lines"] = f"{rate}% of {net} is {expected}, not {line_tax}"
                break
    return warnings


def _check_lines(
    total: Decimal | None,
    subtotal: Decimal | None,
    tip: Decimal | None,
    amounts: Sequence[Decimal],
    warnings: dict[str, str],
) -> None:
    if len(amounts) < 2 or total is None:
        return
    summed = sum(amounts, Decimal(0))
    targets = [value for value in (subtotal, total, total - (tip or 0)) if value is not None]
    if any(abs(summed - target) <= SUM_TOLERANCE for target in targets):
        return
    against = f"the subtotal {subtotal} or the total {total}" if subtotal else f"the total {total}"
    warnings["line_items"] = f"the {len(amounts)} lines add up to {summed}, not {against}"


def _check_count(view: DocView, line_items: Sequence[LineItem], warnings: dict[str, str]) -> None:
    """The number of articles the till printed against the lines read (quantities counted)."""
    printed = next(
        (int(match.group(1)) for text in view.texts if (match := ITEM_COUNT.search(text))), None
    )
    if printed is None or not line_items:
        return
    counted = sum(
        (
            item.quantity if item.quantity and item.quantity > 0 else Decimal(1)
            for item in line_items
        ),
        Decimal(0),
    )
    if counted != printed and len(line_items) != printed:
        warnings.setdefault(
            "line_items",
            f"the receipt counts {printed} articles; {len(line_items)} lines were read",
        )


def _row_printing(view: DocView, value: Decimal) -> TextLine | None:
    """The last row that prints ``value`` (subtotal and tax sit under the items)."""
    rows = [
        row for row in view.lines if any(t.value == value for t in find_amounts(row.text, True))
    ]
    return rows[-1] if rows else None


def _adds_up(parts: Decimal, total: Decimal, rounding: Sequence[Decimal]) -> bool:
    steps = (Decimal(0), *rounding, *(-step for step in rounding))
    return any(abs(parts + step - total) <= SUM_TOLERANCE for step in steps)


def _evidence(view: DocView, row: TextLine, confidence: float, source: str) -> FieldEvidence:
    page = next((p for p in view.pages if p.number == row.page), None)
    box = page.page_box(row.box_at(0, len(row.text))) if page is not None else None
    return FieldEvidence(confidence, row.page, box, row.text, source)


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None
