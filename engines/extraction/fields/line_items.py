"""Purchased items: the rows above the first total that end in an amount.

A receipt row is "<description> [qty x] [unit price] <amount> [tax code]". Rows are taken
from the top down to the first total, subtotal or tax row; rows that carry a money label
(payments, discounts, rounding) are left out, and so are opening hours printed in the
header ("MO.-SA 9.00-20.00": a time range, not a price). A row of figures alone ("2,000
3,99 7,98": a quantity, a price, the line's amount) takes its description from the row of
words just above it, as tills print an article's name over its weighed or counted line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from itertools import combinations

from .field_types import LineItem
from .labels import find_labels
from .money import find_amounts

# Opening hours ("MO.-SA 9.00-20.00 UHR", "Mon-Sat 8:00 - 22:00"): a time range, never prices.
HOURS = re.compile(
    r"(?<![\d.,])(?:[01]?\d|2[0-4])[.:][0-5]\d\s*(?:h|uhr)?\s*[-–]\s*(?:[01]?\d|2[0-4])[.:][0-5]\d(?![\d%])",
    re.I,
)
# A note under an item about what its price includes ("Incl. Thuiskopieheffing 3,50",
# "inkl. 0,25 Pfand", "davon MwSt"): part of the line above, not a line of its own.
INCLUDED = re.compile(
    r"^\W*(?:incl\.?|inkl\.?|including|inclusief|incluye|incluso|inclus|davon|dont|w/)\b",
    re.I,
)
QUANTITY = re.compile(r"(?<![\d.,])(\d{1,3})\s*(?:x|X|×|stk|pcs|@)\s*", re.I)
MAX_ITEMS = 200
END_OF_ITEMS = frozenset({"total_strong", "total", "subtotal"})


def find_line_items(
    lines: list[str], totals: Sequence[Decimal | None] = ()
) -> tuple[LineItem, ...]:
    """The item rows. A row whose amount is printed with a space between its thousands
    ("7 266,96") reads two ways (7266.96, or a quantity 7 and 266.96); the plain reading is
    taken unless reading some rows the other way makes the lines add up to one of
    ``totals`` (the subtotal or the total printed) — both are readings of what is printed."""
    readings = _readings(lines)
    items = [item for item, _ in readings]
    spaced = [(index, other) for index, (_, other) in enumerate(readings) if other is not None]
    targets = [t for t in totals if t is not None]
    summed = sum((item.amount or Decimal(0) for item in items), Decimal(0))
    if not spaced or not targets or summed in targets or len(spaced) > MAX_RESPACED:
        return tuple(items)
    for size in range(1, len(spaced) + 1):
        for chosen in combinations(spaced, size):
            change = sum(
                (
                    (other.amount or Decimal(0)) - (items[i].amount or Decimal(0))
                    for i, other in chosen
                ),
                Decimal(0),
            )
            if summed + change in targets:
                for index, other in chosen:
                    items[index] = other
                return tuple(items)
    return tuple(items)


# Rows with a second reading at most this many (2^n combinations are tried).
MAX_RESPACED = 10


def _readings(lines: list[str]) -> list[tuple[LineItem, LineItem | None]]:
    """Each item row's reading, and its space-grouped reading when it has one."""
    items: list[tuple[LineItem, LineItem | None]] = []
    words: list[str] = []  # rows of words with no amount since the last item
    for line in lines:
        kinds = _label_kinds(line)
        if kinds & END_OF_ITEMS and find_amounts(line):
            break  # the item block ends at the first total
        if kinds or HOURS.search(line) or INCLUDED.match(line):
            words = []
            continue
        row = line
        if not _parse_row(line) and words:
            row = f"{_name_row(words[-2:])} {line}"
        item = _parse_row(row)
        if item is not None:
            items.append((item, _spaced_reading(row, item)))
            words = []
        elif not find_amounts(line):
            words.append(line.strip())
        if len(items) >= MAX_ITEMS:
            break
    return items


def _name_row(rows: list[str]) -> str:
    """Of the (at most two) word rows over a row of figures, the article's name: the nearest
    that is not an article code (more letters than digits: "SOURING PAD 4S" over "WA03 -
    24/240"), else the one with most letters."""
    for row in reversed(rows):
        if _letters(row) > sum(ch.isdigit() for ch in row):
            return row
    return max(rows, key=_letters)


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def _spaced_reading(row: str, item: LineItem) -> LineItem | None:
    """The row read with its last amount's thousands grouped by a space ("7 266,96")."""
    tokens = [t for t in find_amounts(row, whole=True) if t.spaced]
    if not tokens or not item.amount or tokens[-1].value == item.amount:
        return None
    last = tokens[-1]
    if row[last.end :].strip(" €$£ABCDEUR*"):
        return None  # not the row's last amount
    description = item.description
    quantity = item.quantity
    # "Bürostuhl 12 605,58 7 266,96": the 7 read as a quantity belongs to the amount.
    return LineItem(description, quantity, item.unit_price, last.value, item.tax_amount)


# Label kinds a product's name may start with ("TIP Geschirrtücher", a store brand): such a
# label followed by a word of its own before the amount names an article, not a payment.
NAMING_KINDS = frozenset({"not_total", "paid"})
WORD = re.compile(r"[^\W\d_]{4,}")


def _label_kinds(line: str) -> set[str]:
    """The money labels that govern the row."""
    amounts = find_amounts(line)
    first_amount = amounts[0].start if amounts else len(line)
    kinds = set()
    for label in find_labels(line):
        if label.kind in NAMING_KINDS and WORD.search(line[label.end : first_amount]):
            continue
        kinds.add(label.kind)
    return kinds


def _parse_row(line: str) -> LineItem | None:
    tokens = find_amounts(line)
    if not tokens:
        return None
    description = line[: tokens[0].start].strip(" .:-*\t€$£")
    quantity = None
    # The quantity nearest the amounts ("… 3X1.25MM CABLE … 1 X 22.90": 1, not the 3 of the
    # article's name).
    qty_match = next(reversed(list(QUANTITY.finditer(description))), None)
    if qty_match:
        quantity = _decimal(qty_match.group(1))
        description = (description[: qty_match.start()] + description[qty_match.end() :]).strip()
    # A trailing plain integer before the prices is a quantity column ("PEN 2 1.50 3.00").
    trailing = re.search(r"\s(\d{1,3})$", description)
    if quantity is None and trailing and len(tokens) >= 2:
        quantity = _decimal(trailing.group(1))
        description = description[: trailing.start()].strip()
    if sum(ch.isalpha() for ch in description) < 2:
        return None
    amount = tokens[-1].value
    unit_price = tokens[-2].value if len(tokens) >= 2 else None
    if unit_price is None and quantity is not None and quantity:
        unit_price = (amount / quantity).quantize(Decimal("0.01"))
    if quantity is None and unit_price and amount != unit_price:
        # "3,99 7,98": a unit price and the line's amount make a whole quantity.
        ratio = amount / unit_price
        if ratio == ratio.to_integral_value() and 1 < ratio <= 1000:
            quantity = ratio.quantize(Decimal(1))
    return LineItem(description, quantity, unit_price, amount, None)


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None
