"""The SMTP receiver inside ``fincap serve``: a real process with FINCAP_INBOUND_SMTP_PORT set
takes a message from smtplib and its workers turn the attachment into a processed document."""

from __future__ import annotations

import os
import smtplib
import sys
import time
from pathlib import Path

import httpx
import pytest

from persistence.embedded import free_port
from tests.live import discard, start_serve
from tests.sources.conftest import fixture
from tests.sources.mail import message
from tests.test_cli_serve import admin

pytestmark = pytest.mark.wire


def test_fincap_serve_receives_mail_over_smtp(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    smtp_port = free_port()
    env = {
        **os.environ,
        "FINCAP_DATA_DIR": str(data_dir),
        "MONGODB_URI": "",
        "FINCAP_INBOUND_SMTP_PORT": str(smtp_port),
        "FINCAP_INBOUND_DOMAIN": "in.ops.test",
        "FINCAP_EXTRACTION_EXECUTOR": "thread",
    }
    log = tmp_path / "serve.log"
    served = start_serve([sys.executable, "-m", "app.cli", "serve"], env, log)
    server, base = served.process, served.base
    try:
        # Joins serve's store (before serve, it would start and stop a private one).
        boot = admin(data_dir, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
        headers = {"Authorization": f"Bearer {boot['apiKey']}", "X-Service-Org-Id": boot["orgId"]}
        address = httpx.post(
            f"{base}/v1/capabilities/workspaces.get-inbound-address", json={}, headers=headers
        ).json()["data"]["result"]["address"]
        assert address.endswith("@in.ops.test")
        mail = message(
            to=address,
            subject="Northwind invoice",
            attachments=[("northwind.pdf", "application/pdf", fixture("text-layer.pdf"))],
        )
        with smtplib.SMTP("127.0.0.1", smtp_port, timeout=30) as client:
            assert client.ehlo()[0] == 250
            assert client.send_message(mail) == {}
        deadline = time.monotonic() + 90
        items: list[dict[str, str]] = []
        while time.monotonic() < deadline:
            found = httpx.post(
                f"{base}/v1/capabilities/activity.search",
                json={"query": address, "sourceTypes": ["inbound-email"]},
                headers=headers,
            ).json()["data"]["result"]
            items = found["items"]
            if items and items[0]["status"] == "processed":
                break
            time.sleep(0.5)
        assert items and items[0]["status"] == "processed", items
        assert "Northwind" in items[0]["reasoning"]
    finally:
        discard(server)  # nothing here checks a clean stop
    assert "SMTP receiver listening" in log.read_text()
