"""help-center search: words (FTS5) and meaning (embeddings) fused, grouped by article.

The words side ranks passages by BM25 (every passage holding a query term); an article's words
score is its best passage's plus a quarter of its second best's (an article that answers in
several places beats one lucky sentence), divided by the best article's, times the share of the
query's words the article holds anywhere (one rare word of five is a weak match, however rare),
so it lies in (0, 1].
The meaning side compares the query's embedding with each article's questions (its front
matter: what people ask, in their words) and with each passage (read with its title and
section); an article's meaning score is its best cosine mapped linearly from a floor (0) to a
ceiling (1), so an unrelated query finds nothing rather than the least unrelated article.

The two are fused as a weighted sum of those normalised scores (relative score fusion), not by
reciprocal rank fusion: RRF keeps only positions, and in a corpus of twenty articles a common
word ('receipt', 'document') matches nearly every article, so a weak words match at position 1
would count as much as a question matched almost verbatim. The sum keeps the size of each
side's lead, while still needing no calibration between a BM25 value and a cosine (each side is
scaled on its own). ``bench/help_center.py`` measures both fusions on a labelled query set.

Within an article, snippets are its passages in the same fused order, where a passage's meaning
is its cosine to the query and to the article's best-matching question (an English paraphrase
of a question asked in German ranks English passages more reliably than the German alone).
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

import numpy as np

from engines.help_center.articles import Article, Passage
from engines.help_center.fulltext import FullTextIndex

log = logging.getLogger("fincap.help_center")

# Floors and ceilings of the meaning side, measured with the model of
# engines/ranking/embeddings.py on these articles (``bench/help_center.py --cosines``): queries
# about an article score 0.32-1.0 against its questions (short German single words such as
# 'Kommandozeile' only ~0.29), unrelated ones ('how to bake bread', 'weather in Paris', keyboard
# noise) at most 0.31 against any question and 0.25 against any passage.
MIN_QUESTION_COSINE = 0.32
MIN_PASSAGE_COSINE = 0.30
MAX_COSINE = 0.70
WORDS_WEIGHT = 0.5  # the meaning side gets the rest
SECOND_PASSAGE_WEIGHT = 0.25


def scaled(cosine: float, floor: float) -> float:
    """A cosine mapped to [0, 1]: 0 at ``floor`` (not related), 1 from ``MAX_COSINE``."""
    return min(1.0, max(0.0, (cosine - floor) / (MAX_COSINE - floor)))


Side = Literal["words", "meaning"]


class TextEmbedder(Protocol):
    """Anything that turns texts into L2-normalised vectors (one row per text)."""

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def cached_vectors(embedder: TextEmbedder, texts: list[str], folder: Path | None) -> np.ndarray:
    """``embedder.embed(texts)``, read from ``folder`` when an earlier start computed it."""
    if folder is None:
        return np.asarray(embedder.embed(texts), dtype=np.float32)
    model = str(getattr(embedder, "model_name", type(embedder).__name__))
    digest = hashlib.sha256("\0".join([model, *texts]).encode()).hexdigest()[:24]
    path = folder / f"help-vectors-{digest}.npy"
    try:
        stored = np.load(path, allow_pickle=False)
        if stored.shape[0] == len(texts) and stored.dtype == np.float32:
            return stored
    except (OSError, ValueError):
        pass  # absent or damaged: computed again below
    vectors = np.asarray(embedder.embed(texts), dtype=np.float32)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        with temporary.open("wb") as handle:
            np.save(handle, vectors, allow_pickle=False)
        os.replace(temporary, path)  # readers see the old file or the whole new one
        for old in folder.glob("help-vectors-*.npy"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError as exc:
        log.warning("help center vectors not cached", extra={"path": str(path), "error": str(exc)})
    return vectors


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


@dataclass(frozen=True)
class SideScores:
    """What each side found for one query, normalised to [0, 1] per article."""

    words: dict[str, float]
    meaning: dict[str, float]
    passage_words: dict[int, float]  # BM25 of each matching passage over the best one
    marked: dict[int, str]  # FTS5 snippets of the matching passages
    cosines: tuple[np.ndarray, np.ndarray] | None  # query · passages, query · questions
    best_question: dict[str, int]  # the question of each article that matched best


class HelpCenter:
    """The articles, their full-text index and (when an embedder is given) their vectors.

    ``vector_cache``: a folder where the articles' vectors are kept between starts, in a file
    named by a digest of the model and every embedded text (an edited article or another model
    makes a new file; a damaged or unwritable one is recomputed and logged, never fatal)."""

    def __init__(
        self,
        articles: Sequence[Article],
        embedder: TextEmbedder | None = None,
        vector_cache: Path | None = None,
    ) -> None:
        self.articles = tuple(articles)
        self.by_id = {article.id: article for article in self.articles}
        self.passages: list[Passage] = [p for a in self.articles for p in a.passages]
        self.fulltext = FullTextIndex(self.articles)
        self.embedder = embedder
        self.passage_vectors: np.ndarray | None = None
        self.question_vectors: np.ndarray | None = None
        self.question_articles = [a.id for a in self.articles for _ in a.questions]
        if embedder is not None:
            texts = [passage_document(self.by_id[p.article_id], p) for p in self.passages]
            questions = [q for a in self.articles for q in a.questions]
            vectors = cached_vectors(embedder, texts + questions, vector_cache)
            self.passage_vectors = vectors[: len(texts)]
            self.question_vectors = vectors[len(texts) :]

    def _cosines(self, query: str) -> tuple[np.ndarray, np.ndarray] | None:
        if self.embedder is None or self.passage_vectors is None or self.question_vectors is None:
            return None
        vector = np.asarray(self.embedder.embed([query]), dtype=np.float32)[0]
        return self.passage_vectors @ vector, self.question_vectors @ vector

    def side_scores(self, query: str) -> SideScores:
        """Each side's normalised article scores for ``query`` (what ``search`` fuses)."""
        lexical = self.fulltext.search(query)
        top_bm25 = max((hit.score for hit in lexical), default=0.0)
        by_article: dict[str, list[float]] = defaultdict(list)
        for hit in lexical:
            by_article[self.passages[hit.passage].article_id].append(hit.score)
        words = {
            article_id: scores[0] + (SECOND_PASSAGE_WEIGHT * scores[1] if len(scores) > 1 else 0)
            for article_id, scores in ((a, sorted(v, reverse=True)) for a, v in by_article.items())
        }
        if words:
            top_words = max(words.values())
            per_term = self.fulltext.passages_per_term(query)
            for article_id in words:
                held = sum(
                    any(self.passages[i].article_id == article_id for i in found)
                    for found in per_term
                )
                words[article_id] = words[article_id] / top_words * held / len(per_term)

        meaning: dict[str, float] = {}
        best_question: dict[str, int] = {}
        cosines = self._cosines(query)
        if cosines is not None:
            passage_cos, question_cos = cosines
            for index, passage in enumerate(self.passages):
                value = scaled(float(passage_cos[index]), MIN_PASSAGE_COSINE)
                if value > 0:
                    meaning[passage.article_id] = max(meaning.get(passage.article_id, 0), value)
            for index, article_id in enumerate(self.question_articles):
                value = scaled(float(question_cos[index]), MIN_QUESTION_COSINE)
                if value > 0 and value >= meaning.get(article_id, 0):
                    meaning[article_id] = value
                    best_question[article_id] = index
        return SideScores(
            words=words,
            meaning=meaning,
            passage_words={hit.passage: hit.score / top_bm25 for hit in lexical if top_bm25 > 0},
            marked={hit.passage: hit.snippet for hit in lexical},
            cosines=cosines,
            best_question=best_question,
        )

    def search(self, query: str, *, limit: int = 3, snippets: int = 2) -> list[ArticleHit]:
        """The ``limit`` best articles for ``query``, each with up to ``snippets`` snippets."""
        sides = self.side_scores(query)
        weight = WORDS_WEIGHT if sides.cosines is not None else 1.0
        fused = {
            article_id: weight * sides.words.get(article_id, 0)
            + (1 - weight) * sides.meaning.get(article_id, 0)
            for article_id in {*sides.words, *sides.meaning}
        }
        ranked = sorted(fused, key=lambda a: (-fused[a], a))[:limit]
        return [
            ArticleHit(
                article=self.by_id[article_id],
                score=round(fused[article_id], 4),
                snippets=tuple(
                    SnippetHit(
                        section=self.passages[i].section,
                        anchor=self.passages[i].anchor,
                        text=sides.marked.get(i) or self.fulltext.mark(i, query),
                    )
                    for i in self._best_passages(article_id, sides, weight)[:snippets]
                ),
                matched_by=self._sides(article_id, sides.words, sides.meaning),
            )
            for article_id in ranked
        ]

    @staticmethod
    def _sides(
        article_id: str, words: dict[str, float], meaning: dict[str, float]
    ) -> tuple[Side, ...]:
        found: list[Side] = []
        if article_id in words:
            found.append("words")
        if article_id in meaning:
            found.append("meaning")
        return tuple(found)

    def _passage_meaning(
        self, index: int, cosines: tuple[np.ndarray, np.ndarray] | None, question: int | None
    ) -> float:
        if cosines is None:
            return 0.0
        value = float(cosines[0][index])
        if question is not None and self.passage_vectors is not None:
            assert self.question_vectors is not None
            # The matched question is an English paraphrase of what was asked.
            value = (
                value + float(self.passage_vectors[index] @ self.question_vectors[question])
            ) / 2
        return value

    def _best_passages(self, article_id: str, sides: SideScores, weight: float) -> list[int]:
        """The article's passages, best snippet first."""
        own = [i for i, p in enumerate(self.passages) if p.article_id == article_id]
        question = sides.best_question.get(article_id)
        meaning = {i: self._passage_meaning(i, sides.cosines, question) for i in own}
        passage_words = sides.passage_words
        if not any(i in passage_words for i in own):
            # Found by meaning alone: its opening paragraph says what it covers, and comes first.
            return own[:1] + sorted(own[1:], key=lambda i: (-meaning[i], i))
        return sorted(
            own,
            key=lambda i: (-(weight * passage_words.get(i, 0) + (1 - weight) * meaning[i]), i),
        )
