"""Wiring of the processing machinery from settings: executor, analyzer, worker pool."""

from __future__ import annotations

import contextlib
import multiprocessing
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor

from app.config import Settings
from app.workers import WorkerPool
from engines.currency import default_rate_book
from persistence.store import Store
from resolvers import build_job_kinds
from resolvers.context import Services
from resolvers.processing import Analyzer


def make_executor(settings: Settings) -> Executor:
    """Where CPU-heavy extraction runs: separate processes by default, so OCR and parsing never
    hold the GIL the API serves with. ``spawn`` because the parent has driver threads."""
    size = max(1, settings.workers)
    if settings.extraction_executor == "thread":
        return ThreadPoolExecutor(max_workers=size, thread_name_prefix="extract")
    return ProcessPoolExecutor(max_workers=size, mp_context=multiprocessing.get_context("spawn"))


@contextlib.asynccontextmanager
async def running_workers(
    store: Store,
    settings: Settings,
    *,
    count: int,
    on_job: Callable[[str, str], None] | None = None,
) -> AsyncIterator[WorkerPool]:
    """A started worker pool of ``count`` workers; stopped (jobs in hand finished) on exit.

    The pool's ``services`` (store, analyzer over the executor, rates, and a wake-up for the
    pool) are the process's services. ``on_job(kind, outcome)`` is told of every job run
    (metrics)."""
    executor = make_executor(settings)
    services = Services(
        store=store,
        base_url=settings.base_url,
        rates=default_rate_book(),
        analyzer=Analyzer(executor),
    )
    pool = WorkerPool(
        services,
        build_job_kinds(),
        count=count,
        lease_s=settings.job_lease_s,
        on_job=on_job,
    )
    if count > 0:
        pool.start()
    try:
        yield pool
    finally:
        await pool.stop()
        executor.shutdown(wait=True, cancel_futures=True)
