"""Find money amounts in a line of text and turn them into exact decimals.

Receipts print amounts with two decimals ("9.00", "24,23", "1.234,56", "1,234.56"); that
shape is what tells an amount from a phone number, a quantity or an article number, so it
is matched here by a regular expression. A whole number counts only with a currency beside
it ("€ 120", "120 EUR"). Converting the matched token (thousands and decimal separators in
either convention) is left to price-parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from price_parser import Price

# Two decimals after "." or ","; optional thousands groups; an optional minus before or
# after (German receipts print returns as "1,99-"). OCR often puts a space after the
# separator ("24, 23"), which is tolerated. A space is never a thousands separator here:
# "2 160.00" on a receipt is a quantity and a price.
# A date is no amount: "30.07" in "30.07.2024" is followed by another separated number; nor
# is a measure ("3X1.25MM", "0,75 L").
MONEY = re.compile(
    r"(?<![\d.,])(?P<sign>-\s?)?(?P<number>\d{1,3}(?:[.,'’]\d{3})+|\d+)"
    r"(?P<sep>[.,])\s?(?P<cents>\d{2})(?![\d%]|[./]\d|\s?(?i:mm|cm|kg|mg|ml|cl|g|m|l|oz|lbs?)\b)"
    r"(?P<trail>-)?"
    # Till slips print amounts under one unit without the zero: "RM .01", "-.02".
    r"|(?<![\w.,])(?P<sign2>-\s?)?(?P<sep2>\.)(?P<cents2>\d{2})(?![\d%.,])"
)
_NUMBER = r"\d{1,3}(?:[.,'’]\d{3})+|\d+"
WHOLE = re.compile(
    rf"(?:[€$£]|\b(?:EUR|USD|GBP|CHF|RM|MYR|INR|Rs\.?))\s?(?P<a>{_NUMBER})(?![\d.,]?\d)"
    rf"|(?<![\d.,])(?P<b>{_NUMBER})\s?(?=€|EUR\b)"
)
# French and Belgian documents group thousands with a (no-break) space before decimal
# commas: "1 280,00". A space is also how a till separates a quantity from a price
# ("2 160,00"), so this reading is offered beside the plain one, and the totals' features
# decide between them. With a decimal point ("1 278.61") it is a quantity and a price.
SPACE_GROUPED = re.compile(
    r"(?<![\d.,])(?P<number>\d{1,3}(?:[ \u00a0\u202f]\d{3})+),(?P<cents>\d{2})(?![\d%])"
)
CENT = Decimal("0.01")


@dataclass(frozen=True)
class MoneyToken:
    value: Decimal
    start: int
    end: int
    whole: bool = False  # printed without cents ("€ 120")
    spaced: bool = False  # thousands grouped by a space ("1 280,00"), beside the plain reading


def find_amounts(line: str, whole: bool = False) -> list[MoneyToken]:
    """Every two-decimal amount in ``line``, left to right; with ``whole``, also whole
    amounts printed beside a currency and space-grouped readings ("1 280,00" as 1280.00)."""
    tokens = []
    for match in MONEY.finditer(line):
        if match.group("cents2") is not None:
            value: Decimal | None = Decimal("0." + match.group("cents2"))
        else:
            value = to_decimal(match.group("number") + match.group("sep") + match.group("cents"))
        if value is None:
            continue
        if match.group("sign") or match.group("trail") or match.group("sign2"):
            value = -value
        tokens.append(MoneyToken(value, match.start(), match.end()))
    if whole:
        for match in SPACE_GROUPED.finditer(line):
            digits = re.sub(r"\D", "", match.group("number"))
            value = Decimal(f"{digits}.{match.group('cents')}")
            tokens.append(MoneyToken(value, match.start(), match.end(), spaced=True))
        taken = [(token.start, token.end) for token in tokens]
        for match in WHOLE.finditer(line):
            if any(start < match.end() and match.start() < end for start, end in taken):
                continue
            group = "a" if match.group("a") else "b"
            value = to_decimal(match.group(group))
            if value is not None:
                tokens.append(MoneyToken(value, match.start(group), match.end(group), whole=True))
        tokens.sort(key=lambda token: token.start)
    return tokens


def to_decimal(token: str) -> Decimal | None:
    """Convert one amount token ("1.234,56", "1,234.56", "9.00") to a Decimal with cents."""
    amount = Price.fromstring(token).amount
    if amount is None:
        return None
    return Decimal(amount).quantize(CENT)


def last_amount(line: str) -> Decimal | None:
    """The rightmost amount of a line: on a total line, the amount column."""
    tokens = find_amounts(line)
    return tokens[-1].value if tokens else None
