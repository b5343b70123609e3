"""A disk that fills (issue 35, F4): intake is refused before the store runs out (REST 507,
SMTP ``452 4.3.1``), and an embedded store whose storage engine stopped on a full disk is
started again by ``fincap serve`` once there is room. Before: the store panicked (WiredTiger)
and stayed broken after space was freed, every call 500 while ``/healthz`` said ok.

The live tests give ``fincap serve`` a small private tmpfs as its data directory (tests run as
root here and in CI); elsewhere they are skipped and the free-space check is covered through a
stat hook (``test_the_floor_reads_the_file_system_through_a_stat_hook``)."""

from __future__ import annotations

import base64
import contextlib
import os
import smtplib
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from app.host.config import Settings
from persistence.embedded import free_port
from persistence.store import Store
from tests.conftest import Tenant, app_on
from tests.hardening.faults import FINCAP, admin, serve_env, until
from tests.live import Served, discard, start_serve
from tests.sources.conftest import fixture
from tests.sources.mail import message

pytestmark = pytest.mark.wire

MB = 1024 * 1024
DISK_MB = 96


@contextlib.contextmanager
def private_disk(path: Path, size_mb: int = DISK_MB) -> Iterator[Path]:
    """A tmpfs of ``size_mb`` at ``path`` for as long as the block runs (root only)."""
    if os.geteuid() != 0:
        pytest.skip("a private tmpfs needs root; the stat-hook test covers the check")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)],
        capture_output=True,
        text=True,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def free_bytes(path: Path) -> int:
    stat = os.statvfs(path)
    return stat.f_bavail * stat.f_frsize


def fill(path: Path, leave_bytes: int) -> Path:
    """A file taking the disk's free space but ``leave_bytes``."""
    filler = path / "filler"
    size = max(0, free_bytes(path) - leave_bytes)
    with open(filler, "wb") as handle:
        chunk = b"\0" * MB
        while size > 0:
            try:
                handle.write(chunk[: min(MB, size)])
            except OSError:
                break
            size -= MB
    return filler


class Client:
    def __init__(self, served: Served, boot: dict[str, str]) -> None:
        self.base = served.base
        self.headers = {
            "Authorization": f"Bearer {boot['apiKey']}",
            "X-Service-Org-Id": boot["orgId"],
        }

    def call(self, slug: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(
            f"{self.base}/v1/capabilities/{slug}", json=body, headers=self.headers, timeout=60
        )

    def upload(self) -> httpx.Response:
        data = base64.b64encode(fixture("text-layer.pdf")).decode()
        return self.call("files.upload", {"fileName": "northwind.pdf", "base64Data": data})

    def health(self) -> dict[str, Any]:
        found: dict[str, Any] = httpx.get(f"{self.base}/healthz", timeout=60).json()
        return found


def smtp_mail_reply(port: int) -> tuple[int, str]:
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as client:
        client.ehlo()
        code, text = client.mail("carol@example.org")
        return code, text.decode()


def test_intake_is_refused_before_the_disk_fills(tmp_path: Path) -> None:
    with private_disk(tmp_path / "disk") as disk:
        smtp_port = free_port()
        env = serve_env(
            disk / "data",
            FINCAP_MIN_FREE_DISK_MB="24",
            FINCAP_INBOUND_SMTP_PORT=str(smtp_port),
            FINCAP_WORKERS="0",
        )
        served = start_serve([*FINCAP, "serve"], env, tmp_path / "serve.log")
        try:
            # Joins serve's store (before serve, it would start and stop a private one).
            boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
            client = Client(served, boot)
            assert client.upload().status_code == 200
            assert smtp_mail_reply(smtp_port)[0] == 250
            counted = client.call("documents.count", {}).json()["data"]["result"]["count"]

            filler = fill(disk, leave_bytes=16 * MB)  # under the 24 MB floor
            refused = client.upload()
            assert refused.status_code == 507, refused.text
            error = refused.json()["error"]
            assert error["reason"] == "insufficient_storage"
            assert "storage space" in error["errorMessage"]
            assert "nothing was stored" in error["errorMessage"]
            assert int(refused.headers["retry-after"]) > 0
            after = client.call("documents.count", {}).json()["data"]["result"]["count"]
            assert after == counted  # nothing half-made
            code, text = smtp_mail_reply(smtp_port)
            assert code == 452 and text.startswith("4.3.1"), (code, text)
            health = client.health()
            assert health["status"] == "degraded" and health["disk"]["low"] is True
            # Reads go on while intake is refused.
            assert client.call("documents.search", {"useSearch": False}).status_code == 200

            filler.unlink()
            assert client.upload().status_code == 200
            assert smtp_mail_reply(smtp_port)[0] == 250
            assert client.health()["disk"]["low"] is False
        finally:
            discard(served.process)  # nothing here checks a clean stop


def test_an_embedded_store_stopped_by_a_full_disk_is_started_again_once_there_is_room(
    tmp_path: Path,
) -> None:
    with private_disk(tmp_path / "disk") as disk:
        # No floor: the store is let to fill its disk, as a write from elsewhere would. The
        # store checkpoints every second instead of every minute (its child of serve inherits
        # the variable): the write that finds the disk full comes within a second of the
        # filler, not up to a minute later (the test waited for it, 58 s of its 71).
        env = serve_env(
            disk / "data",
            FINCAP_MIN_FREE_DISK_MB="0",
            FINCAP_WORKERS="0",
            SECANTUS_CHECKPOINT_SECONDS="1",
        )
        served = start_serve([*FINCAP, "serve"], env, tmp_path / "serve.log")
        try:
            # Joins serve's store (before serve, it would start and stop a private one).
            boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
            client = Client(served, boot)
            assert client.upload().status_code == 200
            filler = fill(disk, leave_bytes=256 * 1024)

            def store_broken() -> bool:
                return client.upload().status_code != 200

            until(store_broken, 120, "the store never ran out of room", pause=0.1)
            filler.unlink()
            freed_at = time.monotonic()

            def answering() -> bool:
                search = client.call("documents.search", {"useSearch": False})
                return search.status_code == 200 and client.upload().status_code == 200

            until(answering, 120, "the store did not work again after space was freed")
            settled = time.monotonic() - freed_at
            # Calls may succeed a moment before the restart is over and said so.
            until(lambda: client.health()["store"]["state"] == "up", 60, "health not up")
            assert client.health()["store"]["restarts"] >= 1
            sys.stderr.write(f"full disk freed: store working again after {settled:.2f} s\n")
        finally:
            discard(served.process)  # nothing here checks a clean stop


async def test_the_floor_reads_the_file_system_through_a_stat_hook(tmp_path: Path) -> None:
    """Without root: the free-space floor over a stat hook (``statvfs`` replaced)."""
    from persistence.disk import free_bytes_at
    from resolvers.framework.errors import InsufficientStorage
    from resolvers.services.processing.disk_space import DiskSpace

    free = {"bytes": 100 * MB}

    def statvfs(path: str) -> Any:
        assert Path(path) == tmp_path  # the nearest existing folder of the store's
        return SimpleNamespace(f_bavail=free["bytes"] // 4096, f_frsize=4096)

    async def probe() -> int | None:
        return free_bytes_at(tmp_path / "data" / "db", statvfs)

    clock = [0.0]
    disk = DiskSpace(64 * MB, probe, clock=lambda: clock[0])
    await disk.require_room(10 * MB)  # 100 - 10 >= 64
    with pytest.raises(InsufficientStorage):
        await disk.require_room(40 * MB)  # 100 - 40 < 64
    free["bytes"] = 50 * MB
    await disk.require_room(10 * MB)  # still the cached 100 MB: read at most every 2 s
    clock[0] += 5
    with pytest.raises(InsufficientStorage) as refused:
        await disk.require_room(0)
    assert refused.value.status == 507 and "nothing was stored" in refused.value.message
    assert await DiskSpace(0, probe).low(10**12) is False  # no floor, no refusal


async def test_every_intake_door_refuses_below_the_floor_and_stores_nothing(
    store: Store, alice: Tenant
) -> None:
    """In-process, the disk below the floor (a probe that says so): files.upload over REST,
    GraphQL and MCP, and a message over the relay's HTTP door, each refused with 507 and
    nothing written; reads go on."""
    from resolvers.services.processing.disk_space import DiskSpace

    async def nearly_full() -> int | None:
        return 10 * MB

    settings = Settings(inbound_secret="relay-secret-for-tests")
    app = app_on(store, settings=settings, disk=DiskSpace(64 * MB, nearly_full))
    address = (await store.inbound_addresses.get_or_create(alice.org_id))["alias"]
    pdf = base64.b64encode(fixture("text-layer.pdf")).decode()
    upload = {"fileName": "northwind.pdf", "base64Data": pdf}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
        rest = await http.post(
            "/v1/capabilities/files.upload", json=upload, headers=alice.headers()
        )
        graphql = await http.post(
            "/v1/graphql",
            json={
                "query": "mutation($input: UploadFileInput!) { filesUpload(input: $input) "
                "{ documentId } }",
                "variables": {"input": upload},
            },
            headers=alice.headers(),
        )
        mcp = await http.post(
            "/mcp",
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "files_upload", "arguments": upload},
            },
            headers={**alice.headers(), "Accept": "application/json, text/event-stream"},
        )
        relay = await http.post(
            "/v1/inbound/email",
            params={"to": f"{address}@{settings.inbound_domain}"},
            content=message(
                to="x@example.org",
                attachments=[("northwind.pdf", "application/pdf", fixture("text-layer.pdf"))],
            ).as_bytes(),
            headers={"Authorization": "Bearer relay-secret-for-tests"},
        )
        search = await http.post(
            "/v1/capabilities/documents.search", json={"useSearch": False}, headers=alice.headers()
        )
    assert rest.status_code == 507, rest.text
    assert rest.json()["error"]["reason"] == "insufficient_storage"
    assert int(rest.headers["retry-after"]) > 0
    [error] = graphql.json()["errors"]
    assert error["extensions"]["code"] == "INSUFFICIENT_STORAGE", error
    tool = mcp.json()["result"]
    assert tool["isError"] and tool["structuredContent"]["error"]["errorCode"] == 507, tool
    assert relay.status_code == 507, relay.text
    assert search.status_code == 200
    for collection in ("documents", "activity", "jobs", "originals.files"):
        assert await store.db[collection].count_documents({}) == 0, collection
