"""The in-memory search index: BM25 as the reference ranks it, updates in place, typos, fusion."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.ranking.lexical import rank
from engines.ranking.search_index import SearchIndex, diversify, fuse, top

WORDS = ["shell", "fuel", "diesel", "starbucks", "latte", "coffee", "rewe", "milk", "bread"]
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
    return index, index.rows_of(f"d{i}" for i in range(len(docs)))


@settings(max_examples=60, deadline=None)
@given(st.lists(texts, min_size=1, max_size=25), st.lists(st.sampled_from(WORDS), min_size=1))
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


def test_diversify_prefers_a_different_document() -> None:
    same = np.array([1.0, 0.0], dtype=np.float32)
    other = np.array([0.0, 1.0], dtype=np.float32)
    far = np.array([-1.0, 0.0], dtype=np.float32)
    picked = diversify([1.0, 0.99, 0.98, 0.0], np.stack([same, same, other, far]), 2)
    assert picked == [0, 2]
