"""What the reconciliation tests share: fixed exchange rates that remember what was asked, and
short builders of transactions and documents."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from engines.reconciliation import BankTransaction, CandidateDocument

DAY = date(2025, 3, 10)


class FixedRates:
    """One rate per currency pair, whatever the day; the days asked are kept."""

    def __init__(self, rates: dict[tuple[str, str], str] | None = None) -> None:
        self.rates = {pair: Decimal(rate) for pair, rate in (rates or {}).items()}
        self.asked: list[tuple[str, str, date]] = []

    def rate(self, from_currency: str, to_currency: str, on: date) -> Decimal | None:
        self.asked.append((from_currency, to_currency, on))
        return self.rates.get((from_currency, to_currency))


def txn(id: str = "t1", amount: str = "-42.50", **fields: Any) -> BankTransaction:
    values: dict[str, Any] = {
        "booking_date": DAY,
        "currency": "EUR",
        "counterparty": "SHELL DEUTSCHLAND OIL GMBH 1234",
        "reference": "SHELL DEUTSCHLAND OIL GMBH 1234 // Karte ****4242",
    }
    values.update(fields)
    return BankTransaction(id=id, amount=Decimal(amount), **values)


def doc(id: str = "d1", total: str = "42.50", **fields: Any) -> CandidateDocument:
    values: dict[str, Any] = {"date": DAY, "currency": "EUR", "merchant": "Shell"}
    values.update(fields)
    for key in ("tip", "converted_amount"):
        if isinstance(values.get(key), str):
            values[key] = Decimal(values[key])
    return CandidateDocument(id=id, total=Decimal(total), **values)
