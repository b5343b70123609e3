"""Money on the wire: decimal numbers with at most two places, never floats inside.

Values are parsed into ``Decimal`` (a JSON number such as 12.34 becomes ``Decimal("12.34")``,
not the float nearest to it) and serialised back as JSON numbers. Storage keeps integer cents
(see ``persistence/money.py``), so sums in MongoDB are exact.

An input amount is a JSON number or a decimal string (``"12.34"``): the JSON Schema says so, with
the string's pattern, so that clients validating against ``/openapi.json`` agree with the server.
The one rule JSON Schema cannot state for a number is "at most two decimal places" (``multipleOf:
0.01`` fails in validators for binary floats: 0.57 / 0.01 is 56.99999999999999), so the number
branch gives the range and says it in words; 12.345 is refused with a 400 that names the field.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PlainSerializer, WithJsonSchema

_as_json_number = PlainSerializer(
    float,  # shortest repr: Decimal("12.34") → 12.34
    return_type=float,
    when_used="json",
)


def decimal_input(integer_digits: int, places: int) -> tuple[Any, ...]:
    """Validation and JSON Schema of an input decimal with at most ``integer_digits`` before
    the point and ``places`` after: a JSON number, or a string matching the schema's pattern."""
    pattern = rf"^-?[0-9]{{1,{integer_digits}}}(\.[0-9]{{1,{places}}})?$"
    matcher = re.compile(pattern)
    largest = float(Decimal(10) ** integer_digits - Decimal(1).scaleb(-places))

    def check(value: Any) -> Any:
        # What pydantic's Decimal would coerce too freely: booleans and loose strings.
        if isinstance(value, bool):
            raise ValueError("expected a number, got a boolean")
        if isinstance(value, str) and not matcher.match(value):
            raise ValueError(
                f'expected a decimal string such as "1234.5" (at most {integer_digits} digits '
                f"before the point and {places} after)"
            )
        return value

    schema = {
        "anyOf": [
            {
                "type": "number",
                "minimum": -largest,
                "maximum": largest,
                "description": f"at most {places} decimal places",
            },
            {"type": "string", "pattern": pattern},
        ]
    }
    return (
        Field(max_digits=integer_digits + places, decimal_places=places, allow_inf_nan=False),
        BeforeValidator(check),
        WithJsonSchema(schema, mode="validation"),
        _as_json_number,
    )


Money = Annotated[Decimal, *decimal_input(13, 2)]
"""An amount of money: up to 13 integer digits and 2 decimals."""

ConvertedMoney = Annotated[
    Decimal,
    # The largest ECB cross rate (about 4.9 million TRL per MTL) times the largest amount has
    # 20 integer digits.
    Field(max_digits=24, decimal_places=2, allow_inf_nan=False),
    _as_json_number,
]
"""A conversion result: the input amount times a rate may exceed the money range. As a JSON
number, digits beyond the 15th significant one are those of the nearest binary float; GraphQL
returns the exact decimal as a string."""

Quantity = Annotated[Decimal, *decimal_input(11, 4)]
"""A quantity or unit price: up to 4 decimals (fuel prices, weights)."""
