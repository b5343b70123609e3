"""The help center: articles shipped in the package, indexed for words and meaning.

``default_help_center()`` builds the index once per process (the articles are package data and
never change while it runs); the app starts that build at start-up (``index_at_start_up``) and
tells it where the articles' vectors are kept between starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from pathlib import Path

from engines.help_center.articles import Article, shipped_articles
from engines.help_center.search import ArticleHit, HelpCenter, SnippetHit
from engines.ranking import embeddings

log = logging.getLogger("fincap.help_center")

_lock = threading.Lock()
_built: list[HelpCenter] = []
_cache: list[Path] = []


def use_vector_cache(folder: Path) -> None:
    """Where the build keeps the articles' vectors between starts (the app sets its data dir)."""
    with _lock:
        _cache[:] = [folder]


def default_help_center(vector_cache: Path | None = None) -> HelpCenter:
    """The shipped articles, indexed: built by the first call (vectors kept in
    ``vector_cache``, else in the folder of ``use_vector_cache``), then shared by the process;
    concurrent first calls wait for the one build.

    Without the embedding model (an install that skipped it) the help center still answers,
    by words only, and says so in the log once."""
    with _lock:
        if not _built:
            started = time.perf_counter()
            vector_cache = vector_cache or (_cache[0] if _cache else None)
            if embeddings.available():
                center = HelpCenter(shipped_articles(), embeddings.load_embedder(), vector_cache)
            else:
                log.warning("embedding model not installed: the help center searches by words only")
                center = HelpCenter(shipped_articles())
            _built.append(center)
            log.info(
                "help center indexed",
                extra={
                    "articles": len(center.articles),
                    "passages": len(center.passages),
                    "seconds": round(time.perf_counter() - started, 3),
                },
            )
        return _built[0]


def index_at_start_up() -> asyncio.Future[None]:
    """Build the index in a thread, beside the rest of start-up: the service becomes ready
    without waiting for it, and a help search made after it finished pays nothing. The future
    is done when the build is.

    (A search that arrives while it runs waits for the same build, as ``default_help_center``
    makes concurrent callers do.) A failed build is logged; the first use tries again. The
    thread is a daemon: a process stopping mid-build does not wait for it (the vectors are
    cached by an atomic rename, so nothing half-written is left)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle() -> None:
        if not done.done():
            done.set_result(None)

    def build() -> None:
        try:
            default_help_center()
        except Exception:
            log.exception("help center index failed at start-up: the first use builds it")
        finally:
            with contextlib.suppress(RuntimeError):  # the loop closed first: nobody waits
                loop.call_soon_threadsafe(settle)

    threading.Thread(target=build, name="help-center-index", daemon=True).start()
    return done


def built() -> bool:
    """Whether this process's help center index exists (a search would not build it)."""
    return bool(_built)


__all__ = [
    "Article",
    "ArticleHit",
    "HelpCenter",
    "SnippetHit",
    "built",
    "default_help_center",
    "index_at_start_up",
    "use_vector_cache",
]
