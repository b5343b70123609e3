"""Ranked search keeps the best k with a heap: the same documents, in the same order, as a
full sort would give, ties in candidate order."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engines.ranking.lexical import rank, top_ranked

WORDS = ["coffee", "cafe", "coffeeshop", "fuel", "shell", "latte", "tea", "receipt"]

texts = st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join)
candidates = st.lists(
    st.fixed_dictionaries({"merchant": texts, "summary": texts, "category": texts}),
    max_size=40,
)


@given(candidates=candidates, query=texts, k=st.integers(0, 45))
def test_top_k_is_the_head_of_the_full_ranking(
    candidates: list[dict[str, str]], query: str, k: int
) -> None:
    best, matched = top_ranked(query, candidates, k)
    full = rank(query, candidates)
    assert best == full[:k]
    assert matched == len(full)


def test_equal_scores_keep_candidate_order() -> None:
    same = [{"merchant": "Shell"} for _ in range(6)]
    best, matched = top_ranked("shell", same, 3)
    assert [item.index for item in best] == [0, 1, 2] and matched == 6
