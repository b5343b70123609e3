"""The matcher's own input and output types: a bank transaction, a candidate document, and what
the matcher says about each transaction (ranked candidates, each with its signals and reasons).

Plain frozen dataclasses: the engine knows nothing of how transactions or documents are stored;
the code that reads them from the store builds these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Protocol

from domain.transactions import MatchKind, MatchOutcome

# The kinds of candidate and the outcomes are the domain's vocabulary (the API shows them too).
CandidateKind = MatchKind
Outcome = MatchOutcome


@dataclass(frozen=True)
class BankTransaction:
    """One booking of a bank or card statement. ``amount`` is signed as the bank books it
    (money out is negative); the matcher compares its size with a document's total."""

    id: str
    booking_date: date
    amount: Decimal
    currency: str
    value_date: date | None = None
    counterparty: str = ""
    reference: str = ""  # the booking text: purpose, reference, card line
    account: str = ""
    card_last4: str | None = None  # card_ending(reference) when the booking text has one


@dataclass(frozen=True)
class CandidateDocument:
    """A receipt or invoice as the matcher sees it. ``converted_amount`` is the total in the
    workspace's currency at the document's date, when extraction converted it."""

    id: str
    date: date
    total: Decimal
    currency: str
    converted_amount: Decimal | None = None
    merchant: str = ""
    seller: str = ""  # the legal name ("Aral AG") beside the brand people know ("Aral")
    invoice_number: str = ""
    card_last4: str | None = None
    tip: Decimal | None = None  # when the receipt prints it; the total then excludes it


class Rates(Protocol):
    """Exchange rates for the amount signal: how many ``to_currency`` one ``from_currency``
    buys on ``on``, or None when no rate is known (the foreign candidate is then not scored)."""

    def rate(self, from_currency: str, to_currency: str, on: date) -> Decimal | None: ...


@dataclass(frozen=True)
class Signal:
    """One piece of evidence: its name, its contribution to the score (negative speaks against
    the match) and the sentence a person reads."""

    name: str
    contribution: float
    reason: str


@dataclass(frozen=True)
class Candidate:
    """One way to account for a transaction: the document(s), the kind, the score (the sum of
    the signals' contributions) and the signals themselves."""

    document_ids: tuple[str, ...]
    kind: CandidateKind
    score: float
    signals: tuple[Signal, ...]

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(signal.reason for signal in self.signals)


@dataclass(frozen=True)
class Decision:
    """What the matcher says about one transaction: matched automatically (``matched``), or
    left for review with the ranked ``candidates`` (best first) and why it was not matched."""

    transaction_id: str
    outcome: Outcome
    candidates: tuple[Candidate, ...] = ()
    matched: Candidate | None = None
    why: str = ""
    rivals: tuple[str, ...] = field(default=())  # transactions that want the same document
