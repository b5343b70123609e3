"""fincap on a real socket (uvicorn in a thread, in-memory store) for clients outside ASGI:
the official MCP client, the MCP Inspector, headless Chromium and the bench."""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from mongomock_motor import AsyncMongoMockClient

from app.config import Settings
from persistence.store import Store
from resolvers import build_registry
from resolvers.services import accounts
from resolvers.services.oauth import set_password
from tests.conftest import app_on
from tests.live import READY_DEADLINE_S, STOP_GRACE_S, bound_socket, wait_until_healthy

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
def live_server() -> Iterator[Live]:
    # Bound now and handed to uvicorn: no other process can take the port in between.
    sock = bound_socket()
    port = sock.getsockname()[1]
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def serve() -> None:
        try:
            store = Store(AsyncMongoMockClient(tz_aware=True)[f"fincap_{uuid.uuid4().hex[:8]}"])
            await store.ensure_indexes()
            tenant = await accounts.bootstrap(store, EMAIL, "Live Co")
            await set_password(store, EMAIL, PASSWORD)
            app = app_on(store, build_registry(), Settings(port=port))
            # Keep-alive well past the clients' own idle limit (Node's fetch: 4 s): with
            # uvicorn's 5 s, a stalled server could close a connection the client was reusing.
            config = uvicorn.Config(
                app, host="127.0.0.1", port=port, log_level="warning", timeout_keep_alive=120
            )
            server = uvicorn.Server(config)
            loop = asyncio.get_running_loop()
            holder.update(server=server, store=store, tenant=tenant, loop=loop)
        finally:
            ready.set()  # also when setting up failed: the test fails at once, not at a deadline
        await server.serve(sockets=[sock])

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    try:
        assert ready.wait(READY_DEADLINE_S), "server thread did not start"
        assert "server" in holder, "setting up the server failed (see the thread's traceback)"
        base = f"http://127.0.0.1:{port}"
        wait_until_healthy(base)
        tenant = holder["tenant"]
        assert isinstance(tenant, dict)
        yield Live(base, tenant["orgId"], tenant["apiKey"], holder["store"], holder["loop"])  # type: ignore[arg-type]
    finally:
        server = holder.get("server")
        if isinstance(server, uvicorn.Server):
            server.should_exit = True
        thread.join(STOP_GRACE_S)
        sock.close()
