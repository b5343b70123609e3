"""BM25 over a few weighted fields, computed on the filtered candidates.

Each candidate is a mapping of field name → text. A query token matches a document token
exactly, or as a prefix (typing 'starb' finds 'starbucks') with a smaller weight. Inverse
document frequencies come from the candidate set itself, which is the filtered population the
user is searching in.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engines.text import tokenize

K1 = 1.2
B = 0.75
PREFIX_WEIGHT = 0.6
MIN_PREFIX = 3

DEFAULT_FIELD_WEIGHTS: Mapping[str, float] = {
    "merchant": 3.0,
    "invoiceId": 3.0,
    "receiptId": 3.0,
    "category": 2.0,
    "summary": 1.0,
    "lineItems": 1.0,
    "notes": 1.0,
}


@dataclass(frozen=True)
class Scored:
    """A candidate's index in the input and its score (> 0 means it matched)."""

    index: int
    score: float


def rank(
    query: str,
    candidates: Sequence[Mapping[str, str | None]],
    weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
) -> list[Scored]:
    """Candidates that match at least one query token, best first (stable for equal scores)."""
    return sorted(_scores(query, candidates, weights), key=lambda item: -item.score)


def top_ranked(
    query: str,
    candidates: Sequence[Mapping[str, str | None]],
    k: int,
    weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS,
) -> tuple[list[Scored], int]:
    """The ``k`` best of ``rank`` (the same order) and how many candidates match in all:
    a heap keeps k of n, where a page needs k, instead of sorting all n."""
    scored = _scores(query, candidates, weights)
    best = heapq.nsmallest(k, scored, key=lambda item: (-item.score, item.index))
    return best, len(scored)


def _scores(
    query: str,
    candidates: Sequence[Mapping[str, str | None]],
    weights: Mapping[str, float],
) -> list[Scored]:
    """BM25 score of each candidate that matches a query token, in candidate order."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not terms or not candidates:
        return []
    fields = [{name: tokenize(doc.get(name)) for name in weights} for doc in candidates]
    lengths = [sum(len(tokens) for tokens in doc.values()) for doc in fields]
    average = (sum(lengths) / len(lengths)) or 1.0
    vocab_per_doc = [{token for tokens in doc.values() for token in tokens} for doc in fields]

    def matches(term: str, vocab: set[str]) -> float:
        if term in vocab:
            return 1.0
        if len(term) >= MIN_PREFIX and any(word.startswith(term) for word in vocab):
            return PREFIX_WEIGHT
        return 0.0

    document_frequency = {
        term: sum(1 for vocab in vocab_per_doc if matches(term, vocab) > 0) for term in terms
    }
    n = len(candidates)
    scored = []
    for index, doc in enumerate(fields):
        total = 0.0
        norm = K1 * (1 - B + B * lengths[index] / average)
        for term in terms:
            df = document_frequency[term]
            if df == 0:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            weighted_tf = 0.0
            for name, tokens in doc.items():
                counts = Counter(tokens)
                exact = counts.get(term, 0)
                prefix = (
                    0
                    if exact or len(term) < MIN_PREFIX
                    else sum(c for word, c in counts.items() if word.startswith(term))
                )
                weighted_tf += weights[name] * (exact + PREFIX_WEIGHT * prefix)
            if weighted_tf:
                total += idf * weighted_tf * (K1 + 1) / (weighted_tf + norm)
        if total > 0:
            scored.append(Scored(index, total))
    return scored
