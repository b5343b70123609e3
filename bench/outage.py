"""Settle times of a store outage (issue 35): how fast fincap says so, how fast it answers again,
how fast it stops.

Each round starts its own SecantusDB (a stand-in for a MongoDB deployment, ``MONGODB_URI``) and
``fincap serve`` on it, then measures:

1. ``first 503``: the store killed (SIGKILL), the time until a ``documents.search`` call
   answers 503 (calls made back to back; each call's own time is ``503 answer``);
2. ``back``: the store started again on the same port and files, the time until a call
   answers 200 (no restart of fincap);
3. ``embedded back``: ``fincap serve`` on its embedded store, the store's process killed, the
   time until a call answers 200 again (serve restarts it);
4. ``stop, store down``: the store killed again, the time ``fincap serve`` takes to exit after
   SIGTERM.

The median and the largest of ``--rounds`` rounds are printed with ``os.getloadavg()``.

    .venv/bin/python bench/outage.py              # 3 rounds
    .venv/bin/python bench/outage.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.hardening.faults import FINCAP, OwnStore, admin, serve_env, stop_timed
from tests.live import discard, start_serve, stop


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def search(base: str, headers: dict[str, str]) -> tuple[int, float]:
    started = time.monotonic()
    try:
        status = httpx.post(
            f"{base}/v1/capabilities/documents.search",
            json={"useSearch": False, "limit": 1},
            headers=headers,
            timeout=120,
        ).status_code
    except httpx.HTTPError:
        status = 0
    return status, time.monotonic() - started


def until_status(base: str, headers: dict[str, str], wanted: int) -> tuple[float, list[float]]:
    """Seconds until a call answers ``wanted``, and each call's own time meanwhile."""
    started = time.monotonic()
    took: list[float] = []
    while time.monotonic() - started < 300:
        status, seconds = search(base, headers)
        took.append(seconds)
        if status == wanted:
            return time.monotonic() - started, took
    raise SystemExit(f"no {wanted} within 300 s")


def one_round(folder: Path) -> dict[str, float]:
    figures: dict[str, float] = {}
    store = OwnStore(folder / "store", folder / "store.log")
    store.start()
    env = serve_env(folder / "data", MONGODB_URI=store.uri)
    boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
    headers = {"Authorization": f"Bearer {boot['apiKey']}", "X-Service-Org-Id": boot["orgId"]}
    served = start_serve([*FINCAP, "serve"], env, folder / "serve.log")
    try:
        assert search(served.base, headers)[0] == 200
        store.kill()
        figures["first 503"], took = until_status(served.base, headers, 503)
        figures["503 answer"] = took[-1]
        store.start()
        figures["back"], _ = until_status(served.base, headers, 200)
        store.kill()
        until_status(served.base, headers, 503)
        figures["stop, store down"] = stop_timed(served.process, deadline_s=120)
    finally:
        stop(served.process)
        store.stop()

    env = serve_env(folder / "embedded")
    served = start_serve([*FINCAP, "serve"], env, folder / "embedded.log")
    try:
        # Once the server is up: the command joins its store (before, it started and stopped a
        # private one of its own first, a store start and stop more for nothing measured).
        boot = admin(env, "bootstrap", "--email", "ops@example.com", "--workspace", "Ops")
        headers = {"Authorization": f"Bearer {boot['apiKey']}", "X-Service-Org-Id": boot["orgId"]}
        assert search(served.base, headers)[0] == 200
        state = json.loads((folder / "embedded" / "server.json").read_text())
        supervisor = psutil.Process(state["pid"])
        for process in [*supervisor.children(recursive=True), supervisor]:
            process.kill()
        killed_at = time.monotonic()
        until_status(served.base, headers, 200)
        figures["embedded back"] = time.monotonic() - killed_at
    finally:
        # Killed, not stopped: its stop is not measured, and its data directory is thrown
        # away with the round's folder (a clean stop of serve and its store took ~5 s here).
        discard(served.process)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    rounds = parser.parse_args().rounds
    results: list[dict[str, float]] = []
    for number in range(rounds):
        with tempfile.TemporaryDirectory() as folder:
            figures = one_round(Path(folder))
        results.append(figures)
        shown = ", ".join(f"{name} {value:.2f} s" for name, value in figures.items())
        print(f"round {number + 1}: {shown} ({load()})", flush=True)
    names: list[str] = list(results[0])
    pick: Callable[[str], list[float]] = lambda name: [r[name] for r in results]  # noqa: E731
    for name in names:
        values = pick(name)
        print(
            f"{name:>18}: median {statistics.median(values):.2f} s, "
            f"largest {max(values):.2f} s over {rounds} rounds ({load()})"
        )


if __name__ == "__main__":
    main()
