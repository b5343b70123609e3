"""fincap on a real socket (uvicorn in a thread, in-memory store) for clients outside ASGI:
the official MCP client, the MCP Inspector, headless Chromium and the bench."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from mongomock_motor import AsyncMongoMockClient
from starlette.types import ASGIApp

from app.host.config import Settings
from persistence.client import connect
from persistence.store import Store
from resolvers import build_registry
from resolvers.services.auth import accounts
from resolvers.services.auth.oauth import set_password
from tests.conftest import app_on
from tests.live import READY_DEADLINE_S, app_in_thread

EMAIL = "live@example.com"
PASSWORD = "correct horse battery"


@dataclass
class Live:
    base: str
    org_id: str
    api_key: str
    store: Store
    loop: asyncio.AbstractEventLoop

    def run(self, coroutine: object) -> object:
        """Run a coroutine on the server's loop (the store belongs to it)."""
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)  # type: ignore[arg-type]
        return future.result(READY_DEADLINE_S)


@contextmanager
def live_server(mongo_uri: str | None = None) -> Iterator[Live]:
    """The app on a socket; its store in memory, or on ``mongo_uri`` (the embedded server of
    the wire tests: originals live in GridFS, which the in-memory store lacks)."""

    async def setup(port: int) -> tuple[ASGIApp, tuple[Store, dict[str, str]]]:
        name = f"fincap_{uuid.uuid4().hex[:8]}"
        # The client is made here, on the server's loop, which motor binds it to.
        database = (
            connect(mongo_uri, name)[1] if mongo_uri else AsyncMongoMockClient(tz_aware=True)[name]
        )
        store = Store(database)
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, EMAIL, "Live Co")
        await set_password(store, EMAIL, PASSWORD)
        return app_on(store, build_registry(), Settings(port=port)), (
            store,
            tenant,
        )

    # Keep-alive well past the clients' own idle limit (Node's fetch: 4 s): with uvicorn's 5 s,
    # a stalled server could close a connection the client was reusing.
    with app_in_thread(setup, timeout_keep_alive=120) as served:
        store, tenant = served.setup
        yield Live(served.base, tenant["orgId"], tenant["apiKey"], store, served.loop)
