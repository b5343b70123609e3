"""Money on the wire: decimal numbers with at most two places, never floats inside.

Values are parsed into ``Decimal`` (a JSON number such as 12.34 becomes ``Decimal("12.34")``,
not the float nearest to it) and serialised back as JSON numbers. Storage keeps integer cents
(see ``persistence/money.py``), so sums in MongoDB are exact.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import Field, PlainSerializer

_as_json_number = PlainSerializer(
    float,  # shortest repr: Decimal("12.34") → 12.34
    return_type=float,
    when_used="json",
)

Money = Annotated[
    Decimal,
    Field(max_digits=15, decimal_places=2, allow_inf_nan=False),
    _as_json_number,
]
"""An amount of money: up to 13 integer digits and 2 decimals."""

Quantity = Annotated[
    Decimal,
    Field(max_digits=15, decimal_places=4, allow_inf_nan=False),
    _as_json_number,
]
"""A quantity or unit price: up to 4 decimals (fuel prices, weights)."""
