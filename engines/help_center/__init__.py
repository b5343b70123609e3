"""The help center: articles shipped in the package, indexed for words and meaning.

``default_help_center()`` builds the index once per process (the articles are package data and
never change while it runs); the app factory calls it at start-up with the folder where the
articles' vectors are kept between starts.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from engines.help_center.articles import Article, shipped_articles
from engines.help_center.search import ArticleHit, HelpCenter, SnippetHit
from engines.ranking import embeddings

log = logging.getLogger("fincap.help_center")

_lock = threading.Lock()
_built: list[HelpCenter] = []


def default_help_center(vector_cache: Path | None = None) -> HelpCenter:
    """The shipped articles, indexed: built by the first call (with its ``vector_cache``), then
    shared by the process; concurrent first calls wait for the one build.

    Without the embedding model (an install that skipped it) the help center still answers,
    by words only, and says so in the log once."""
    with _lock:
        if not _built:
            if embeddings.available():
                center = HelpCenter(shipped_articles(), embeddings.load_embedder(), vector_cache)
            else:
                log.warning("embedding model not installed: the help center searches by words only")
                center = HelpCenter(shipped_articles())
            _built.append(center)
        return _built[0]


__all__ = ["Article", "ArticleHit", "HelpCenter", "SnippetHit", "default_help_center"]
