"""``fincap serve`` and ``fincap admin`` as a user runs them, on one data directory."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from app.cli import main
from persistence.embedded import STATE_FILE, shared_embedded_store
from tests.live import READY_DEADLINE_S, start_serve
from tests.requires import requires

pytestmark = pytest.mark.wire


def admin(data_dir: Path, *args: str) -> dict[str, str]:
    return admin_like(data_dir, "admin", *args)


def admin_like(data_dir: Path, *args: str) -> dict[str, Any]:
    env = {"FINCAP_DATA_DIR": str(data_dir), "MONGODB_URI": ""}
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    parsed: dict[str, Any] = json.loads(result.output)
    return parsed


def test_admin_and_serve_share_the_data_directory(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    # 1. Without a server running: the admin command starts a private one and stops it.
    boot = admin(data_dir, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
    assert set(boot) == {"userId", "orgId", "apiKey", "signInUrl"}
    assert boot["apiKey"].startswith("sk_") and boot["orgId"].startswith("org_")
    assert "/app/#/sign-in-link/" in boot["signInUrl"]
    assert not (data_dir / STATE_FILE).exists()

    env = {**os.environ, "FINCAP_DATA_DIR": str(data_dir), "MONGODB_URI": ""}
    log = tmp_path / "serve.log"
    # The help center's vectors computed by this server, not lent by an earlier one (step 5);
    # a new interpreter, as an operator starts it (the command itself is what this test checks).
    command = [sys.executable, "-m", "app.cli", "serve"]
    served = start_serve(command, env, log, lend_vectors=False, fresh=True)
    server, base = served.process, served.base
    try:
        state = json.loads((data_dir / STATE_FILE).read_text())
        # 2. Data written before the server started is served by it.
        auth = {"Authorization": f"Bearer {boot['apiKey']}"}
        listed = httpx.get(f"{base}/v1/workspaces", headers=auth).json()
        assert [w["id"] for w in listed["data"]["result"]["workspaces"]] == [boot["orgId"]]

        # 3. While it runs, admin commands join it; their writes are visible at once.
        second = admin(data_dir, "create-workspace", "--email", "ops@example.com", "--name", "Side")
        key = admin(
            data_dir, "create-key", "--email", "ops@example.com", "--restrict-to", second["orgId"]
        )
        restricted = {"x-api-key": key["apiKey"]}
        only = httpx.get(f"{base}/v1/workspaces", headers=restricted).json()
        assert [w["id"] for w in only["data"]["result"]["workspaces"]] == [second["orgId"]]
        forbidden = httpx.post(
            f"{base}/v1/capabilities/workspaces.list",
            json={},
            headers={**restricted, "X-Service-Org-Id": boot["orgId"]},
        )
        assert forbidden.status_code == 403
        assert forbidden.headers["x-request-id"]

        # 4. Demo data loads while the server runs, and is served at once.
        loaded = admin_like(data_dir, "demo", "load", "--org", boot["orgId"], "--count", "40")
        assert loaded == {"orgId": boot["orgId"], "inserted": 40}
        counted = httpx.post(
            f"{base}/v1/capabilities/documents.count",
            json={"archived": "include"},
            headers={**auth, "X-Service-Org-Id": boot["orgId"]},
        ).json()
        assert counted["data"]["result"]["count"] == 40
        # The help center is indexed beside start-up; a stop does not wait for a build still
        # running, so the test waits for it (the log line read after the stop).
        deadline = time.monotonic() + READY_DEADLINE_S
        while "help center indexed" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    output = log.read_text()
    # 5. Graceful shutdown: the embedded server is gone and the state file removed.
    # uvicorn re-raises the signal it handled once shutdown is complete: -SIGTERM is clean.
    assert server.returncode in (0, -signal.SIGTERM), output
    assert "Application shutdown complete" in output
    assert not (data_dir / STATE_FILE).exists()
    with pytest.raises(ProcessLookupError):
        os.kill(state["pid"], 0)
    log_lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    assert any(line.get("path") == "/v1/workspaces" and line.get("requestId") for line in log_lines)
    # The help center was indexed at start-up, outside any request (no help page was asked
    # for), and once; its vectors are kept in the data directory for the next start.
    indexed = [line for line in log_lines if line.get("msg") == "help center indexed"]
    assert len(indexed) == 1 and "requestId" not in indexed[0], indexed
    assert indexed[0]["articles"] >= 15
    assert list((data_dir / "help_center").iterdir())

    # 6. Data survived the restart: the user still exists, so create-key finds them.
    again = admin(data_dir, "create-key", "--email", "ops@example.com")
    assert again["apiKey"].startswith("sk_")


def test_admin_reports_errors_without_traceback(tmp_path: Path) -> None:
    env = {"FINCAP_DATA_DIR": str(tmp_path / "d"), "MONGODB_URI": ""}
    result = CliRunner().invoke(
        main, ["admin", "create-key", "--email", "nobody@example.com"], env=env
    )
    assert result.exit_code == 2
    assert "no user with email 'nobody@example.com'" in result.output


@requires("model")
def test_admin_reindex_embeds_what_has_no_vector(tmp_path: Path) -> None:
    """Demo data is embedded as it loads; reindex adds what is missing, --all redoes every one."""
    data_dir = tmp_path / "data"
    boot = admin(data_dir, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
    org = boot["orgId"]
    # The next three join one store (each would start and stop a private one: seconds each).
    with shared_embedded_store(data_dir, publish=True):
        loaded = admin_like(data_dir, "demo", "load", "--org", org, "--count", "12")
        assert loaded["inserted"] == 12
        assert admin_like(data_dir, "admin", "reindex", "--org", org)["reindexed"] == {org: 0}
        redone = admin_like(data_dir, "admin", "reindex", "--all")
    assert redone["reindexed"] == {org: 12}
    assert "multilingual" in redone["model"]
