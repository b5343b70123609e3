"""ECB reference rates, offline: the ``currencyconverter`` package ships the ECB history.

Rates are quoted per euro; a cross rate is ``per_eur[to] / per_eur[from]``. For a date without a
publication (weekends, holidays) or after the last shipped day, the last earlier publication is
used and its date reported, so callers always see which rate they got.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_EVEN, Decimal

from currency_converter import CurrencyConverter

CENT = Decimal("0.01")
MAX_LOOKBACK_DAYS = 14


class UnknownCurrency(ValueError):
    """A currency the ECB does not publish."""


class NoRate(ValueError):
    """No publication covers the requested date."""


@dataclass(frozen=True)
class Quote:
    """How many ``to`` one ``from`` buys, as published on ``rate_date``."""

    from_currency: str
    to_currency: str
    rate: Decimal
    rate_date: date

    def convert(self, amount: Decimal) -> Decimal:
        return (amount * self.rate).quantize(CENT, rounding=ROUND_HALF_EVEN)


class RateBook:
    """The ECB rate history; load once per process (parsing the history takes ~0.3 s)."""

    def __init__(self) -> None:
        self._converter = CurrencyConverter(
            fallback_on_missing_rate=False, fallback_on_wrong_date=False
        )
        self._per_eur: dict[str, dict[date, float]] = {
            currency: self._converter._rates[currency]  # the library exposes no public table
            for currency in self._converter.currencies
            if currency != "EUR"
        }
        self._last_date: date | None = None

    @property
    def currencies(self) -> frozenset[str]:
        return frozenset({*self._per_eur, "EUR"})

    def last_date(self) -> date:
        # Computed once: scanning every currency's history took ~30 ms, on every quote.
        if self._last_date is None:
            self._last_date = max(max(rates) for rates in self._per_eur.values())
        return self._last_date

    def quote(self, from_currency: str, to_currency: str, on: date | None = None) -> Quote:
        """The rate ``from → to`` on ``on`` (default: the latest publication)."""
        source, target = from_currency.upper(), to_currency.upper()
        for code in (source, target):
            if code not in self.currencies:
                raise UnknownCurrency(
                    f"unknown currency '{code}'; ECB reference rates cover: "
                    + ", ".join(sorted(self.currencies))
                )
        if source == target:
            return Quote(source, target, Decimal(1), on or self.last_date())
        day = min(on or self.last_date(), self.last_date())
        for _ in range(MAX_LOOKBACK_DAYS + 1):
            per_from = self._per_eur_on(source, day)
            per_to = self._per_eur_on(target, day)
            if per_from is not None and per_to is not None:
                rate = Decimal(str(per_to)) / Decimal(str(per_from))
                return Quote(source, target, rate.quantize(Decimal("0.000001")), day)
            day -= timedelta(days=1)
        raise NoRate(f"no ECB rate for {source}/{target} on or shortly before {on}")

    def _per_eur_on(self, currency: str, day: date) -> float | None:
        if currency == "EUR":
            return 1.0
        return self._per_eur[currency].get(day)


@functools.cache
def default_rate_book() -> RateBook:
    """The process's rate book, loaded on first use (the table never changes while running)."""
    return RateBook()
