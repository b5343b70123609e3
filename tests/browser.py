"""Headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``:
JSON messages separated by NUL on fds 3 and 4), so no websocket library is needed. Tests that
use it are marked ``requires("chromium")`` (tests/requires.py; Debian: ``apt-get install
chromium-headless-shell``).

The headless shell comes first: it is the same Blink and V8 without the desktop browser around
them, and the browser tests cost about an eighth less CPU in it than in ``chromium --headless``
(docs/development/testing.md). A full Chromium or Chrome is used when it is the one installed."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from collections import deque
from pathlib import Path
from typing import Any

CHROMIUM = next(
    (
        found
        for name in ("chromium-headless-shell", "chromium", "chromium-browser", "google-chrome")
        if (found := shutil.which(name))
    ),
    None,
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--remote-debugging-pipe",
    "--window-size=1280,800",
)


class DevTools:
    """A minimal DevTools-protocol client over chromium's debugging pipe."""

    def __init__(self, to_browser: int, from_browser: int) -> None:
        self.to_browser, self.from_browser = to_browser, from_browser
        self.next_id = 0
        self.buffer = b""
        # Events (messages without an id) that arrived while waiting for replies: what a test
        # enabled (Log, Runtime) reports, such as console errors. The latest 2,000.
        self.events: deque[dict[str, Any]] = deque(maxlen=2000)
        self.pending: deque[dict[str, Any]] = deque()  # read, not yet looked at

    def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            self._read(deadline)
            while self.pending:
                reply = self.pending.popleft()
                if reply.get("id") == self.next_id:
                    assert "error" not in reply, reply
                    result: dict[str, Any] = reply["result"]
                    return result
                if "method" in reply:
                    self.events.append(reply)
        raise TimeoutError(method)

    def _read(self, deadline: float) -> None:
        """Whatever the browser has sent by ``deadline``, as messages onto ``pending``."""
        ready, _, _ = select.select(
            [self.from_browser], [], [], max(0.0, deadline - time.monotonic())
        )
        if ready:
            self.buffer += os.read(self.from_browser, 1 << 20)
        *complete, self.buffer = self.buffer.split(b"\0")
        self.pending.extend(json.loads(raw) for raw in complete)

    def evaluate(self, session: str, expression: str) -> Any:
        result = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, session: str, expression: str, timeout: float = 30) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if value := self.evaluate(session, expression):
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {expression}")


def start_chromium(profile: Path) -> tuple[subprocess.Popen[bytes], DevTools]:
    commands_r, commands_w = os.pipe()  # chromium reads commands on its fd 3
    events_r, events_w = os.pipe()  # and writes replies on its fd 4

    def wire_fds() -> None:
        os.dup2(commands_r, 3)
        os.dup2(events_w, 4)

    assert CHROMIUM is not None
    process = subprocess.Popen(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        pass_fds=(3, 4),
        preexec_fn=wire_fds,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(commands_r)
    os.close(events_w)
    return process, DevTools(commands_w, events_r)
