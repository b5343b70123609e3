"""An in-memory search index of one workspace: BM25 postings and embedding vectors.

Ranked search ranks every candidate the database's filters select, not the newest few: the
candidates arrive as ids, the index holds what ranking needs of each document (weighted term
frequencies per term, a length, a unit vector in a float32 matrix, 2 kB per document), and one
query costs a matrix-vector product and the postings of its few terms.

* **Lexical**: BM25 with field weights (``lexical.DEFAULT_FIELD_WEIGHTS``); a query token
  matches a word exactly, as a prefix (weight 0.6, 3+ letters) or, when it matches no word at
  all, words one edit away (weight 0.4, 5+ letters: misspellings). Document frequencies and the
  average length come from the candidates, the population the user is searching in.
* **Concepts**: a query word that names a kind of document ("invoice", "Rechnung") or a trade
  ("hotel", "Tankstelle", "taxi") matches the documents of that ``docType`` or category
  (``engines.ranking.vocabulary``), as an occurrence weighing ``CONCEPT_WEIGHT``; a word that
  names only a kind of document matches the kind, not the text.
* **Vector**: cosine between the query's embedding and each candidate's.
* **Fusion** (``fuse``): reciprocal rank fusion of the two rankings; see its docstring.
* **Diversity** (``diversify``): MMR with cosine between the documents' embeddings.

Rows are updated in place (``upsert``); ids never leave. Each row also keeps the state the
database's scope filters read (archived, exported) so that a search filtered by nothing else can
take its candidates from the index (``select``) rather than from a read of every id; a document
that may be deleted without leaving a trace (``RowState.may_vanish``) is reported by
``vanishing`` for the caller to check, and ``drop`` takes a deleted one out of ``select``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import TypeVar, cast

import numpy as np
import numpy.typing as npt

from engines.ranking.diversity import jaccard, mmr
from engines.ranking.lexical import DEFAULT_FIELD_WEIGHTS, K1, MIN_PREFIX, PREFIX_WEIGHT, B
from engines.ranking.postings import MIN_FUZZY, Postings, PostingsArrays
from engines.ranking.vocabulary import TYPE, QueryTerm, document_concepts, understand
from engines.text import tokenize

FUZZY_WEIGHT = 0.4
# A query word that names a concept the document carries (its category, its kind of document:
# ``engines.ranking.vocabulary``) counts as one occurrence in a field of this weight: the
# category field's, below a merchant's name, so "apple" ranks the Apple Store above groceries.
CONCEPT_WEIGHT = 2.0
# Reciprocal rank fusion's constant (Cormack et al. 2009): rank 1 scores 1/61, rank 10 1/70.
RRF_K = 60
# Fusion (``fuse``), chosen on bench/search.py's labelled queries: a candidate ranks by meaning
# with a cosine of at least MIN_SIMILARITY, by words when it matches a distinctive query token
# (``SearchIndex.lexical``); words weigh LEXICAL_WEIGHT against meaning's 1.
MIN_SIMILARITY = 0.15
LEXICAL_WEIGHT = 0.5

# Added to the fused score of a document that matches every distinctive query word: more than
# any fused score (at most (1 + LEXICAL_WEIGHT) / (RRF_K + 1)), so they rank first.
FIRST = 1.0
# Equal word scores are ordered by meaning: this much per unit of cosine (``_ties_by_meaning``).
TIE_BREAK = 1e-3

# MMR's λ over cosine between embeddings (0.5 let near-flat fused relevance lose to diversity).
MMR_TRADE_OFF = 0.7
# A query token in more than this share of the candidates is no evidence on its own.
COMMON_SHARE = 0.5

Floats = npt.NDArray[np.float32]
Bools = npt.NDArray[np.bool_]
Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Ranked:
    """Rows of the index, best first, and how many candidates matched in all."""

    rows: list[int]
    matched: int


@dataclass(frozen=True)
class RowState:
    """What the database's scope filters read of a document.

    ``archived``: True, False, or None when the stored value is not a boolean (matched by
    neither "only" nor "exclude", as the database's equality filters do); ``exported``: its
    export status is "exported"; ``may_vanish``: it can be deleted outright (an upload that was
    never acknowledged), which leaves nothing for a refresh to read.
    """

    archived: bool | None = False
    exported: bool = False
    may_vanish: bool = False


ACTIVE = RowState()
_ARCHIVED_CODES = {True: 1, False: 0, None: -1}


@dataclass(frozen=True)
class WordMatch:
    """What a query's words match among the candidates (``SearchIndex.lexical_match``):
    BM25 scores, distinctive matches, and the rows matching all distinctive words (None:
    fewer than two such words, or no row matches them all)."""

    scores: Floats
    distinctive: Bools
    complete: Bools | None


@dataclass(frozen=True)
class IndexArrays:
    """A ``SearchIndex`` as flat data (``SearchIndex.to_arrays``): ids and concept codes as
    lists, every row's data as arrays, and the postings (``PostingsArrays``: CSR by term and by
    row)."""

    ids: list[str]
    codes: list[str]
    vectors: Floats
    lengths: Floats
    archived: npt.NDArray[np.int8]
    exported: Bools
    vanishing: Bools
    gone: Bools
    concepts: npt.NDArray[np.int32]
    postings: PostingsArrays


@dataclass
class SearchIndex:
    """The search index of one workspace's documents."""

    dim: int
    ids: list[str] = field(default_factory=list)
    positions: dict[str, int] = field(default_factory=dict)
    _vectors: Floats = field(init=False)
    _lengths: Floats = field(init=False)
    _archived: npt.NDArray[np.int8] = field(init=False)  # 1 archived, 0 active, -1 neither
    _exported: Bools = field(init=False)
    _vanishing: Bools = field(init=False)
    _gone: Bools = field(init=False)  # deleted: never selected again
    _postings: Postings = field(default_factory=Postings)
    # Each row's category (line 0) and kind (line 1) as codes of ``_codes`` (-1: none), the
    # concepts a query's words can name (``vocabulary``): a concept is one of them, so a query
    # compares one contiguous line (0.1 ms at 100k rows; a (rows, 2) layout took 7-11 ms).
    _concepts: npt.NDArray[np.int32] = field(init=False)
    _codes: dict[str, int] = field(default_factory=dict)
    _recent: tuple[list[str], Ints] | None = None  # the last rows_of: ids, rows

    def __post_init__(self) -> None:
        self._vectors = np.zeros((0, self.dim), dtype=np.float32)
        self._lengths = np.zeros(0, dtype=np.float32)
        self._archived = np.zeros(0, dtype=np.int8)
        self._exported = np.zeros(0, dtype=bool)
        self._vanishing = np.zeros(0, dtype=bool)
        self._gone = np.zeros(0, dtype=bool)
        self._concepts = np.full((2, 0), -1, dtype=np.int32)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def nbytes(self) -> int:
        return int(self._vectors.nbytes + self._lengths.nbytes + self._postings.nbytes)

    # -- writes ------------------------------------------------------------------------------

    def upsert(
        self,
        document_id: str,
        texts: Mapping[str, str | None],
        vector: npt.ArrayLike | None,
        state: RowState = ACTIVE,
        doc_type: str | None = None,
    ) -> None:
        """Add or replace a document: its searchable ``texts`` by field, its unit ``vector``
        (None: no embedding yet, it ranks by words only), its ``state`` and its ``doc_type``
        (with ``texts["category"]``, the concepts a query's words can name)."""
        row = self.positions.get(document_id)
        if row is None:
            row = len(self.ids)
            self.ids.append(document_id)
            self.positions[document_id] = row
            self._grow(row + 1)
        terms: dict[str, float] = {}
        length = 0
        for name, weight in DEFAULT_FIELD_WEIGHTS.items():
            tokens = tokenize(texts.get(name))
            length += len(tokens)
            for token in tokens:
                terms[token] = terms.get(token, 0.0) + weight
        self._postings.set_row(row, terms)
        category, kind = document_concepts(texts.get("category"), doc_type)
        self._concepts[:, row] = (self._code(category), self._code(kind))
        self._lengths[row] = length
        self._vectors[row] = 0.0 if vector is None else np.asarray(vector, dtype=np.float32)
        self._archived[row] = _ARCHIVED_CODES.get(state.archived, -1)
        self._exported[row] = state.exported
        self._vanishing[row] = state.may_vanish
        self._gone[row] = False

    def drop(self, ids: Sequence[str]) -> None:
        """Deleted documents: ``select`` never returns them again (their row stays, unused,
        as a deleted document's does when candidates come from the database)."""
        for document_id in ids:
            row = self.positions.get(document_id)
            if row is not None:
                self._gone[row] = True

    def select(self, archived: bool | None, exported: bool | None) -> Ints:
        """Rows, ascending, of the documents whose archived state is ``archived`` and whose
        export state is ``exported`` (None: either), deleted ones left out: the candidates of a
        search that the workspace, archive and export filters alone select."""
        n = len(self.ids)
        keep = ~self._gone[:n]
        if archived is not None:
            keep &= self._archived[:n] == (1 if archived else 0)
        if exported is not None:
            keep &= self._exported[:n] if exported else ~self._exported[:n]
        return np.flatnonzero(keep).astype(np.int64)

    def vanishing(self, rows: Ints) -> Ints:
        """Those of ``rows`` whose documents may have been deleted since they were read."""
        return rows[self._vanishing[rows]]

    def _grow(self, size: int) -> None:
        capacity = self._vectors.shape[0]
        if size <= capacity:
            return
        bigger = max(size, int(capacity * 1.5) + 64)
        vectors = np.zeros((bigger, self.dim), dtype=np.float32)
        vectors[:capacity] = self._vectors
        lengths = np.zeros(bigger, dtype=np.float32)
        lengths[:capacity] = self._lengths
        self._vectors, self._lengths = vectors, lengths
        self._archived = _grown(self._archived, bigger)
        self._exported = _grown(self._exported, bigger)
        self._vanishing = _grown(self._vanishing, bigger)
        self._gone = _grown(self._gone, bigger)
        concepts = np.full((2, bigger), -1, dtype=np.int32)
        concepts[:, :capacity] = self._concepts
        self._concepts = concepts

    def _code(self, concept: str | None) -> int:
        if concept is None:
            return -1
        return self._codes.setdefault(concept, len(self._codes))

    def rows_of(self, ids: Sequence[str]) -> Ints:
        """Rows of the ids the index holds (unknown ids are left out); read-only.

        Mapping ids that the database has just decoded costs a hash and a dict probe each
        (7 ms at 10k candidates, ~90 ms at 100k on a loaded machine): the last answer is kept,
        and the same candidates again (the same filters, nothing added or archived) are
        recognised by comparing the lists, several times cheaper. A row never changes its id,
        so a kept answer cannot go stale. ``map`` with the dict's own ``get`` keeps the lookups
        in C."""
        recent = self._recent
        if recent is not None and recent[0] == ids:
            return recent[1]
        found = np.fromiter(
            map(self.positions.get, ids, repeat(-1)), dtype=np.int64, count=len(ids)
        )
        if len(found) and found.min() < 0:
            found = found[found >= 0]
        found.setflags(write=False)
        held = self.ids
        # The index's own strings, so that keeping the list keeps no second copy of them.
        self._recent = ([held[row] for row in found.tolist()], found)
        return found

    def vectors(self, rows: Ints) -> Floats:
        return self._vectors[rows]

    def words(self, row: int) -> set[str]:
        """The distinct words of a row (its terms)."""
        return set(self._postings.row_terms(row))

    # -- snapshots (``engines.ranking.index_snapshot``) ---------------------------------------

    def to_arrays(self) -> IndexArrays:
        """The index as flat arrays and lists, from which ``from_arrays`` makes an equal index.
        Changes nothing (the postings' ``to_arrays``), so searches may run meanwhile."""
        n = len(self.ids)
        codes = sorted(self._codes, key=self._codes.__getitem__)
        return IndexArrays(
            ids=list(self.ids),
            codes=codes,
            vectors=self._vectors[:n].copy(),
            lengths=self._lengths[:n].copy(),
            archived=self._archived[:n].copy(),
            exported=self._exported[:n].copy(),
            vanishing=self._vanishing[:n].copy(),
            gone=self._gone[:n].copy(),
            concepts=self._concepts[:, :n].copy(),
            postings=self._postings.to_arrays(),
        )

    @classmethod
    def from_arrays(cls, dim: int, arrays: IndexArrays) -> SearchIndex:
        """The index ``to_arrays`` describes (raises ``ValueError`` on arrays that disagree)."""
        n = len(arrays.ids)
        shapes = {
            "vectors": (arrays.vectors.shape, (n, dim)),
            "lengths": (arrays.lengths.shape, (n,)),
            "archived": (arrays.archived.shape, (n,)),
            "exported": (arrays.exported.shape, (n,)),
            "vanishing": (arrays.vanishing.shape, (n,)),
            "gone": (arrays.gone.shape, (n,)),
            "concepts": (arrays.concepts.shape, (2, n)),
        }
        for name, (actual, expected) in shapes.items():
            if actual != expected:
                raise ValueError(f"{name} has shape {actual}, not {expected}")
        index = cls(dim)
        index.ids = list(arrays.ids)
        index.positions = {document_id: row for row, document_id in enumerate(index.ids)}
        if len(index.positions) != n:
            raise ValueError("an id appears twice")
        index._postings = Postings.from_arrays(arrays.postings, n)
        index._grow(n)
        index._vectors[:n] = arrays.vectors
        index._lengths[:n] = arrays.lengths
        index._archived[:n] = arrays.archived
        index._exported[:n] = arrays.exported
        index._vanishing[:n] = arrays.vanishing
        index._gone[:n] = arrays.gone
        index._concepts[:, :n] = arrays.concepts
        index._codes = {concept: code for code, concept in enumerate(arrays.codes)}
        return index

    # -- scores ------------------------------------------------------------------------------

    def lexical_scores(self, query: str, rows: Ints) -> Floats:
        """BM25 of each of ``rows`` for ``query`` (0: no query token matches)."""
        return self.lexical(query, rows)[0]

    def lexical(self, query: str, rows: Ints) -> tuple[Floats, Bools]:
        """BM25 of each of ``rows`` for ``query``, and whether the row matches a distinctive
        query token: one that at most ``COMMON_SHARE`` of the candidates contain (a match on
        "in" or "receipt" alone says little). When no row matches a distinctive token, every
        match counts."""
        found = self.lexical_match(query, rows)
        return found.scores, found.distinctive

    def lexical_match(self, query: str, rows: Ints) -> WordMatch:
        """``lexical``'s scores and distinctive matches, and the rows that match every
        distinctive query word that any row matches, when there are two or more such words
        ("hotel" and "invoice": a hotel's invoice; ``fused_top`` ranks them first)."""
        n = len(self.ids)
        scores = np.zeros(len(rows), dtype=np.float32)
        distinctive = np.zeros(len(rows), dtype=bool)
        every = np.ones(len(rows), dtype=bool)
        words = 0
        terms = understand(query)
        if not terms or not len(rows):
            return WordMatch(scores, distinctive, None)
        lengths = self._lengths[rows]
        average = float(lengths.mean()) or 1.0
        norm = K1 * (1 - B + B * lengths / average)
        for term in terms:
            weighted = self._query_term_weights(term, n)[rows]
            df = int(np.count_nonzero(weighted))
            if df == 0:
                continue
            idf = math.log(1 + (len(rows) - df + 0.5) / (df + 0.5))
            scores += idf * weighted * (K1 + 1) / (weighted + norm)
            if df <= COMMON_SHARE * len(rows):
                distinctive |= weighted > 0
                every &= weighted > 0
                words += 1
        if not distinctive.any():
            distinctive = scores > 0
        complete = every if words >= 2 and every.any() else None
        return WordMatch(scores, distinctive, complete)

    def _query_term_weights(self, term: QueryTerm, n: int) -> Floats:
        """Weighted frequency of a query word in every row: by its letters (``_term_weights``)
        or by a concept it names that the row carries (``CONCEPT_WEIGHT``), whichever is more.
        A word that names only a kind of document is matched by kind alone, unless no document
        has a kind it names (then by its letters, as any word); a word that names a thing
        bought ("latte") names its category only when no document has the word itself."""
        if term.fallback:
            letters = self._term_weights(term.token, n)
            if letters.any():
                return letters
        named = np.zeros(n, dtype=np.float32)
        for concept in term.concepts:
            code = self._codes.get(concept)
            if code is not None:
                line = self._concepts[1 if concept.startswith(TYPE) else 0, :n]
                named[line == code] = CONCEPT_WEIGHT
        if term.kind_only and named.any():
            return named
        return np.maximum(self._term_weights(term.token, n), named)

    def _term_weights(self, term: str, n: int) -> Floats:
        """Weighted frequency of ``term`` in every row: exact, else prefix, else fuzzy."""
        postings = self._postings
        exact = np.zeros(n, dtype=np.float32)
        _scatter(exact, postings.find(term), 1.0)
        if len(term) < MIN_PREFIX:
            return exact
        near = np.zeros(n, dtype=np.float32)
        expansions = [w for w in postings.with_prefix(term) if w != term]
        for word in expansions:
            _scatter(near, postings.find(word), PREFIX_WEIGHT)
        if not expansions and not postings.known(term) and len(term) >= MIN_FUZZY:
            for word in postings.one_edit(term):
                _scatter(near, postings.find(word), FUZZY_WEIGHT)
        return np.where(exact > 0, exact, near)

    def vector_scores(self, query_vector: npt.ArrayLike, rows: Ints) -> Floats:
        """Cosine of each of ``rows`` to the unit ``query_vector`` (0 without a vector).

        One product over every row beats gathering the candidates' rows first: the gather
        copies them, the product only reads them."""
        q = np.asarray(query_vector, dtype=np.float32)
        n = len(self.ids)
        if 4 * len(rows) >= n:
            return (self._vectors[:n] @ q)[rows]
        return self._vectors[rows] @ q


_Array = TypeVar("_Array", bound=np.ndarray)


def _grown(values: _Array, size: int) -> _Array:
    bigger = np.zeros(size, dtype=values.dtype)
    bigger[: len(values)] = values
    return cast(_Array, bigger)


_blas_threads: int | None = None


def limit_blas_threads(threads: int = 1) -> None:
    """Run numpy's BLAS (the cosine's matrix-vector product) on ``threads`` threads, once per
    process.

    OpenBLAS starts a thread per core and spins them on every product; on a server whose
    cores already serve other requests (and on the shared 2-core machine of ``bench/search.py``)
    the product over 10k vectors took a median 16 ms with them and 4.5 ms on one thread (it reads
    20 MB: memory, not arithmetic, bounds it). The setting is process-wide, as BLAS's is."""
    global _blas_threads
    if _blas_threads == threads:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")
    _blas_threads = threads


def _scatter(
    into: Floats, found: tuple[npt.NDArray[np.int32], Floats] | None, weight: float
) -> None:
    """Add ``weight`` times a term's weighted frequencies to its rows (each once: no
    ``np.add.at`` needed)."""
    if found is not None:
        rows, values = found
        into[rows] += np.float32(weight) * values


# -- fusion and diversity ------------------------------------------------------------------


def fuse(
    lexical: Floats,
    similarity: Floats | None,
    *,
    distinctive: Bools | None = None,
    min_similarity: float = MIN_SIMILARITY,
    lexical_weight: float = LEXICAL_WEIGHT,
    k: int = RRF_K,
    first: Bools | None = None,
) -> Floats:
    """Hybrid relevance of each candidate: weighted reciprocal rank fusion of its rank by words
    and its rank by meaning; 0 for a candidate that neither matches nor is near.

    Why rank fusion: BM25 scores are unbounded and depend on the query's length and the
    candidates' statistics, this model's cosines sit in a narrow band; adding them needs a
    per-query normalisation that one outlier bends, while ranks are on one scale for both, and
    a document both lists find gets both shares. Two guards keep ranks from overrating weak
    evidence, which is rank fusion's known weakness: a document enters the word ranking only
    when it matches a ``distinctive`` query token (see ``SearchIndex.lexical``: a match on "in"
    or "receipt" alone is no evidence), and the meaning ranking only with a cosine of at least
    ``min_similarity`` (otherwise every candidate would match and results would never end).
    Words count ``lexical_weight`` against meaning's 1. ``bench/search.py`` measures these
    choices, and the weighted sum of normalised scores, on the labelled queries.

    Without ``similarity`` (meaning off) every document that matches a word is ranked by BM25.
    Documents in ``first`` (those matching every distinctive word of the query:
    ``WordMatch.complete``) rank before all others, each group in fused order: a hotel's
    invoice before a railway ticket that is merely closer in meaning to "hotel invoice" than
    anything else (when every cosine is low, the meaning ranking's head is noise, and rank
    fusion gives it the same share as a strong one).
    """
    fused = np.zeros(len(lexical), dtype=np.float32)
    matched = lexical > 0
    if similarity is None:
        _add_ranks(fused, lexical, matched, k)
        return fused
    words = np.zeros(len(lexical), dtype=np.float32)
    by_words = _ties_by_meaning(lexical, similarity)
    _add_ranks(words, by_words, matched if distinctive is None else matched & distinctive, k)
    meaning = np.zeros(len(lexical), dtype=np.float32)
    _add_ranks(meaning, similarity, similarity >= min_similarity, k)
    fused = lexical_weight * words + meaning
    if first is not None:
        fused[first & (fused > 0)] += np.float32(FIRST)
    return fused


def weighted_sum(
    lexical: Floats,
    similarity: Floats | None,
    *,
    min_similarity: float = 0.1,
    lexical_weight: float = 0.3,
) -> Floats:
    """The alternative fusion ``bench/search.py`` measures: max-normalised BM25 and cosine
    (rescaled from ``min_similarity``..1 to 0..1), weighted (its best weights on the labelled
    queries among those tried)."""
    top = float(lexical.max()) if len(lexical) else 0.0
    words = lexical / top if top > 0 else np.zeros_like(lexical)
    if similarity is None:
        return words.astype(np.float32)
    meaning = np.clip((similarity - min_similarity) / (1 - min_similarity), 0, None)
    return (lexical_weight * words + (1 - lexical_weight) * meaning).astype(np.float32)


@dataclass(frozen=True)
class FusedTop:
    """The best candidates by fused relevance: ``ranked.rows`` are positions into the
    candidates, best first; ``scores`` their fused scores, in the same order."""

    ranked: Ranked
    scores: list[float]


def fusion_depth(k: int, lexical_weight: float = LEXICAL_WEIGHT, rrf_k: int = RRF_K) -> int:
    """How deep each ranking must be read for ``fused_top(…, k)`` to be exact.

    A candidate below rank ``depth`` in both rankings scores at most
    ``(w_words + w_meaning) / (rrf_k + depth + 1)``; when a ranking has more than ``depth``
    candidates its first ``k`` score at least ``w / (rrf_k + k)`` each (w its weight), so the
    ``k``-th best fused score is at least ``max(w) / (rrf_k + k)``. Reading
    ``depth > (w_words + w_meaning) / max(w) · (rrf_k + k) − rrf_k − 1`` of each ranking therefore
    leaves out only candidates that cannot reach the first ``k`` (with the weights shipped:
    ``1.5 k + 30``: 60 for the default page's pool of 20)."""
    weights = (lexical_weight, 1.0)
    bound = sum(weights) / max(weights) * (rrf_k + k) - rrf_k - 1
    return max(k, math.floor(bound) + 1)


def fused_top(
    lexical: Floats,
    similarity: Floats | None,
    k: int,
    *,
    distinctive: Bools | None = None,
    min_similarity: float = MIN_SIMILARITY,
    lexical_weight: float = LEXICAL_WEIGHT,
    rrf_k: int = RRF_K,
    first: Bools | None = None,
) -> FusedTop:
    """The ``k`` best candidates by ``fuse``'s scores, the same documents in the same order
    with the same scores, without ranking every candidate.

    Fusing every candidate sorts both rankings in full (two stable argsorts: 25–35 ms at 100k
    candidates). Only the head of each ranking can reach the first ``k`` (``fusion_depth``): the
    head is found by ``argpartition`` (linear), and each head candidate's exact rank in the
    *other* ranking (it may sit anywhere in it) by a binary search in that ranking's sorted keys
    (``np.sort`` of integers, a few times faster than an argsort). Ties keep ``fuse``'s order:
    a key is the score's bits then the inverted position, so equal scores rank by position.

    With ``first`` (see ``fuse``), every eligible candidate in it is scored exactly too: the
    ``k`` best are those of ``first`` by fused score, then the best of the others, who are
    among the heads."""
    eligible_words = lexical > 0
    if similarity is not None and distinctive is not None:
        eligible_words &= distinctive
    eligible_meaning = None if similarity is None else similarity >= min_similarity
    matched = eligible_words if eligible_meaning is None else eligible_words | eligible_meaning
    total = int(np.count_nonzero(matched))
    if total == 0 or k <= 0:
        return FusedTop(Ranked([], total), [])
    rankings = [(lexical, eligible_words)]
    if similarity is not None and eligible_meaning is not None:
        rankings = [(_ties_by_meaning(lexical, similarity), eligible_words)]
        rankings.append((similarity, eligible_meaning))
    depth = fusion_depth(k, lexical_weight if len(rankings) == 2 else 1.0, rrf_k)
    prepared = [_ranking_keys(scores, eligible) for scores, eligible in rankings]
    heads = [_head(keys, depth) for keys in prepared]
    tier = None
    if first is not None and similarity is not None:
        tier = first & matched
        heads.append(np.flatnonzero(tier))
    union = np.unique(np.concatenate(heads))
    positions = union.astype(np.int64)
    parts = []
    for (scores, eligible), keys in zip(rankings, prepared, strict=True):
        part = np.zeros(len(positions), dtype=np.float32)
        inside = eligible[positions]
        if inside.any():
            # Keys are distinct (they hold the position): a rank is one plus the number of
            # larger keys, turned into a share with the same float32 arithmetic as ``fuse``.
            own = _keys(scores[positions[inside]], positions[inside])
            ranks = len(keys) - np.searchsorted(np.sort(keys), own, side="right") + 1
            part[inside] = 1.0 / (rrf_k + ranks.astype(np.float32))
        parts.append(part)
    fused = parts[0] if len(parts) == 1 else lexical_weight * parts[0] + parts[1]
    if tier is not None:
        fused[tier[positions]] += np.float32(FIRST)
    order = np.lexsort((positions, -fused))[:k]
    return FusedTop(
        Ranked([int(positions[i]) for i in order], total), [float(fused[i]) for i in order]
    )


def _ties_by_meaning(lexical: Floats, similarity: Floats) -> Floats:
    """Word scores whose ties rank by meaning: every invoice matches "invoices" alike, and
    without this the word ranking would order them by position (then the fusion gives the
    first of them far more than the last for nothing). ``TIE_BREAK`` times the cosine (moved
    to 0..2) is added where a word matched: small against any difference BM25 makes."""
    return np.where(
        lexical > 0, lexical + np.float32(TIE_BREAK) * (similarity + np.float32(1.0)), lexical
    ).astype(np.float32)


def _keys(scores: Floats, positions: Ints) -> npt.NDArray[np.uint64]:
    """One integer per candidate that orders like (score descending, position ascending) when
    sorted descending: the float32 score's bits made order-preserving, then the inverted
    position."""
    bits = (scores.astype(np.float32) + np.float32(0.0)).view(np.uint32).astype(np.uint64)
    negative = bits >= 0x8000_0000
    bits = np.where(negative, np.uint64(0xFFFF_FFFF) - bits, bits | np.uint64(0x8000_0000))
    return (bits << np.uint64(32)) | (np.uint64(0xFFFF_FFFF) - positions.astype(np.uint64))


def _ranking_keys(scores: Floats, eligible: Bools) -> npt.NDArray[np.uint64]:
    (positions,) = np.nonzero(eligible)
    return _keys(scores[positions], positions)


def _head(keys: npt.NDArray[np.uint64], depth: int) -> Ints:
    """Positions of the ``depth`` best of a ranking's keys, in no order."""
    if len(keys) > depth:
        keys = np.partition(keys, len(keys) - depth)[len(keys) - depth :]
    return (np.uint64(0xFFFF_FFFF) - (keys & np.uint64(0xFFFF_FFFF))).astype(np.int64)


def _add_ranks(into: Floats, scores: Floats, eligible: npt.NDArray[np.bool_], k: int) -> None:
    (positions,) = np.nonzero(eligible)
    if not len(positions):
        return
    order = positions[np.argsort(-scores[positions], kind="stable")]
    into[order] += 1.0 / (k + np.arange(1, len(order) + 1, dtype=np.float32))


def top(scores: Floats, k: int) -> Ranked:
    """Positions of the ``k`` best positive scores, best first (ties: lower position first)."""
    (matched,) = np.nonzero(scores > 0)
    if not len(matched) or k <= 0:
        return Ranked([], len(matched))
    chosen = matched
    if len(matched) > k:
        # Every candidate tied with the k-th, so that ties go to the lower position, as the
        # docstring says, rather than to whichever argpartition happened to leave in.
        kth = np.partition(-scores[matched], k - 1)[k - 1]
        chosen = matched[-scores[matched] <= kth]
    order = chosen[np.lexsort((chosen, -scores[chosen]))][:k]
    return Ranked([int(i) for i in order], len(matched))


def diversify(
    scores: Sequence[float],
    vectors: Floats,
    k: int,
    words: Sequence[set[str]] | None = None,
    trade_off: float | None = None,
) -> list[int]:
    """MMR over a pool (positions into ``scores``/``vectors``): relevance against the cosine to
    what is already picked. A document without an embedding yet (not reindexed) is compared by
    the Jaccard overlap of its ``words`` instead."""
    similarity = vectors @ vectors.T
    embedded = np.any(vectors != 0, axis=1)
    if not embedded.any() and words is not None:
        # No embeddings yet (not reindexed): word overlap, as ranking by words alone did.
        return mmr(list(scores), lambda a, b: jaccard(words[a], words[b]), k)

    def alike(a: int, b: int) -> float:
        if (embedded[a] and embedded[b]) or words is None:
            return float(similarity[a, b])
        return jaccard(words[a], words[b])

    # Rank fusion's scores are flat (1/61, 1/62, …): spread the pool's over 0..1 first, or
    # diversity would outweigh relevance for every document after the first.
    low, high = (min(scores), max(scores)) if scores else (0.0, 0.0)
    spread = [(score - low) / (high - low) if high > low else 1.0 for score in scores]
    return mmr(spread, alike, k, trade_off=MMR_TRADE_OFF if trade_off is None else trade_off)
