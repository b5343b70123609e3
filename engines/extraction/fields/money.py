"""Find money amounts in a line of text and turn them into exact decimals.

Receipts print amounts with two decimals ("9.00", "24,23", "1.234,56", "1,234.56"); that
shape is what tells an amount from a phone number, a quantity or an article number, so it
is matched here by a regular expression. Converting the matched token (thousands and
decimal separators in either convention) is left to price-parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from price_parser import Price

# Two decimals after "." or ","; optional thousands groups; an optional minus before or
# after (German receipts print returns as "1,99-"). OCR often puts a space after the
# separator ("24, 23"), which is tolerated. A space is never a thousands separator here:
# "2 160.00" on a receipt is a quantity and a price.
MONEY = re.compile(
    r"(?<![\d.,])(?P<sign>-\s?)?(?P<number>\d{1,3}(?:[.,'’]\d{3})+|\d+)"
    r"(?P<sep>[.,])\s?(?P<cents>\d{2})(?![\d%])(?P<trail>-)?"
)


@dataclass(frozen=True)
class MoneyToken:
    value: Decimal
    start: int
    end: int


def find_amounts(line: str) -> list[MoneyToken]:
    """Every two-decimal amount in ``line``, left to right."""
    tokens = []
    for match in MONEY.finditer(line):
        value = to_decimal(match.group("number") + match.group("sep") + match.group("cents"))
        if value is None:
            continue
        if match.group("sign") or match.group("trail"):
            value = -value
        tokens.append(MoneyToken(value, match.start(), match.end()))
    return tokens


def to_decimal(token: str) -> Decimal | None:
    """Convert one amount token ("1.234,56", "1,234.56", "9.00") to a Decimal with cents."""
    amount = Price.fromstring(token).amount
    if amount is not None:
        return Decimal(amount).quantize(Decimal("0.01"))
    digits = re.sub(r"\D", "", token)
    try:
        return (Decimal(digits) / 100).quantize(Decimal("0.01"))
    except InvalidOperation:
        return None


def last_amount(line: str) -> Decimal | None:
    """The rightmost amount of a line: on a total line, the amount column."""
    tokens = find_amounts(line)
    return tokens[-1].value if tokens else None
