"""Money in storage: integer cents.

Integer cents make ``$sum`` exact on every MongoDB-compatible store and keep comparisons and
sorting working everywhere (mongomock cannot compare Decimal128). The API speaks decimals with
two places (``schema/money.py``); the conversion happens only here.
"""

from __future__ import annotations

from decimal import Decimal

CENT = Decimal("0.01")


def to_cents(value: Decimal | int | float | str) -> int:
    """``Decimal("12.34")`` → 1234; callers validate to two places first, so this is exact."""
    return int((Decimal(str(value)) / CENT).to_integral_value())


def from_cents(cents: int) -> Decimal:
    return (Decimal(cents) * CENT).quantize(CENT)
