"""The postings of a search index (``engines.ranking.search_index``): for each term, the rows
that contain it and its weighted frequency in each, as compressed sparse rows (CSR) in numpy.

Why arrays and not a dict per term: a ``{row: weight}`` entry costs ~50 bytes of Python objects
and loading a snapshot rebuilt millions of them (most of a 100k-document load's 4.5 s); here an
entry costs 12 bytes (its row and weight in the term's run, its term in the row's run) and a
snapshot's arrays are the postings themselves.

* The **base** is two CSRs of one set of entries: by term (``offsets`` into ``rows`` and
  ``weights``, rows ascending) and by row (``row_offsets`` into ``row_terms``), terms numbered
  in sorted order.
* Changes go to an **overlay**: a row that changes is marked ``stale`` (its base entries stop
  counting) and its new entries are kept in dicts by term. When the overlay holds more than
  ``1 / MERGE_SHARE`` of the base's entries (and at least ``MERGE_MIN``), both are merged into
  a new base (a sort of every entry: ~0.5 s at 100k documents), which bounds its memory.
* Each term's count of live entries says which terms any row still holds: prefix and
  one-edit expansions consider only those; a term whose rows all left stays known (an exact
  match on it finds nothing and, as before, blocks the fuzzy expansion).
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float32]
Int32s = npt.NDArray[np.int32]
Int64s = npt.NDArray[np.int64]

# Words this long or longer are expanded to words one edit away (misspellings).
MIN_FUZZY = 5
# The letters of a term (``engines.text.tokenize`` keeps [0-9a-z] runs).
ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"
# The overlay is merged into the base past this share of the base's entries (and MERGE_MIN).
MERGE_SHARE = 8
MERGE_MIN = 4096


@dataclass(frozen=True)
class PostingsArrays:
    """Postings as flat data (``Postings.to_arrays``): term ``i`` (``terms`` sorted) has the
    rows ``rows[offsets[i]:offsets[i + 1]]`` (ascending) with the weighted frequencies
    ``weights`` there; row ``r`` has the terms ``row_terms[row_offsets[r]:row_offsets[r + 1]]``."""

    terms: list[str]
    offsets: Int64s
    rows: Int32s
    weights: Floats
    row_offsets: Int64s
    row_terms: Int32s


class Postings:
    """Term → rows and weights, for rows numbered from 0; see the module's docstring."""

    def __init__(self) -> None:
        self.terms: list[str] = []
        self._ids: dict[str, int] = {}
        self._offsets = np.zeros(1, dtype=np.int64)
        self._rows = np.zeros(0, dtype=np.int32)
        self._weights = np.zeros(0, dtype=np.float32)
        self._row_offsets = np.zeros(1, dtype=np.int64)
        self._row_terms = np.zeros(0, dtype=np.int32)
        self._size = 0  # rows numbered so far
        self._stale = np.zeros(0, dtype=bool)  # base rows whose entries no longer count
        self._any_stale = False
        # By term: the entries that count (an int32 array.array: 4 bytes a term where a list
        # took ~36, indexed from Python without numpy's per-call cost).
        self._live = array("i")
        self._added: dict[int, dict[int, float]] = {}  # overlay: term → row → weight
        self._row_added: dict[int, tuple[int, ...]] = {}  # overlay: row → its terms
        self._pending = 0  # the overlay's entries
        self._vocabulary: list[str] | None = None  # live terms, sorted

    @property
    def nbytes(self) -> int:
        """Bytes of the base's arrays."""
        arrays = (self._offsets, self._rows, self._weights, self._row_offsets, self._row_terms)
        live = len(self._live) * self._live.itemsize
        return sum(int(a.nbytes) for a in arrays) + int(self._stale.nbytes) + live

    # -- writes ------------------------------------------------------------------------------

    def set_row(self, row: int, weights: Mapping[str, float]) -> None:
        """Make ``weights`` (term → weighted frequency) the terms of ``row`` (a row already
        numbered, or the next one), replacing what it held.

        Plain Python per row (a build calls this for every document): numpy's per-call cost
        on a dozen terms made a build half as slow again."""
        if row >= self._size:
            self._size = row + 1
        old = self._row_added.pop(row, None)
        dropped: list[int] = []
        if old is not None:
            for term in old:
                del self._added[term][row]
            self._pending -= len(old)
            dropped = self._count(old, -1)
        elif row < len(self._stale) and not self._stale[row]:
            self._stale[row] = True
            self._any_stale = True
            dropped = self._count(self._base_terms(row).tolist(), -1)
        ids = tuple(map(self._term_id, weights))
        added = self._added
        for term, weight in zip(ids, weights.values(), strict=True):
            postings = added.get(term)
            if postings is None:
                postings = added[term] = {}
            postings[row] = weight
        self._row_added[row] = ids
        self._pending += len(ids)
        born = self._count(ids, 1)
        # The vocabulary changes only if a term left or came for good: a row rewritten with
        # its own unique words (an invoice number) takes them out and puts them back.
        if dropped != born and set(dropped) != set(born):
            self._vocabulary = None
        if self._pending > max(MERGE_MIN, len(self._rows) // MERGE_SHARE):
            self._merge()

    def _term_id(self, term: str) -> int:
        found = self._ids.get(term)
        if found is not None:
            return found
        found = self._ids[term] = len(self.terms)
        self.terms.append(term)
        self._live.append(0)
        return found

    def _count(self, terms: Sequence[int], step: int) -> list[int]:
        """Add ``step`` to the live counts of ``terms`` (distinct); the terms that started or
        stopped counting."""
        live = self._live
        edge = 1 if step > 0 else 0
        crossed = []
        for term in terms:
            live[term] += step
            if live[term] == edge:
                crossed.append(term)
        return crossed

    def _base_terms(self, row: int) -> Int32s:
        return self._row_terms[self._row_offsets[row] : self._row_offsets[row + 1]]

    def _merge(self) -> None:
        """Make the base and the overlay one new base."""
        self._adopt(self._merged())

    def _merged(self) -> PostingsArrays:
        """The base's live entries and the overlay's as a new base, terms renumbered in sorted
        order; reads the postings, changes nothing."""
        owners = np.repeat(
            np.arange(len(self._offsets) - 1, dtype=np.int32), np.diff(self._offsets)
        )
        keep = ~self._stale[self._rows] if self._any_stale else slice(None)
        added = self._added
        count = self._pending
        added_terms = np.fromiter(
            (t for t, rows in added.items() for _ in rows), dtype=np.int32, count=count
        )
        added_rows = np.fromiter(
            (r for rows in added.values() for r in rows), dtype=np.int32, count=count
        )
        added_weights = np.fromiter(
            (w for rows in added.values() for w in rows.values()), dtype=np.float32, count=count
        )
        order = sorted(range(len(self.terms)), key=self.terms.__getitem__)
        renumber = np.empty(len(self.terms), dtype=np.int32)
        renumber[order] = np.arange(len(self.terms), dtype=np.int32)
        terms = renumber[np.concatenate([owners[keep], added_terms])]
        rows = np.concatenate([self._rows[keep], added_rows])
        weights = np.concatenate([self._weights[keep], added_weights])
        # One int64 key per order: a single argsort, faster than lexsort's two passes.
        wide_terms, wide_rows = terms.astype(np.int64), rows.astype(np.int64)
        by_term = np.argsort((wide_terms << 32) | wide_rows)
        by_row = np.argsort((wide_rows << 32) | wide_terms)
        return PostingsArrays(
            terms=[self.terms[i] for i in order],
            offsets=_offsets(terms, len(self.terms)),
            rows=rows[by_term],
            weights=weights[by_term],
            row_offsets=_offsets(rows, self._size),
            row_terms=terms[by_row],
        )

    def _adopt(self, arrays: PostingsArrays) -> None:
        """Make ``arrays`` the base, the overlay empty."""
        size = len(arrays.row_offsets) - 1
        self.terms = list(arrays.terms)
        self._ids = {term: i for i, term in enumerate(self.terms)}
        self._offsets, self._rows, self._weights = arrays.offsets, arrays.rows, arrays.weights
        self._row_offsets, self._row_terms = arrays.row_offsets, arrays.row_terms
        self._size = size
        self._stale = np.zeros(size, dtype=bool)
        self._any_stale = False
        self._live = array("i", np.diff(self._offsets).astype(np.int32).tobytes())
        self._added, self._row_added, self._pending = {}, {}, 0
        self._vocabulary = None

    # -- snapshots ---------------------------------------------------------------------------

    def to_arrays(self) -> PostingsArrays:
        """The postings as flat arrays: the base's own (never written to: no copy), or the base
        merged with the overlay into new ones. Changes nothing, so searches may read the
        postings meanwhile (a snapshot is taken in a thread)."""
        if self._pending or self._any_stale or len(self._row_offsets) != self._size + 1:
            return self._merged()
        return PostingsArrays(
            terms=list(self.terms),
            offsets=self._offsets,
            rows=self._rows,
            weights=self._weights,
            row_offsets=self._row_offsets,
            row_terms=self._row_terms,
        )

    @classmethod
    def from_arrays(cls, arrays: PostingsArrays, size: int) -> Postings:
        """The postings ``to_arrays`` describes, for ``size`` rows (raises ``ValueError`` on
        arrays that disagree)."""
        entries = len(arrays.rows)
        _check_csr("offsets", arrays.offsets, len(arrays.terms), entries)
        _check_csr("row_offsets", arrays.row_offsets, size, entries)
        if arrays.weights.shape != arrays.rows.shape or arrays.row_terms.shape != (entries,):
            raise ValueError("the postings' arrays differ in length")
        if entries and not (int(arrays.rows.min()) >= 0 and int(arrays.rows.max()) < size):
            raise ValueError("a posting names a row the index does not hold")
        if entries and not (
            int(arrays.row_terms.min()) >= 0 and int(arrays.row_terms.max()) < len(arrays.terms)
        ):
            raise ValueError("a row names a term the index does not hold")
        postings = cls()
        postings._adopt(arrays)
        if len(postings._ids) != len(arrays.terms):
            raise ValueError("a term appears twice")
        return postings

    # -- reads -------------------------------------------------------------------------------

    def known(self, term: str) -> bool:
        """Whether ``term`` was ever a row's (even if no row holds it now)."""
        return term in self._ids

    def find(self, term: str) -> tuple[Int32s, Floats] | None:
        """The rows that hold ``term`` (each once) and its weighted frequency in each."""
        term_id = self._ids.get(term)
        if term_id is None or not self._live[term_id]:
            return None
        rows, weights = self._rows[:0], self._weights[:0]
        if term_id < len(self._offsets) - 1:
            start, end = self._offsets[term_id], self._offsets[term_id + 1]
            rows, weights = self._rows[start:end], self._weights[start:end]
            if self._any_stale:
                keep = ~self._stale[rows]
                rows, weights = rows[keep], weights[keep]
        added = self._added.get(term_id)
        if added:
            rows = np.concatenate(
                [rows, np.fromiter(added.keys(), dtype=np.int32, count=len(added))]
            )
            weights = np.concatenate(
                [weights, np.fromiter(added.values(), dtype=np.float32, count=len(added))]
            )
        return rows, weights

    def row_terms(self, row: int) -> list[str]:
        """The terms of ``row``."""
        ids: Sequence[int] | None = self._row_added.get(row)
        if ids is None:
            if row >= len(self._stale) or self._stale[row]:
                return []
            ids = self._base_terms(row).tolist()
        terms = self.terms
        return [terms[i] for i in ids]

    def with_prefix(self, prefix: str) -> list[str]:
        """The terms some row holds that start with ``prefix``, sorted."""
        if self._vocabulary is None:
            live = [term for term, count in zip(self.terms, self._live, strict=True) if count]
            # Base terms are numbered in sorted order: this sort mostly finds runs.
            self._vocabulary = sorted(live)
        vocabulary = self._vocabulary
        start = bisect.bisect_left(vocabulary, prefix)
        end = bisect.bisect_left(vocabulary, prefix + "\U0010ffff")
        return vocabulary[start:end]

    def one_edit(self, term: str) -> set[str]:
        """Terms some row holds one insertion, deletion, substitution or adjacent swap away
        from ``term``: every such string is made and looked up (~70 per letter: tens of
        microseconds). Terms are made of ``ALPHABET`` only (``engines.text.tokenize``), so this
        finds what a symmetric-deletion table found, without the table: building it took
        ~0.16 s at 10k documents (~10 entries a term), on load or on a first misspelling."""
        ids, live = self._ids, self._live
        return {
            word
            for word in edits(term)
            if word != term and (found := ids.get(word)) is not None and live[found]
        }


def _offsets(keys: Int32s, size: int) -> Int64s:
    """CSR offsets of entries whose keys (< ``size``) count ``np.bincount`` of them."""
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=size), out=offsets[1:])
    return offsets


def _check_csr(name: str, offsets: Int64s, size: int, entries: int) -> None:
    if offsets.shape != (size + 1,):
        raise ValueError(f"{name} has shape {offsets.shape}, not {(size + 1,)}")
    if offsets[0] != 0 or offsets[-1] != entries:
        raise ValueError(f"{name} do not span the postings")
    if size and bool((np.diff(offsets) < 0).any()):
        raise ValueError(f"{name} decrease")


def edits(term: str) -> set[str]:
    """Every string one deletion, adjacent swap, substitution or insertion (of a letter of
    ``ALPHABET``) away from ``term``."""
    splits = [(term[:i], term[i:]) for i in range(len(term) + 1)]
    found = {head + tail[1:] for head, tail in splits if tail}
    found |= {head + tail[1] + tail[0] + tail[2:] for head, tail in splits if len(tail) > 1}
    found |= {head + c + tail[1:] for head, tail in splits if tail for c in ALPHABET}
    found |= {head + c + tail for head, tail in splits for c in ALPHABET}
    return found


def near(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` are at most one edit apart (adjacent swaps count as one)."""
    if abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) <= 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))
