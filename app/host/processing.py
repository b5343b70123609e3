"""The processing machinery of a process: the analysis executor, and the worker pool over the
services ``app.host.services`` builds."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing.context import ForkServerContext

from app.host.analysis_child import prepare_analysis_process
from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from engines.currency import default_rate_book
from engines.keyring import Keyring
from persistence.store import Store
from resolvers import build_job_kinds, default_registry
from resolvers.framework.registry import Registry
from resolvers.services.processing.analyzer import Analyzer
from resolvers.services.processing.recovery import recover_at_start_up
from resolvers.services.rules.rule_reading import stop_reading_process, use_reading_process

log = logging.getLogger("fincap.outbound")

# What the analysis processes run, imported once by the process they are forked from
# (multiprocessing's forkserver) rather than by each of them: the extraction engines, the rule
# grammar, rapidocr and onnxruntime cost an analysis process about 1.2 CPU-s before its first
# file (measured), and a replacement for a killed one paid it again. Importing them starts no
# thread, so forking after them is safe; the OCR models are loaded in each process (its own
# onnxruntime sessions), on its first image.
_preload: list[str] = [
    "app.host.analysis_child",
    "engines.analysis",
    "engines.thumbnail",
    "engines.rules.parser",
    "rapidocr.main",
    "rapidocr.inference_engine.onnxruntime",
]


def preload_too(modules: Iterable[str]) -> None:
    """Have this process's forkserver import ``modules`` as well, should it not run yet.
    multiprocessing keeps one forkserver (one preload list) a process: a caller that forks
    other work from it (the test suite's ``tests/preloaded.py``) adds its modules here, so
    whichever starts the server first, it imports what both need."""
    _preload.extend(name for name in modules if name not in _preload)


def analysis_context() -> ForkServerContext:
    """The start method of the analysis processes: forked from this process's forkserver (a
    single-threaded process started once, with ``_preload`` imported). Not ``fork``: this
    process has driver threads."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(_preload))
    return context


def make_executor(settings: Settings, size: int | None = None) -> Executor:
    """Where CPU-heavy extraction runs: separate processes by default, so OCR and parsing never
    hold the GIL the API serves with (``analysis_context``). Each process runs under the
    analysis memory limit and dies with this one (``app/host/analysis_child.py``); threads
    (``FINCAP_EXTRACTION_EXECUTOR=thread``) have neither."""
    size = size or max(1, settings.workers)
    if settings.extraction_executor == "thread":
        # One thread: pdfium is not thread-safe (two renders at once corrupt its heap).
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="extract")
    limit = settings.analysis_memory_mb * 1024 * 1024 if settings.analysis_memory_mb else None
    return ProcessPoolExecutor(
        max_workers=size,
        mp_context=analysis_context(),
        initializer=prepare_analysis_process,
        initargs=(os.getpid(), limit),
    )


@contextlib.asynccontextmanager
async def running_workers(
    store: Store,
    settings: Settings,
    *,
    count: int,
    on_job: Callable[[str, str], None] | None = None,
    keyring: Keyring,
    registry: Registry | None = None,
) -> AsyncIterator[WorkerPool]:
    """A started worker pool of ``count`` workers; stopped (jobs in hand finished) on exit.

    The pool's ``services`` (store, analyzer over the analysis processes, rates, the server's
    ``keyring`` and a wake-up for the pool) are the process's services. ``on_job(kind,
    outcome)`` is told of every job run (metrics). Before the workers start, the start-up
    check (``resolvers.services.processing.recovery``) queues again what a killed process left
    behind."""
    for warning in settings.refused_endpoints():
        log.warning(warning)
    # Rule sentences are read in an analysis-like child process of their own (one worker): parsing
    # never takes the interpreter lock the API serves with (resolvers.services.rules.rule_reading).
    use_reading_process(lambda: make_executor(settings, 1))
    analyzer = Analyzer(
        new_executor=lambda size: make_executor(settings, size), size=max(1, settings.workers)
    )
    services = build_services(
        settings,
        store,
        keyring=keyring,
        registry=registry or default_registry(),
        analyzer=analyzer,
        rates=default_rate_book(),
    )
    pool = WorkerPool(
        services,
        build_job_kinds(),
        count=count,
        lease_s=settings.job_lease_s,
        per_workspace=settings.jobs_per_workspace or None,
        time_limit_s=settings.job_time_limit_s,
        on_job=on_job,
    )
    # Before any worker claims: what a killed process left behind is queued again.
    await recover_at_start_up(pool.services)
    if count > 0:
        pool.start()
    try:
        yield pool
    finally:
        await pool.stop()
        await services.connectors.aclose()
        analyzer.shutdown()
        stop_reading_process()
