"""The ECB rate book (``engines.currency``) as the matcher's ``Rates``."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from ..currency import NoRate, RateBook, UnknownCurrency


class RateBookRates:
    """Rates from the shipped ECB history; an unknown currency or a date without a
    publication nearby gives no rate (the candidate is then not scored by conversion)."""

    def __init__(self, book: RateBook) -> None:
        self._book = book

    def rate(self, from_currency: str, to_currency: str, on: date) -> Decimal | None:
        try:
            return self._book.quote(from_currency, to_currency, on).rate
        except (UnknownCurrency, NoRate):
            return None
