"""The in-memory search index: BM25 as the reference ranks it, updates in place, typos, fusion."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ranking.lexical import rank
from engines.ranking.search_index import (
    SearchIndex,
    diversify,
    fuse,
    fused_top,
    fusion_depth,
    top,
)
from engines.ranking.vocabulary import understand
from tests.hypothesis_profiles import examples

WORDS = [
    "shell",
    "fuel",
    "diesel",
    "starbucks",
    "latte",
    "coffee",
    "rewe",
    "milk",
    "bread",
    "aral",
    "marriott",
    "adobe",
]
texts = st.fixed_dictionaries(
    {
        "merchant": st.sampled_from(WORDS),
        "category": st.sampled_from(["Fuel", "Meals", "Groceries", None]),
        "summary": st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join),
        "lineItems": st.lists(st.sampled_from(WORDS), max_size=4).map(" ".join),
    }
)


def build(docs: list[dict[str, str | None]]) -> tuple[SearchIndex, np.ndarray]:
    index = SearchIndex(4)
    for i, fields in enumerate(docs):
        index.upsert(f"d{i}", fields, None)
    return index, index.rows_of([f"d{i}" for i in range(len(docs))])


# Words that name no category or kind (``engines.ranking.vocabulary``): their scores are the
# reference BM25's; the others are checked in tests/documents/test_vocabulary.py.
PLAIN = [word for word in WORDS if not any(term.concepts for term in understand(word))]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(texts, min_size=1, max_size=25), st.lists(st.sampled_from(PLAIN), min_size=1))
def test_exact_words_score_as_the_reference_bm25(docs: list, words: list[str]) -> None:
    query = " ".join(words)
    index, rows = build(docs)
    scores = index.lexical_scores(query, rows)
    expected = {item.index: item.score for item in rank(query, docs)}
    for i, score in enumerate(scores):
        assert abs(float(score) - expected.get(i, 0.0)) < 1e-3 * max(1.0, expected.get(i, 0.0))


def test_prefixes_typos_and_updates() -> None:
    index, rows = build(
        [{"merchant": "Starbucks"}, {"merchant": "Marriott"}, {"merchant": "Shell"}]
    )
    assert index.lexical_scores("starb", rows)[0] > 0  # a prefix
    assert index.lexical_scores("starbuks", rows)[0] > 0  # one letter missing
    assert index.lexical_scores("marriot", rows)[1] > 0  # prefix of the right word
    assert index.lexical_scores("mariott", rows)[1] > 0  # one letter missing inside
    assert index.lexical_scores("shlel", rows)[2] > 0  # two letters swapped
    assert not index.lexical_scores("shxxl", rows).any()  # two edits: no match
    index.upsert("d2", {"merchant": "Aral"}, None)  # a correction replaces the row's words
    assert not index.lexical_scores("shell", rows).any()
    assert index.lexical_scores("aral", rows)[2] > 0
    assert len(index) == 3


def test_fusion_rewards_both_lists_and_ignores_weak_evidence() -> None:
    lexical = np.array([5.0, 0.0, 1.0, 0.0], dtype=np.float32)
    similarity = np.array([0.5, 0.6, 0.1, 0.05], dtype=np.float32)
    distinctive = np.array([True, False, False, False])
    fused = fuse(lexical, similarity, distinctive=distinctive)
    assert fused[0] > fused[1] > 0  # found by both beats found by one
    assert fused[2] == 0  # matched only a common word, and not near in meaning
    assert fused[3] == 0
    assert top(fused, 5).rows == [0, 1] and top(fused, 5).matched == 2
    words_only = fuse(lexical, None)
    assert top(words_only, 5).rows == [0, 2]  # without meaning every word match counts


def reference_top(scores: np.ndarray, k: int) -> list[int]:
    """Every positive score sorted: best first, ties to the lower position."""
    (matched,) = np.nonzero(scores > 0)
    return [int(i) for i in matched[np.lexsort((matched, -scores[matched]))][:k]]


# Few distinct values, so that ties (identical documents score alike) are common.
scores_of = st.integers(min_value=1, max_value=400).flatmap(
    lambda n: st.tuples(
        st.lists(st.sampled_from([0.0, 0.0, 0.5, 1.0, 2.5, 3.7]), min_size=n, max_size=n),
        st.lists(st.sampled_from([-0.2, 0.0, 0.1, 0.15, 0.3, 0.31, 0.6]), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n),
    )
)


@settings(max_examples=examples(150), deadline=None)
@given(
    scores_of,
    st.integers(min_value=1, max_value=60),
    st.sampled_from(["both", "words"]),
    st.booleans(),
)
def test_fusing_the_heads_gives_what_fusing_every_candidate_gives(
    lists: tuple[list[float], list[float], list[bool], list[bool]],
    k: int,
    signals: str,
    tiered: bool,
) -> None:
    lexical = np.array(lists[0], dtype=np.float32)
    similarity = np.array(lists[1], dtype=np.float32) if signals == "both" else None
    distinctive = np.array(lists[2])
    # Those matching every distinctive word (``WordMatch.complete``): some of the word matches.
    first = np.array(lists[3]) & distinctive & (lexical > 0) if tiered else None
    every = fuse(lexical, similarity, distinctive=distinctive, first=first)
    best = fused_top(lexical, similarity, k, distinctive=distinctive, first=first)
    if first is not None and similarity is not None:
        ranked_first = [i for i in best.ranked.rows if first[i]]
        assert best.ranked.rows[: len(ranked_first)] == ranked_first  # they lead
    assert best.ranked.rows == reference_top(every, k)
    assert best.scores == [float(every[i]) for i in best.ranked.rows]
    assert best.ranked.matched == int(np.count_nonzero(every > 0))
    assert top(every, k).rows == best.ranked.rows


def test_fusion_depth_is_where_a_lower_rank_cannot_reach_the_page() -> None:
    depth = fusion_depth(20)
    assert depth == 60
    # Below both heads a candidate scores at most the weights over (60 + depth + 1): less than
    # the 20th best's least possible score, 1 / (60 + 20); one rank shallower would not be.
    assert (0.5 + 1.0) / (60 + depth + 1) < 1 / (60 + 20)
    assert not (0.5 + 1.0) / (60 + depth) < 1 / (60 + 20)
    assert fusion_depth(5, lexical_weight=1.0) == 70  # equal weights: 2 / 131 < 1 / 65
    assert fusion_depth(1000) == 1530


def test_a_long_tail_does_not_change_the_head() -> None:
    """10k candidates: the one document ranked 30th by both signals beats those first by one
    signal and absent from the other, as fusing every candidate ranks it."""
    n = 10_000
    rng = np.random.default_rng(7)
    lexical = np.where(rng.random(n) < 0.3, rng.random(n) * 5, 0).astype(np.float32)
    similarity = (rng.random(n) * 0.8).astype(np.float32)
    every = fuse(lexical, similarity)
    for k in (1, 5, 20, 200):
        best = fused_top(lexical, similarity, k)
        assert best.ranked.rows == reference_top(every, k)
        assert best.ranked.matched == int(np.count_nonzero(every > 0))


def test_rows_of_leaves_unknown_ids_out() -> None:
    index, _ = build([{"merchant": "Shell"}, {"merchant": "Aral"}])
    assert index.rows_of(["d1", "gone", "d0"]).tolist() == [1, 0]
    assert index.rows_of([]).tolist() == []
    assert index.rows_of(["gone"]).tolist() == []


def test_rows_of_the_same_candidates_again_and_after_they_change() -> None:
    index, _ = build([{"merchant": "Shell"}, {"merchant": "Aral"}, {"merchant": "Rewe"}])
    first = index.rows_of(["d2", "d0"])
    again = index.rows_of(["".join(["d", "2"]), "".join(["d", "0"])])  # equal, new strings
    assert again is first and again.tolist() == [2, 0]
    assert not again.flags.writeable  # shared between searches: nobody may change it
    index.upsert("d3", {"merchant": "Lidl"}, None)  # a new document among the candidates
    assert index.rows_of(["d2", "d3", "d0"]).tolist() == [2, 3, 0]
    assert index.rows_of(["d0", "d2"]).tolist() == [0, 2]  # other order, other answer
    index.upsert("d0", {"merchant": "Esso"}, None)  # a correction keeps the row
    assert index.rows_of(["d0", "d2"]).tolist() == [0, 2]


def test_top_breaks_ties_at_the_cut_by_position() -> None:
    scores = np.array([0.0, 1.0] + [0.5] * 50, dtype=np.float32)
    assert top(scores, 3).rows == [1, 2, 3]
    assert top(scores, 3).matched == 51


def test_diversify_prefers_a_different_document() -> None:
    same = np.array([1.0, 0.0], dtype=np.float32)
    other = np.array([0.0, 1.0], dtype=np.float32)
    far = np.array([-1.0, 0.0], dtype=np.float32)
    picked = diversify([1.0, 0.99, 0.98, 0.0], np.stack([same, same, other, far]), 2)
    assert picked == [0, 2]
