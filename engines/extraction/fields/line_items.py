"""Purchased items: the lines above the total that end in an amount.

A receipt row is "<description> [qty x] [unit price] <amount> [tax code]". Rows are taken
from the start of the item block (after the header) up to the first total line; rows that
are totals, taxes, payments or discounts are left out.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from .field_types import LineItem
from .money import find_amounts
from .totals import NOT_TOTAL, PAID, SUBTOTAL, TAX, is_total_label

QUANTITY = re.compile(r"(?<![\d.,])(\d{1,3})\s*(?:x|X|×|stk|pcs|@)\s*", re.I)
MAX_ITEMS = 200


def find_line_items(lines: list[str]) -> tuple[LineItem, ...]:
    items: list[LineItem] = []
    for line in lines:
        if is_total_label(line) or SUBTOTAL.search(line):
            break  # the item block ends at the first total
        if TAX.search(line) or PAID.search(line) or NOT_TOTAL.search(line):
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
    description = line[: tokens[0].start].strip(" .:-*\t")
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
