"""Schemathesis over /openapi.json, every check with positive and negative data, against a live
server on the embedded store (so files.upload reaches GridFS).

What the schema cannot say is documented, per operation, in ``schemathesis.toml`` beside this
file (and in the README): the only deviations allowed from the checks' expectations.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn

from app.config import Settings
from persistence.client import connect
from persistence.embedded import EmbeddedServer, free_port
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.throttle import ExpensiveCallGate
from resolvers.services import accounts
from tests.conftest import app_on
from tests.live import wait_until_healthy

pytestmark = pytest.mark.wire
CONFIG = Path(__file__).with_name("schemathesis.toml")
# Cases per operation: enough for every operation's coverage phase plus a fuzzing sample; the
# whole run stays around a quarter of a minute.
EXAMPLES = 10


@contextmanager
def live_server(mongodb_uri: str) -> Iterator[tuple[str, dict[str, str]]]:
    """The app on a free port, from a thread, on a fresh database; yields (base, tenant)."""
    port = free_port()
    ready = threading.Event()
    tenant: dict[str, str] = {}
    server: uvicorn.Server | None = None

    async def serve() -> None:
        nonlocal server
        client, db = connect(mongodb_uri, f"st_{uuid.uuid4().hex[:8]}")
        store = Store(db)
        await store.ensure_indexes()
        tenant.update(await accounts.bootstrap(store, "st@example.com", "Schemathesis"))
        app = app_on(store, build_registry(), Settings(port=port))
        # The budget of expensive calls per key (rules.prepare, rules.execute: 10 a minute)
        # would answer most of the fuzzer's cases 429 and leave the logic behind them
        # untested; the budget has tests of its own (tests/rules/test_reading_limits.py).
        app.state.services = dataclasses.replace(
            app.state.services,
            expensive_calls=ExpensiveCallGate(burst=100_000, per_minute=100_000),
        )
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
        ready.set()
        try:
            await server.serve()
        finally:
            await client.drop_database(db.name)
            client.close()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(30), "server thread did not start"
    base = f"http://127.0.0.1:{port}"
    wait_until_healthy(base, timeout=30)
    try:
        yield base, tenant
    finally:
        assert server is not None
        server.should_exit = True
        thread.join(30)


def test_schemathesis_all_checks_positive_and_negative(
    embedded_server: EmbeddedServer, tmp_path: Path
) -> None:
    with live_server(embedded_server.uri) as (base, tenant):
        command = [
            str(Path(sys.executable).with_name("schemathesis")),
            "--config-file",
            str(CONFIG),
            "run",
            f"{base}/openapi.json",
            "--url",
            f"{base}/v1",
            "--checks",
            "all",
            "--mode",
            "all",
            "--max-examples",
            str(EXAMPLES),
            "--seed",
            "8",
            "--generation-database",
            "none",
            "--header",
            f"Authorization: Bearer {tenant['apiKey']}",
            "--header",
            f"X-Service-Org-Id: {tenant['orgId']}",
            "--no-color",
            "--report",
            "junit",
            "--report-dir",
            str(tmp_path),
        ]
        run = subprocess.run(
            command,
            capture_output=True,
            text=True,
            check=False,
            timeout=900,  # a hang guard: 47 operations took over 240 s on a loaded 2-core machine
            env={**os.environ, "NO_COLOR": "1"},
        )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    assert "0 failures" in output or "passed" in output, output[-2000:]
