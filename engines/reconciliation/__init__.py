"""Matching bank transactions to receipts and invoices, explaining every candidate.

Pure code: the caller reads transactions and documents, hands them in as ``BankTransaction``
and ``CandidateDocument`` with the rates to convert with, and stores the decisions. The
weights, windows and defaults are in ``policy``; ``docs/guide/matching.md`` explains them.
"""

from __future__ import annotations

from .decisions import decide
from .matcher import Matcher, match
from .names import card_ending, normalise, similarity
from .policy import WEIGHTS, MatchSettings
from .rates import RateBookRates
from .types import (
    BankTransaction,
    Candidate,
    CandidateDocument,
    CandidateKind,
    Decision,
    Outcome,
    Rates,
    Signal,
)

__all__ = [
    "WEIGHTS",
    "BankTransaction",
    "Candidate",
    "CandidateDocument",
    "CandidateKind",
    "Decision",
    "MatchSettings",
    "Matcher",
    "Outcome",
    "RateBookRates",
    "Rates",
    "Signal",
    "card_ending",
    "decide",
    "match",
    "normalise",
    "similarity",
]
