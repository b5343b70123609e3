"""Purchased items: the rows above the first total that end in an amount.

A receipt row is "<description> [qty x] [unit price] <amount> [tax code]". Rows are taken
from the top down to the first total, subtotal or tax row; rows that carry a money label
(payments, discounts, rounding) are left out.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .field_types import LineItem
from .labels import find_labels
from .money import find_amounts

QUANTITY = re.compile(r"(?<![\d.,])(\d{1,3})\s*(?:x|X|×|stk|pcs|@)\s*", re.I)
MAX_ITEMS = 200
END_OF_ITEMS = frozenset({"total_strong", "total", "subtotal"})


def find_line_items(lines: list[str]) -> tuple[LineItem, ...]:
    items: list[LineItem] = []
    for line in lines:
        kinds = {label.kind for label in find_labels(line)}
        if kinds & END_OF_ITEMS and find_amounts(line):
            break  # the item block ends at the first total
        if kinds:
            continue
        item = _parse_row(line)
        if item is not None:
            items.append(item)
        if len(items) >= MAX_ITEMS:
            break
    return tuple(items)


def _parse_row(line: str) -> LineItem | None:
    tokens = find_amounts(line)
    if not tokens:
        return None
    description = line[: tokens[0].start].strip(" .:-*\t€$£")
    quantity = None
    qty_match = QUANTITY.search(description)
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
    return LineItem(description, quantity, unit_price, amount, None)


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None
