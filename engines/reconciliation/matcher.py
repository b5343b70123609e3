"""Matching bank transactions to documents: candidates from the index, scored by the signals,
then a decision per transaction (``decisions.decide``).

Order does not matter: transactions and documents are taken sorted by id, ties broken by id,
and a rival is looked for among all transactions before any is decided.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import date, timedelta
from decimal import Decimal

from . import signals
from .decisions import decide
from .index import DocumentIndex, Indexed, cents
from .names import SHORT_NAME, normalise, similarity
from .policy import (
    CARD_LAG_DAYS,
    CONVERSION_TOLERANCE,
    DIFFERENT_MERCHANT,
    EARLY_DAYS,
    INVOICE_LAG_DAYS,
    SIMILAR_MERCHANT,
    SPLIT_MAX_PARTS,
    SPLIT_MAX_POOL,
    TIP_ALLOWANCE,
    MatchSettings,
)
from .types import BankTransaction, Candidate, CandidateDocument, Decision, Rates, Signal

CENT = Decimal("0.01")


class Matcher:
    """One matching run: the documents indexed, the rates cached per day."""

    def __init__(
        self,
        documents: Iterable[CandidateDocument],
        rates: Rates,
        settings: MatchSettings | None = None,
        rejected: Iterable[tuple[str, str]] = (),
    ) -> None:
        self.index = DocumentIndex(documents)
        self.rates = rates
        self.settings = settings or MatchSettings()
        self.rejected = frozenset(rejected)
        self._rates: dict[tuple[str, str, date], Decimal | None] = {}

    def rate(self, source: str, target: str, on: date) -> Decimal | None:
        key = (source, target, on)
        if key not in self._rates:
            self._rates[key] = self.rates.rate(source, target, on)
        return self._rates[key]

    # Candidates -----------------------------------------------------------------------------

    def candidates(self, txn: BankTransaction) -> list[Candidate]:
        """The transaction's candidates, best first (score, then single before split/partial,
        then document ids), those under the floor left out."""
        paid = abs(txn.amount)
        if paid == 0:
            return []
        counterparty = normalise(txn.counterparty or txn.reference)
        referenced = self.index.named_in(f"{txn.reference} {txn.counterparty}")
        named = {entry.doc.id for entry in referenced}
        pool: dict[str, Indexed] = {}
        for entry in (*self._single_pool(txn, paid, counterparty), *referenced):
            pool.setdefault(entry.doc.id, entry)
        found: list[Candidate] = []
        for doc_id, entry in pool.items():
            if (txn.id, doc_id) in self.rejected:
                continue
            scored = self._score(txn, paid, counterparty, entry, doc_id in named)
            if scored is not None:
                found.append(scored)
        found.extend(self._splits(txn, paid, counterparty))
        floor = self.settings.floor
        kept = [candidate for candidate in found if candidate.score >= floor]
        kept.sort(key=lambda c: (-c.score, c.kind != "single", c.document_ids))
        return kept

    def _single_pool(self, txn: BankTransaction, paid: Decimal, counterparty: str) -> list[Indexed]:
        index, amount = self.index, cents(paid)
        last = max(txn.booking_date, txn.value_date or txn.booking_date)
        window = INVOICE_LAG_DAYS + (last - txn.booking_date).days
        first, after = last - timedelta(days=window), last + timedelta(days=EARLY_DAYS)
        pool = [
            entry for entry in index.exact(txn.currency, amount) if first <= entry.doc.date <= after
        ]
        # A tip written on the slip: the same currency, a card booking's window, a total a
        # little under the amount — only of a merchant like the counterparty.
        # Not when a receipt of that merchant has the very amount: a guessed tip would only
        # crowd the list below it.
        low = int(amount / (1 + TIP_ALLOWANCE))
        exact_here = any(_same_merchant(counterparty, entry) for entry in pool)
        if counterparty and not exact_here:
            pool.extend(
                entry
                for entry in index.of_merchant(
                    txn.currency, counterparty, SIMILAR_MERCHANT, last, CARD_LAG_DAYS
                )
                if entry.doc.tip is None and low <= entry.cents < amount
            )
        # Another currency: its total converted at the booking date within the tolerance.
        for code in index.currencies:
            if code == txn.currency:
                continue
            rate = self.rate(code, txn.currency, txn.booking_date)
            if rate is not None and rate > 0:
                low = int(paid / (rate * (1 + CONVERSION_TOLERANCE)) * 100)
                high = int(paid / (rate * (1 - CONVERSION_TOLERANCE)) * 100) + 1
                stored = False
            elif txn.currency == self.settings.currency:
                # No rate: the converted amount extraction stored (at the document's date).
                low = int(paid * (1 - CONVERSION_TOLERANCE) * 100)
                high = int(paid * (1 + CONVERSION_TOLERANCE) * 100) + 1
                stored = True
            else:
                continue
            # A converted amount within the tolerance is common (2.5% either way): only a
            # merchant not clearly another one is worth scoring.
            pool.extend(
                entry
                for entry in index.in_currency(code, low, high, first, after, stored)
                if not _another_merchant(counterparty, entry)
            )
        return pool

    def _converted(self, txn: BankTransaction, doc: CandidateDocument) -> Decimal | None:
        """The document's total (with its printed tip) in the booking's currency."""
        if doc.currency == txn.currency:
            return None
        total = doc.total + (doc.tip or 0)
        rate = self.rate(doc.currency, txn.currency, txn.booking_date)
        if rate is not None:
            return (total * rate).quantize(CENT)
        if txn.currency == self.settings.currency and doc.converted_amount is not None:
            if not doc.tip or not doc.total:
                return doc.converted_amount
            return (doc.converted_amount * (doc.total + doc.tip) / doc.total).quantize(CENT)
        return None

    def _score(
        self,
        txn: BankTransaction,
        paid: Decimal,
        counterparty: str,
        entry: Indexed,
        referenced: bool,
    ) -> Candidate | None:
        doc = entry.doc
        fit = signals.amount(paid, txn.currency, doc, self._converted(txn, doc), referenced)
        if fit is None:
            return None
        when = signals.date_window(txn, doc, referenced)
        if when is None:
            return None
        found: list[Signal | None] = [
            fit.signal,
            when,
            signals.merchant(counterparty, txn.counterparty or txn.reference, entry.names),
            signals.reference(referenced, doc),
            signals.currency(txn, doc),
            signals.card(txn, doc),
        ]
        kept = tuple(signal for signal in found if signal is not None)
        score = round(sum(signal.contribution for signal in kept), 2)
        return Candidate((doc.id,), fit.kind, score, kept)

    def _splits(self, txn: BankTransaction, paid: Decimal, counterparty: str) -> list[Candidate]:
        """Two or three receipts of the counterparty's merchant, dated within a card booking's
        lag, whose totals add up to the amount exactly (same currency only)."""
        if not counterparty:
            return []
        amount = cents(paid)
        last = max(txn.booking_date, txn.value_date or txn.booking_date)
        pool = sorted(
            (
                entry
                for entry in self.index.of_merchant(
                    txn.currency, counterparty, SIMILAR_MERCHANT, last, CARD_LAG_DAYS
                )
                if entry.cents < amount and (txn.id, entry.doc.id) not in self.rejected
            ),
            key=lambda entry: (entry.cents, entry.doc.id),
        )[:SPLIT_MAX_POOL]
        found: list[Candidate] = []
        for combo in _adding_up(pool, amount):
            found.append(self._split(txn, paid, counterparty, combo))
        return found

    def _split(
        self, txn: BankTransaction, paid: Decimal, counterparty: str, combo: tuple[Indexed, ...]
    ) -> Candidate:
        docs = sorted((entry.doc for entry in combo), key=lambda d: d.id)
        amount = signals.split_amount(paid, txn.currency, docs)
        # The weakest part speaks for the split: its latest date, its least similar name.
        dates = [signals.date_window(txn, doc, False) for doc in docs]
        names = [
            signals.merchant(counterparty, txn.counterparty or txn.reference, entry.names)
            for entry in combo
        ]
        weakest: list[Signal | None] = [
            min((s for s in dates if s is not None), key=lambda s: s.contribution, default=None),
            min((s for s in names if s is not None), key=lambda s: s.contribution, default=None),
        ]
        kept = (amount, *(s for s in weakest if s is not None), signals.currency(txn, docs[0]))
        score = round(sum(signal.contribution for signal in kept), 2)
        return Candidate(tuple(doc.id for doc in docs), "split", score, kept)


def _same_merchant(counterparty: str, entry: Indexed) -> bool:
    """One of the document's names is at least similar to the counterparty."""
    return any(similarity(counterparty, norm) >= SIMILAR_MERCHANT for norm, _ in entry.names)


def _another_merchant(counterparty: str, entry: Indexed) -> bool:
    """Both sides name a merchant, and they are clearly not the same one."""
    return (
        bool(counterparty)
        and all(
            len(norm) >= SHORT_NAME and similarity(counterparty, norm) < DIFFERENT_MERCHANT
            for norm, _ in entry.names
        )
        and bool(entry.names)
    )


def _adding_up(pool: list[Indexed], amount: int) -> list[tuple[Indexed, ...]]:
    """The pairs and triples of ``pool`` (sorted by amount) whose amounts add up to ``amount``:
    the last part is looked up by its amount, and a loop stops once the parts are too large."""
    position: dict[int, list[int]] = defaultdict(list)
    for at, entry in enumerate(pool):
        position[entry.cents].append(at)
    found: list[tuple[Indexed, ...]] = []
    for i, first in enumerate(pool):
        if first.cents * 2 > amount:
            break
        found.extend((first, pool[k]) for k in position.get(amount - first.cents, ()) if k > i)
        if SPLIT_MAX_PARTS < 3:
            continue
        for j in range(i + 1, len(pool)):
            rest = amount - first.cents - pool[j].cents
            if rest < pool[j].cents:
                break
            found.extend((first, pool[j], pool[k]) for k in position.get(rest, ()) if k > j)
    return found


def match(
    transactions: Iterable[BankTransaction],
    documents: Iterable[CandidateDocument],
    rates: Rates,
    settings: MatchSettings | None = None,
    rejected: Iterable[tuple[str, str]] = (),
    manual: Iterable[str] = (),
) -> list[Decision]:
    """A decision for every transaction (in id order). ``rejected`` holds the (transaction id,
    document id) pairs a person rejected or undid: they are never proposed again. ``manual``
    holds documents a person took back from an automatic match: still proposed, never matched
    automatically again."""
    matcher = Matcher(documents, rates, settings, rejected)
    chosen = matcher.settings
    ranked = {txn.id: matcher.candidates(txn) for txn in sorted(transactions, key=lambda t: t.id)}
    # Every transaction's score for each document: a second transaction that wants the same
    # document within the margin is a rival, whichever was looked at first.
    wanted: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for txn_id, candidates in ranked.items():
        for candidate in candidates:
            for doc_id in candidate.document_ids:
                wanted[doc_id].append((candidate.score, txn_id))
    kept = frozenset(manual)
    return [
        decide(txn_id, candidates, wanted, chosen, kept) for txn_id, candidates in ranked.items()
    ]
