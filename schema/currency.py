"""Contract models of the currency resource."""

from __future__ import annotations

import datetime as dt

from pydantic import Field, field_validator

from schema.base import CapabilityInput, CapabilityOutput
from schema.money import ConvertedMoney, Money

CODE = Field(pattern=r"^[A-Za-z]{3}$", description="Three-letter ISO 4217 code")


class ConvertCurrency(CapabilityInput):
    """Input of currency.convert."""

    amount: Money = Field(description="Amount to convert")
    fromCurrency: str = CODE
    toCurrency: str = CODE
    date: dt.date | None = Field(
        default=None, description="YYYY-MM-DD; historical rate (default: latest)"
    )

    @field_validator("fromCurrency", "toCurrency")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


class Conversion(CapabilityOutput):
    """The converted amount, the rate used and the day it was published."""

    amount: Money = Field(description="The amount in toCurrency")
    fromCurrency: str = Field(description="Currency converted from (ISO 4217)")
    toCurrency: str = Field(description="Currency converted to (ISO 4217)")
    convertedAmount: ConvertedMoney = Field(
        description="amount × rate, rounded half-even to cents; may exceed the money range"
    )
    rate: float = Field(description="Units of toCurrency per unit of fromCurrency")
    rateDate: dt.date = Field(
        description="Publication day of the rate (the last one on or before the date asked)"
    )
    source: str = Field(
        default="European Central Bank reference rates", description="Where the rates come from"
    )
