"""The help center: articles shipped in the package, indexed for words and meaning.

``default_help_center()`` builds the index once per process (the articles are package data and
never change while it runs); the app factory calls it at start-up.
"""

from __future__ import annotations

from functools import cache

from engines.help_center.articles import Article, shipped_articles
from engines.help_center.search import ArticleHit, HelpCenter, SnippetHit


@cache
def default_help_center() -> HelpCenter:
    """The shipped articles, indexed (built on first call, then shared by the process)."""
    return HelpCenter(shipped_articles())


__all__ = ["Article", "ArticleHit", "HelpCenter", "SnippetHit", "default_help_center"]
