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
from app.main import create_app
from persistence.embedded import free_port
from persistence.store import Store
from resolvers import accounts, build_registry
from resolvers.oauth import set_password
from tests.live import wait_until_healthy

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
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)  # type: ignore[arg-type]


@contextmanager
def live_server() -> Iterator[Live]:
    port = free_port()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def serve() -> None:
        store = Store(AsyncMongoMockClient(tz_aware=True)[f"fincap_{uuid.uuid4().hex[:8]}"])
        await store.ensure_indexes()
        tenant = await accounts.bootstrap(store, EMAIL, "Live Co")
        await set_password(store, EMAIL, PASSWORD)
        app = create_app(Settings(port=port), store=store, registry=build_registry())
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        holder.update(server=server, store=store, tenant=tenant, loop=asyncio.get_running_loop())
        ready.set()
        await server.serve()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(20), "server thread did not start"
    base = f"http://127.0.0.1:{port}"
    wait_until_healthy(base, timeout=20)
    tenant = holder["tenant"]
    assert isinstance(tenant, dict)
    try:
        yield Live(base, tenant["orgId"], tenant["apiKey"], holder["store"], holder["loop"])  # type: ignore[arg-type]
    finally:
        server = holder["server"]
        assert isinstance(server, uvicorn.Server)
        server.should_exit = True
        thread.join(10)
