"""The search index's postings (``engines.ranking.postings``): CSR arrays with an overlay of
changed rows, merged past a share of the base. Random rewrites of rows are checked against a
plain dict of dicts (the representation they replaced) after every step, across merges and
through ``to_arrays``/``from_arrays`` taken mid-overlay."""

from __future__ import annotations

import random

import numpy as np
import pytest

from engines.ranking import postings as postings_module
from engines.ranking.postings import ALPHABET, Postings, PostingsArrays, edits, near

WORDS = ("hotel", "hotels", "hostel", "shell", "starbucks", "starbuck", "rewe", "latte", "lattes")


class Reference:
    """What the postings must answer: term → {row: weight}, every term ever seen kept."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[int, float]] = {}
        self.rows: dict[int, set[str]] = {}

    def set_row(self, row: int, weights: dict[str, float]) -> None:
        for term in self.rows.get(row, set()):
            del self.postings[term][row]
        for term, weight in weights.items():
            self.postings.setdefault(term, {})[row] = weight
        self.rows[row] = set(weights)

    def live(self) -> list[str]:
        return sorted(term for term, rows in self.postings.items() if rows)


def _check(postings: Postings, reference: Reference) -> None:
    for term, rows in reference.postings.items():
        assert postings.known(term)
        found = postings.find(term)
        if not rows:
            assert found is None
            continue
        assert found is not None
        got = dict(zip(found[0].tolist(), found[1].tolist(), strict=True))
        assert got == rows, term
    assert not postings.known("absent")
    for row, terms in reference.rows.items():
        assert sorted(postings.row_terms(row)) == sorted(terms)
    live = reference.live()
    assert postings.with_prefix("") == live
    assert postings.with_prefix("hot") == [w for w in live if w.startswith("hot")]
    for word in ("hotle", "starbuks", "lattte"):
        expected = {w for w in live if w != word and near(word, w)}
        assert postings.one_edit(word) == expected


@pytest.mark.parametrize("seed", range(4))
def test_random_rewrites_answer_as_dicts_across_merges(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(postings_module, "MERGE_MIN", 12)
    rng = random.Random(seed)
    postings, reference = Postings(), Reference()
    merged = 0
    for step in range(300):
        row = rng.randrange(min(step + 1, 40))
        if row > len(reference.rows):
            row = len(reference.rows)  # rows are numbered in turn
        words = rng.sample(WORDS, rng.randrange(0, 4))
        words += [f"w{rng.randrange(60)}x" for _ in range(rng.randrange(0, 3))]
        weights = {w: float(rng.choice((1, 2, 3, 4))) for w in words}
        base = postings._rows
        postings.set_row(row, weights)
        reference.set_row(row, weights)
        merged += postings._rows is not base
        _check(postings, reference)
        if step % 37 == 0:
            arrays = postings.to_arrays()
            assert arrays.terms == sorted(arrays.terms)
            postings = Postings.from_arrays(arrays, len(reference.rows))
            _check(postings, reference)
    assert merged >= 5  # the overlay was merged into the base, several times


def test_snapshot_arrays_that_disagree_are_refused() -> None:
    postings = Postings()
    postings.set_row(0, {"hotel": 3.0, "invoice": 1.0})
    postings.set_row(1, {"hotel": 1.0})
    arrays = postings.to_arrays()
    assert Postings.from_arrays(arrays, 2).find("hotel") is not None
    bad = {
        "row past the index": PostingsArrays(
            arrays.terms,
            arrays.offsets,
            np.array([0, 5, 0], dtype=np.int32),
            arrays.weights,
            arrays.row_offsets,
            arrays.row_terms,
        ),
        "term past the terms": PostingsArrays(
            arrays.terms,
            arrays.offsets,
            arrays.rows,
            arrays.weights,
            arrays.row_offsets,
            np.array([0, 9, 0], dtype=np.int32),
        ),
        "offsets short": PostingsArrays(
            arrays.terms,
            arrays.offsets[:-1],
            arrays.rows,
            arrays.weights,
            arrays.row_offsets,
            arrays.row_terms,
        ),
        "a term twice": PostingsArrays(
            ["hotel", "hotel"],
            arrays.offsets,
            arrays.rows,
            arrays.weights,
            arrays.row_offsets,
            arrays.row_terms,
        ),
    }
    for name, arrays_ in bad.items():
        with pytest.raises(ValueError):
            Postings.from_arrays(arrays_, 2)
        assert name


def test_edits_are_every_string_one_edit_away() -> None:
    made = edits("abc")
    assert {"bc", "ac", "ab", "bac", "acb", "xbc", "abz", "abcd", "9abc"} <= made
    assert all(near("abc", word) for word in made)
    assert len(made - {"abc"}) == 3 + 2 + 3 * 35 + 4 * 36 - 3  # minus insertions seen twice
    assert set("abc") <= set(ALPHABET)
