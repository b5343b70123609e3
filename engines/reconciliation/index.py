"""Where the matcher looks for a transaction's candidates, so that it never compares every
transaction with every document: documents by exact total, by currency sorted by total (a
window for conversions), by day sorted by total (tips and splits) and by invoice number.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from rapidfuzz import fuzz, process

from .names import compact, normalise, similarity
from .types import CandidateDocument

CENTS = Decimal(100)
MIN_INVOICE_NUMBER = 4  # shorter numbers ("12") are found in any booking text


def cents(amount: Decimal) -> int:
    return int((abs(amount) * CENTS).to_integral_value())


@dataclass(frozen=True)
class Indexed:
    """A document with what the signals compare, computed once: its names normalised (and as
    printed) and its invoice number in compact form."""

    doc: CandidateDocument
    names: tuple[tuple[str, str], ...]
    invoice: str
    cents: int


class SortedAmounts:
    """Documents sorted by an amount in cents: the ones inside a range, by bisection."""

    def __init__(self, pairs: list[tuple[int, Indexed]]) -> None:
        pairs.sort(key=lambda pair: (pair[0], pair[1].doc.id))
        self._keys = [amount for amount, _ in pairs]
        self._docs = [entry for _, entry in pairs]

    def between(self, low: int, high: int) -> list[Indexed]:
        """Documents with ``low <= amount <= high``."""
        start = bisect.bisect_left(self._keys, low)
        end = bisect.bisect_right(self._keys, high)
        return self._docs[start:end]


class ByDate:
    """Documents sorted by date: the ones inside a range of days, by bisection."""

    def __init__(self, entries: list[Indexed]) -> None:
        entries.sort(key=lambda entry: (entry.doc.date, entry.doc.id))
        self._days = [entry.doc.date.toordinal() for entry in entries]
        self._docs = entries

    def between(self, first: date, last: date) -> list[Indexed]:
        start = bisect.bisect_left(self._days, first.toordinal())
        end = bisect.bisect_right(self._days, last.toordinal())
        return self._docs[start:end]


class DocumentIndex:
    """The documents, indexed once per matching run."""

    def __init__(self, documents: Iterable[CandidateDocument]) -> None:
        self.by_total: dict[tuple[str, int], list[Indexed]] = defaultdict(list)
        # Per currency and month: a conversion window is a range of totals, and a year of them
        # holds too many to filter by date one by one.
        by_currency: dict[tuple[str, int], list[tuple[int, Indexed]]] = defaultdict(list)
        by_converted: dict[tuple[str, int], list[tuple[int, Indexed]]] = defaultdict(list)
        by_name: dict[tuple[str, str], list[Indexed]] = defaultdict(list)
        self.by_invoice: dict[str, list[Indexed]] = defaultdict(list)
        for doc in sorted(documents, key=lambda d: d.id):
            printed = [name for name in dict.fromkeys((doc.merchant, doc.seller)) if name]
            names = tuple((normalise(name), name) for name in printed)
            kept = tuple(pair for pair in names if pair[0])
            total = cents(doc.total)
            entry = Indexed(doc, kept, compact(doc.invoice_number), total)
            self.by_total[(doc.currency, total)].append(entry)
            if doc.tip is not None:
                self.by_total[(doc.currency, total + cents(doc.tip))].append(entry)
            month = _month(doc.date)
            by_currency[(doc.currency, month)].append((total, entry))
            if doc.converted_amount is not None:
                by_converted[(doc.currency, month)].append((cents(doc.converted_amount), entry))
            for norm in dict.fromkeys(norm for norm, _ in kept):
                by_name[(doc.currency, norm)].append(entry)
            if len(entry.invoice) >= MIN_INVOICE_NUMBER and any(c.isdigit() for c in entry.invoice):
                self.by_invoice[entry.invoice].append(entry)
        self.currencies = tuple(sorted({code for code, _ in by_currency}))
        self.by_currency = {key: SortedAmounts(pairs) for key, pairs in by_currency.items()}
        self.by_converted = {key: SortedAmounts(pairs) for key, pairs in by_converted.items()}
        self.by_name = {key: ByDate(entries) for key, entries in by_name.items()}
        self.names = sorted({norm for _, norm in by_name})
        self._like: dict[tuple[str, float], tuple[str, ...]] = {}

    def exact(self, currency: str, amount: int) -> list[Indexed]:
        """Documents in ``currency`` whose total (or total plus printed tip) is ``amount``."""
        return self.by_total.get((currency, amount), [])

    def in_currency(
        self, currency: str, low: int, high: int, first: date, last: date, converted: bool
    ) -> Iterator[Indexed]:
        """Documents in ``currency`` with totals (or, ``converted``, converted amounts) in
        [low, high], dated ``first`` to ``last``."""
        table = self.by_converted if converted else self.by_currency
        for month in range(_month(first), _month(last) + 1):
            amounts = table.get((currency, month))
            if amounts is not None:
                for entry in amounts.between(low, high):
                    if first <= entry.doc.date <= last:
                        yield entry

    def names_like(self, name: str, least: float) -> tuple[str, ...]:
        """The documents' normalised names at least ``least`` similar to ``name`` (computed
        once per name: a statement books the same merchants again and again)."""
        key = (name, least)
        if key not in self._like:
            found = process.extract(
                name, self.names, scorer=fuzz.WRatio, score_cutoff=least, limit=None
            )
            # WRatio first, in C over every name; then the stricter comparison of short names.
            self._like[key] = tuple(
                sorted(choice for choice, _, _ in found if similarity(name, choice) >= least)
            )
        return self._like[key]

    def of_merchant(
        self, currency: str, name: str, least: float, last: date, days: int
    ) -> Iterator[Indexed]:
        """Documents in ``currency`` of a merchant like ``name``, dated ``days`` days up to
        ``last`` (each once, even when both its names are alike)."""
        first, seen = last - timedelta(days=days), set()
        for norm in self.names_like(name, least):
            dated = self.by_name.get((currency, norm))
            if dated is None:
                continue
            for entry in dated.between(first, last):
                if entry.doc.id not in seen:
                    seen.add(entry.doc.id)
                    yield entry

    def named_in(self, text: str) -> list[Indexed]:
        """Documents whose invoice number the text contains, as a word or split over two or
        three words ('RE 2024-0042' finds RE20240042)."""
        words = [compact(word) for word in text.split()]
        words = [word for word in words if word]
        found: dict[str, Indexed] = {}
        for start in range(len(words)):
            for width in (1, 2, 3):
                if start + width > len(words):
                    break
                for entry in self.by_invoice.get("".join(words[start : start + width]), ()):
                    found.setdefault(entry.doc.id, entry)
        return list(found.values())


def _month(day: date) -> int:
    return day.year * 12 + day.month - 1
