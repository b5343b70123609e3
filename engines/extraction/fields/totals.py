"""The total, subtotal and tax of a document.

Every amount printed on the document is a candidate for the total. Its features say what
labels it (the label that opens its cell of the row, the label that opens its row, or a
label alone on the row above: "TOTAL" / "9.00"), where it sits (how far down, how far
right, how tall), and whether the other amounts agree with it: subtotal + tax (± a printed
rounding), cash tendered − change, the items above it, a payment row, the same amount
printed again. The fitted model in ``scoring`` weighs them; the subtotal and tax are then
the labelled amounts that agree with the chosen total, if any do.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import pairwise

from ..layout import TextLine
from .labels import Label, find_labels, is_column_header
from .money import MoneyToken, find_amounts
from .scoring import Candidate
from .view import DocView

KINDS = ("total_strong", "total", "subtotal", "tax", "paid", "change", "rounding", "not_total")
TOTAL_KINDS = frozenset({"total_strong", "total"})
# A tax summary table: its title, or a row with a rate and two or more amounts.
TAX_TABLE_TITLE = re.compile(
    r"(gst|tax|vat|mwst|ust|btw|tva|iva)\s*(summary|analysis|%|satz)|mwst[\s-]*satz|"
    r"steuer\s*%|netto\s+.*\s+brutto|brutto\s+.*\s+netto",
    re.I,
)
RATE = re.compile(r"\d\s?%|@\s?\d|\b[A-Z]\s?=\s?\d|\b(?:SR|ZR|S|Z)\s+\d", re.I)
FIVE_CENTS = Decimal("0.05")
ONE = Decimal(1)


@dataclass(frozen=True)
class Cell:
    """One amount on a row and the labels between it and the previous amount."""

    line: TextLine
    token: MoneyToken
    labels: tuple[Label, ...]
    row_first: Label | None  # the first label of the whole row
    is_last: bool  # the row's rightmost amount
    row_amounts: int
    above: Label | None  # a label alone on the row above, when this cell has none

    @property
    def kind(self) -> str:
        return self.labels[0].kind if self.labels else "none"

    @property
    def value(self) -> Decimal:
        return self.token.value


@dataclass(frozen=True)
class CashFacts:
    """What the payment rows say: amounts tendered, change given, tendered − change, and
    the cash-rounding adjustments printed (under five cents)."""

    tendered: frozenset[Decimal]
    change: frozenset[Decimal]
    handed: frozenset[Decimal]
    rounding: frozenset[Decimal]


def cash_facts(cells: Sequence[Cell]) -> CashFacts:
    """The payment rows' amounts, by the labels that govern them (their cell's or their
    row's: "CASH 50.00", "Change 26.60", "Rounding Adj -0.02", "Pembundaran 0.01")."""
    by_kind: dict[str, set[Decimal]] = {"paid": set(), "change": set(), "rounding": set()}
    for cell in cells:
        # Any label of the cell counts: "Amount Tendered", "TOTAL CASH" hand money over.
        kinds = {label.kind for label in cell.labels}
        kinds.add(cell.row_first.kind if cell.row_first else "none")
        if "change" in kinds:
            kinds.discard("paid")  # "Change due", "Cash back" give money back
        for kind in kinds & by_kind.keys():
            by_kind[kind].add(abs(cell.value))
    tendered = frozenset(v for v in by_kind["paid"] if v > 0)
    # Only real change counts: with "Change 0.00" the tendered amount already is the total
    # (paid_elsewhere), and a misread "$8.20" → "58.20" would pose as one.
    change = frozenset(v for v in by_kind["change"] if v > 0)
    handed = frozenset(paid - back for paid in tendered for back in change if paid > back)
    rounding = frozenset(v for v in by_kind["rounding"] if 0 < v < FIVE_CENTS)
    return CashFacts(tendered, change, handed, rounding)


@dataclass(frozen=True)
class Totals:
    amount: Decimal | None
    subtotal: Decimal | None
    tax: Decimal | None
    consistent: bool | None


def read_cells(view: DocView) -> list[Cell]:
    """Every amount of the document with the labels that govern it."""
    cells: list[Cell] = []
    for line in view.lines:
        tokens = find_amounts(line.text, whole=True)
        if not tokens:
            continue
        labels = find_labels(line.text)
        row_first = labels[0] if labels and labels[0].start < tokens[0].start else None
        above = None
        previous = view.previous(line)
        if previous is not None and not find_amounts(previous.text, whole=True):
            above_labels = find_labels(previous.text)
            if above_labels and not is_column_header(previous.text) and len(previous.text) < 40:
                above = above_labels[-1]
        # Readings of the same characters ("1 280,00" as 1280.00 and as 280.00) share a
        # slot: the same labels govern them, and they count once in the row.
        slots: list[list[MoneyToken]] = []
        for token in tokens:
            if slots and token.start < max(t.end for t in slots[-1]):
                slots[-1].append(token)
            else:
                slots.append([token])
        cursor = 0
        for index, slot in enumerate(slots):
            start = min(t.start for t in slot)
            own = tuple(label for label in labels if cursor <= label.start < start)
            cursor = max(t.end for t in slot)
            for token in slot:
                cells.append(
                    Cell(
                        line,
                        token,
                        own,
                        row_first,
                        index == len(slots) - 1,
                        len(slots),
                        above if not own and row_first is None else None,
                    )
                )
    return cells


def total_candidates(view: DocView, cells: list[Cell]) -> list[Candidate]:
    """Every positive amount as a candidate for the total, with its features."""
    positives = [cell for cell in cells if cell.value > 0]
    if not positives:
        return []
    by_kind: dict[str, set[Decimal]] = {kind: set() for kind in KINDS}
    for cell in cells:
        for kind in {cell.kind, cell.row_first.kind if cell.row_first else "none"}:
            if kind in by_kind:
                by_kind[kind].add(abs(cell.value))
    facts = cash_facts(cells)
    rounding = {abs(v) for v in by_kind["rounding"] if 0 < abs(v) < ONE}
    sums = {
        sub + tax + step
        for sub in by_kind["subtotal"]
        for tax in by_kind["tax"]
        for step in (Decimal(0), *rounding, *(-r for r in rounding))
        if tax < sub
    }
    # A labelled row of net and tax ("TOTAL 105.57 6.33" closing a tax table) adds up too.
    sums |= {
        cell.value + other.value
        for cell, other in pairwise(cells)
        if cell.line is other.line
        and cell.row_amounts == 2
        and cell.row_first is not None
        and 0 < other.value < cell.value
    }
    tendered, handed = facts.tendered, facts.handed
    labelled_totals = [c.value for c in positives if total_kind(c) in TOTAL_KINDS]
    adjusted = {t + s for t in labelled_totals for s in (*rounding, *(-r for r in rounding))}
    # How often a value is printed on rows that carry a money label (a total is repeated
    # as the amount paid, the rounded total or on the card slip; a unit price repeated
    # as its line amount is not).
    counts = Counter(
        abs(cell.value) for cell in cells if cell.labels or cell.row_first or cell.above
    )
    largest = max(cell.value for cell in positives)
    largest_labelled = max(labelled_totals, default=None)
    step = max(rounding, default=Decimal(0))
    # What a tax line is a small share of: the largest labelled total or the amount the
    # customer handed over minus the change.
    reference = max([*labelled_totals, *handed], default=None)
    sums_of_items = item_sums(cells)
    in_tax_table = _tax_table_lines(view)
    last_total_index = max(
        (c.line.index for c in positives if total_kind(c) in TOTAL_KINDS), default=-1
    )

    found: list[Candidate] = []
    for cell in positives:
        value = cell.value
        kind = cell.kind
        row_kind = cell.row_first.kind if cell.row_first is not None else "none"
        features: dict[str, float] = {f"cell_{kind}": 1.0}
        for label in cell.labels[1:]:
            features[f"also_{label.kind}"] = 1.0
        if cell.is_last and row_kind != "none" and not cell.labels:
            features[f"row_{row_kind}"] = 1.0
        if cell.above is not None:
            features[f"above_{cell.above.kind}"] = 1.0
        _, top, right, bottom = cell.line.box_at(cell.token.start, cell.token.end)
        features.update(
            position=view.document_position(cell.line),
            right=view.relative_x(cell.line, right),
            height=min(3.0, view.relative_height(bottom - top)) - 1.0,
            row_amounts=min(4, cell.row_amounts) / 4,
            last_in_row=float(cell.is_last),
            whole=float(cell.token.whole),
            spaced=float(cell.token.spaced),
            ocr=cell.line.confidence_at(cell.token.start, cell.token.end),
            repeats=min(3, max(0, counts[value] - _labelled(cell))) / 3,
            # Within a printed rounding of the largest counts as the largest: the rounded
            # total is a few cents under the total before rounding.
            largest=float(value >= largest - step),
            largest_labelled=float(
                largest_labelled is not None
                and largest_labelled - step <= value <= largest_labelled
            ),
            last_total_row=float(cell.line.index == last_total_index),
            sum_of_parts=float(value in sums),
            tendered_minus_change=float(value in handed),
            paid_elsewhere=float(value in tendered and kind != "paid"),
            rounded_total=float(value in adjusted and value % FIVE_CENTS == 0),
            items_sum=float(value in sums_of_items),
            tax_table=float(cell.line.index in in_tax_table),
            small_share=float(reference is not None and value * 4 <= reference),
            label_rate=float(
                any("%" in cell.line.text[label.start : label.end + 8] for label in cell.labels)
            ),
        )
        found.append(
            Candidate(value, cell.line, cell.token.start, cell.token.end, features, "amount")
        )
    return found


def _labelled(cell: Cell) -> int:
    return int(bool(cell.labels or cell.row_first or cell.above))


def total_kind(cell: Cell) -> str:
    if cell.labels:
        return cell.kind
    if cell.is_last and cell.row_first is not None:
        return cell.row_first.kind
    return cell.above.kind if cell.above is not None else "none"


def item_sums(cells: Sequence[Cell]) -> set[Decimal]:
    """Running sums of the unlabelled row amounts from the top: the items add up to the
    total just below them."""
    sums: set[Decimal] = set()
    running = Decimal(0)
    for cell in cells:
        if not cell.is_last:
            continue
        if cell.labels or cell.row_first is not None:
            if running:
                sums.add(running)
            continue
        running += cell.value
    if running:
        sums.add(running)
    return sums


def _tax_table_lines(view: DocView) -> set[int]:
    """Rows of a tax summary table (title row and the rows just below it, or rate rows
    with several amounts)."""
    rows: set[int] = set()
    for line in view.lines:
        if TAX_TABLE_TITLE.search(line.text):
            rows.update(range(line.index, line.index + 5))
        elif RATE.search(line.text) and len(find_amounts(line.text)) >= 2:
            rows.add(line.index)
    # The "Total" row closing such a table belongs to it too.
    for first, second in pairwise(view.lines):
        if first.index in rows and len(find_amounts(second.text)) >= 2:
            rows.add(second.index)
    return rows


def settle_totals(amount: Decimal | None, cells: list[Cell]) -> Totals:
    """Subtotal and tax that agree with the chosen total, else the first labelled ones."""
    subtotals = [c.value for c in cells if total_kind(c) == "subtotal" and c.value >= 0]
    taxes = [
        c.value
        for c in cells
        if total_kind(c) == "tax" and c.value >= 0 and not RATE.fullmatch(c.line.text)
    ]
    if amount is not None:
        for sub in subtotals:
            for part in dict.fromkeys(taxes):
                if sub + part == amount and part < sub:
                    return Totals(amount, sub, part, True)
        for sub in subtotals:
            if sub == amount:
                return Totals(amount, sub, taxes[0] if taxes else None, None)
    subtotal: Decimal | None = subtotals[0] if subtotals else None
    tax: Decimal | None = taxes[0] if taxes else None
    consistent = None
    if amount is not None and subtotal is not None and tax is not None:
        consistent = subtotal + tax == amount
    return Totals(amount, subtotal, tax, consistent)
