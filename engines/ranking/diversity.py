"""Maximal marginal relevance: pick results that are relevant and unlike those already picked."""

from __future__ import annotations

from collections.abc import Callable, Sequence

DEFAULT_LAMBDA = 0.5


def mmr(
    scores: Sequence[float],
    similarity: Callable[[int, int], float],
    k: int,
    trade_off: float = DEFAULT_LAMBDA,
) -> list[int]:
    """Indices of up to ``k`` items: each maximises ``λ·score − (1−λ)·max similarity to picked``.

    Scores are normalised to [0, 1] first so the trade-off means the same for any scorer.
    """
    if not scores or k <= 0:
        return []
    top = max(scores) or 1.0
    relevance = [score / top for score in scores]
    remaining = list(range(len(scores)))
    picked: list[int] = []
    while remaining and len(picked) < k:

        def gain(i: int) -> float:
            redundancy = max((similarity(i, j) for j in picked), default=0.0)
            return trade_off * relevance[i] - (1 - trade_off) * redundancy

        best = max(remaining, key=gain)  # max keeps the first of equals: rank order breaks ties
        picked.append(best)
        remaining.remove(best)
    return picked


def jaccard(a: set[str], b: set[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)
