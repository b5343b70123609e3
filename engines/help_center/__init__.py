"""The help center: articles shipped in the package, indexed for words and meaning.

``default_help_center()`` builds the index once per process (the articles are package data and
never change while it runs); the app factory calls it at start-up.
"""

from __future__ import annotations

import logging
from functools import cache

from engines.help_center.articles import Article, shipped_articles
from engines.help_center.search import ArticleHit, HelpCenter, SnippetHit
from engines.ranking import embeddings

log = logging.getLogger("fincap.help_center")


@cache
def default_help_center() -> HelpCenter:
    """The shipped articles, indexed (built on first call, then shared by the process).

    Without the embedding model (an install that skipped it) the help center still answers,
    by words only, and says so in the log once."""
    if not embeddings.available():
        log.warning("embedding model not installed: the help center searches by words only")
        return HelpCenter(shipped_articles())
    return HelpCenter(shipped_articles(), embeddings.load_embedder())


__all__ = ["Article", "ArticleHit", "HelpCenter", "SnippetHit", "default_help_center"]
