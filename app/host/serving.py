"""What a serving process runs for as long as its app serves (the app's lifespan, ``fincap
serve``): the server's keyring, the help center's index, the store, the services and the
in-process workers, the usage flush, the SMTP receiver, the billing periods' closing job; and
the uvicorn server that ends the live event streams and starts stopping the workers when it
stops (``Server``).

A stop (SIGTERM) takes at most about 10 s, the store up or down: requests in flight get 2 s
(``timeout_graceful_shutdown``) while the workers get 3 s for their jobs in hand, the last
usage flush waits at most the store timeout (what it cannot write is kept on local disk), the
analysis processes get 1.5 s and the embedded store 3 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import uvicorn
from starlette.applications import Starlette

from app.host.config import Settings
from app.host.database import open_store
from app.host.heap import frozen_start_up_heap
from app.host.metrics import Metrics
from app.host.processing import running_workers
from app.host.secret_key import load_keyring
from app.inbound import start_smtp_server
from engines.help_center import index_at_start_up, use_vector_cache
from engines.keyring import Keyring
from resolvers.framework.registry import Registry
from resolvers.framework.usage_meter import flushing
from resolvers.services.billing.subscriptions import schedule_period_closes

log = logging.getLogger("fincap.app")

# How long a stopping server waits for a help-center build still running.
HELP_INDEX_GRACE_S = 0.5

Lifespan = Callable[[Starlette], AbstractAsyncContextManager[None]]


class Server(uvicorn.Server):
    """uvicorn's server, which ends the app's live event streams first when it stops.

    uvicorn closes its sockets, then waits for every open response to finish before it runs
    the lifespan's shutdown; an event stream never finishes by itself, so a plain server would
    wait out ``timeout_graceful_shutdown`` and cut the streams (or wait forever without one).
    Here the event hub is closed first: each stream sends its end and the connection closes.
    """

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        state = getattr(self.config.app, "state", None)
        services = getattr(state, "services", None)
        if services is not None:
            await services.events.close()
        # The workers finish their jobs in hand while the last requests do: the two waits
        # overlap instead of adding up (the lifespan's own ``pool.stop`` then finds them done).
        pool = getattr(state, "worker_pool", None)
        stopping = asyncio.create_task(pool.stop()) if pool is not None else None
        try:
            await super().shutdown(sockets)
        finally:
            if stopping is not None:
                await stopping


def serving(settings: Settings, registry: Registry, metrics: Metrics) -> Lifespan:
    """The lifespan of an app that owns its services: they exist from start-up to shutdown and
    are ``app.state.services`` meanwhile."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        keyring = load_keyring(settings)
        # The help center is indexed at start-up in a worker thread, beside the store's start,
        # so that the first help search does not pay the build; readiness does not wait for it
        # (built in the event loop it once pushed readiness past a minute on a busy machine).
        # Its vectors are kept in the data dir, so later starts read them instead of embedding.
        use_vector_cache(settings.data_dir / "help_center")
        help_index = index_at_start_up()
        try:
            async with _running(app, settings, registry, metrics, keyring):
                yield
        finally:
            # A build still running at shutdown is not waited for long: its thread ends with
            # the process, and the next start builds again (or reads what this one cached).
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(help_index), HELP_INDEX_GRACE_S)

    return lifespan


@contextlib.asynccontextmanager
async def _running(
    app: Starlette, settings: Settings, registry: Registry, metrics: Metrics, keyring: Keyring
) -> AsyncIterator[None]:
    """The store, the workers and the usage flush, for as long as the app serves."""
    async with (
        open_store(settings) as opened,
        running_workers(
            opened,
            settings,
            count=settings.workers,
            on_job=metrics.observe_job,
            keyring=keyring,
            registry=registry,
        ) as pool,
        # Last in, first out: the final flush happens while the store is still open; what it
        # cannot write (the store away) is kept in the data directory for the next start.
        flushing(pool.services.api_calls, opened.usage, settings.usage_flush_s, settings.data_dir),
    ):
        app.state.services = pool.services
        app.state.worker_pool = pool
        smtp = None
        if settings.inbound_smtp_port is not None:
            smtp = await start_smtp_server(
                pool.services, settings.inbound_smtp_host, settings.inbound_smtp_port
            )
            log.info(
                "SMTP receiver listening",
                extra={"host": settings.inbound_smtp_host, "port": settings.inbound_smtp_port},
            )
        # Billing periods close in a durable job: queued once (dedupe key) by the API
        # process, run by whichever worker is free, here or in `fincap worker` processes.
        await schedule_period_closes(opened)
        log.info(
            "store ready",
            extra={"embedded": settings.mongodb_uri is None, "workers": settings.workers},
        )
        try:
            # What start-up built lives as long as the process: out of the collector's passes.
            with frozen_start_up_heap():
                yield
        finally:
            log.info("shutting down")
            if smtp is not None:
                smtp.close()
                await smtp.wait_closed()
