"""Helpers for tests that serve the app on a real socket from a thread."""

from __future__ import annotations

import time

import httpx


def wait_until_healthy(base: str, timeout: float = 30) -> None:
    """Return once ``GET {base}/healthz`` answers 200; raise after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
