"""The words side of the help center: SQLite FTS5, in memory, one row per passage.

Why FTS5: it ships with Python's standard library (no dependency for a corpus of a few hundred
passages), ranks with BM25 weighted per column (``bm25()``), cuts snippets around the matched
terms and marks them (``snippet()``), and stems English (``porter`` over ``unicode61`` with
accents folded), so 'uploading' finds 'upload'. ``bench/help_center.py`` measures the build and
the queries.

Each row holds the article's title, the section heading and the passage text; the title and
heading repeat on every passage of their article, so a title match lifts the whole article
equally and the body decides which of its passages are the best snippets.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from engines.help_center.articles import Article
from engines.text import fold

# Column weights for bm25(): a word in the title says more about the article than one in a
# paragraph; a section heading sits between.
TITLE_WEIGHT = 4.0
SECTION_WEIGHT = 2.0
TEXT_WEIGHT = 1.0
SNIPPET_TOKENS = 28  # the window snippet() cuts around the matches (FTS5 allows up to 64)
MARK_OPEN = "**"
MARK_CLOSE = "**"
ELLIPSIS = "…"
MAX_QUERY_TERMS = 16
MIN_PREFIX = 4

# Words that say nothing about what is asked ("how do I …", "wie kann ich …"): left out of the
# match so they neither rank passages nor get marked in snippets.
_STOPWORDS = """
    a an and are as at be by can could do does for from get got has have how i if in into is
    it its me my of on or our so that the their them then there these this to use using want was
    we what when where which who why will with would you your
    am auf aus bei bin das dem den der des die ein eine einen einer es fur hat ich ihr im in ist
    kann kein mein mit nach nicht oder pro sie sind so und uber um von was wie wir wo zu als"""
STOPWORDS = frozenset(_STOPWORDS.split())
_TERM = re.compile(r"[0-9a-z]+")


@dataclass(frozen=True)
class LexicalHit:
    """A passage that matched, its BM25 score (higher is better) and its marked snippet."""

    passage: int  # index into the passages the index was built from
    score: float
    snippet: str


def query_terms(query: str) -> list[tuple[str, ...]]:
    """What ``query`` searches for: each word (folded; stop words and repeats dropped), and
    each run of words joined without a space ('X-Service-Org-Id', 'files.upload') as one
    phrase, so an identifier matches as written, not as its most common part."""
    units: list[tuple[str, ...]] = []
    for chunk in query.split():
        words = tuple(_TERM.findall(fold(chunk)))
        if len(words) == 1:
            word = words[0]
            if word in STOPWORDS or (len(word) == 1 and not word.isdigit()):
                continue
        if words and words not in units:
            units.append(words)
    return units[:MAX_QUERY_TERMS]


def match_expression(units: Sequence[tuple[str, ...]]) -> str:
    """An FTS5 query matching any of ``units`` (BM25 favours passages with more of them).
    Each unit is a quoted string, so no query syntax reaches FTS5; a unit whose last word has
    four letters or more also matches as a prefix ('categor' → 'category', 'categories'; three
    letters would let 'pro' match 'protocol', 'provider' and 'process')."""
    return " OR ".join(
        f'"{" ".join(unit)}"' + ("*" if len(unit[-1]) >= MIN_PREFIX else "") for unit in units
    )


class FullTextIndex:
    """An in-memory FTS5 table over every passage of the articles."""

    def __init__(self, articles: Sequence[Article]) -> None:
        # One connection shared by the event loop and threads; sqlite serialises its use, and
        # the lock keeps a query's statements together.
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._lock = threading.Lock()
        self._db.execute(
            "CREATE VIRTUAL TABLE passages USING fts5("
            "title, section, body, tokenize = 'porter unicode61 remove_diacritics 2')"
        )
        rows = [
            (article.title, passage.section, passage.text)
            for article in articles
            for passage in article.passages
        ]
        # rowid = position in the flattened passage list (1-based in SQLite).
        self._db.executemany(
            "INSERT INTO passages (rowid, title, section, body) VALUES (?, ?, ?, ?)",
            [(index + 1, *row) for index, row in enumerate(rows)],
        )
        self._db.execute("INSERT INTO passages (passages) VALUES ('optimize')")
        self.size = len(rows)

    def search(self, query: str, limit: int = 200) -> list[LexicalHit]:
        """Passages matching any query term, best first (at most ``limit``)."""
        terms = query_terms(query)
        if not terms:
            return []
        sql = (
            "SELECT rowid, -bm25(passages, ?, ?, ?), snippet(passages, 2, ?, ?, ?, ?) "
            "FROM passages WHERE passages MATCH ? ORDER BY bm25(passages, ?, ?, ?) LIMIT ?"
        )
        weights = (TITLE_WEIGHT, SECTION_WEIGHT, TEXT_WEIGHT)
        params = (
            *weights,
            MARK_OPEN,
            MARK_CLOSE,
            ELLIPSIS,
            SNIPPET_TOKENS,
            match_expression(terms),
            *weights,
            limit,
        )
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [LexicalHit(rowid - 1, score, snippet) for rowid, score, snippet in rows]

    def passages_per_term(self, query: str) -> list[set[int]]:
        """For each searched word or phrase of ``query``, the passages that hold it."""
        found = []
        with self._lock:
            for unit in query_terms(query):
                rows = self._db.execute(
                    "SELECT rowid FROM passages WHERE passages MATCH ?", (match_expression([unit]),)
                ).fetchall()
                found.append({rowid - 1 for (rowid,) in rows})
        return found

    def mark(self, passage: int, query: str) -> str:
        """The snippet of one passage with the query's terms marked (for a passage found by
        meaning: any query words it contains are still marked, else its opening words)."""
        terms = query_terms(query)
        sql_first = "SELECT substr(body, 1, 400) FROM passages WHERE rowid = ?"
        with self._lock:
            if terms:
                row = self._db.execute(
                    "SELECT snippet(passages, 2, ?, ?, ?, ?) FROM passages "
                    "WHERE passages MATCH ? AND rowid = ?",
                    (
                        MARK_OPEN,
                        MARK_CLOSE,
                        ELLIPSIS,
                        SNIPPET_TOKENS,
                        match_expression(terms),
                        passage + 1,
                    ),
                ).fetchone()
                if row and MARK_OPEN in row[0]:
                    return str(row[0])
            first = self._db.execute(sql_first, (passage + 1,)).fetchone()
        return _opening(str(first[0]) if first else "")


def _opening(text: str) -> str:
    """The first ``SNIPPET_TOKENS`` words of a passage, with an ellipsis when cut."""
    words = text.split()
    if len(words) <= SNIPPET_TOKENS:
        return " ".join(words)
    return " ".join(words[:SNIPPET_TOKENS]) + ELLIPSIS
