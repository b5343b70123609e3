"""The dashboard's main page in headless Chromium: GraphQL requests and time to first render.

A fresh data directory gets a user, a workspace and N demo documents (``fincap demo load``),
``fincap serve`` runs on it (embedded store), and Chromium opens ``/app/`` signed in with the
API key. Each run is a fresh page load; the page records ``performance.now()`` when the
overview (totals, both charts, the latest documents) is first in the DOM. Printed: the
GraphQL requests the page sent, and median / min / max of the time to first render and of
the GraphQL request itself (Resource Timing), over ``--runs`` loads after one warm-up.

    .venv/bin/python bench/web.py --documents 20000 --runs 5
    .venv/bin/python bench/web.py --documents 1000 --runs 5        # quick
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.browser import CHROMIUM
from tests.web.dashboard_live import chromium, prepare, serving


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit("needs a chromium binary (make browser-deps)")

    with tempfile.TemporaryDirectory() as root:
        data_dir = Path(root) / "data"
        started = time.perf_counter()
        boot = prepare(data_dir, args.documents)
        print(f"loaded {args.documents:,} demo documents in {time.perf_counter() - started:.0f} s")
        with serving(data_dir, boot) as live, chromium(Path(root) / "profile") as page:
            page.go(f"{live.base}/app/")
            page.wait("!!document.querySelector('#key-form')")
            session = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
            page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(session))})")
            renders: list[float] = []
            graphql: list[float] = []
            requests: set[int] = set()
            for run in range(args.runs + 1):  # the first load warms caches and is not counted
                page.call("Page.reload", ignoreCache=True)
                page.wait(
                    "window.__fincapFirstRender > 0 && "
                    "document.querySelectorAll('#chart-months .bar').length > 0",
                    timeout=120,
                )
                if run == 0:
                    continue
                renders.append(page.js("window.__fincapFirstRender"))
                requests.add(page.js("window.__fincapRequests"))
                graphql.extend(
                    page.js(
                        "performance.getEntriesByType('resource')"
                        ".filter(e => e.name.endsWith('/v1/graphql')).map(e => e.duration)"
                    )
                )
            count = page.js("document.querySelector('#doc-count').innerText")

    def line(name: str, values: list[float]) -> str:
        return (
            f"{name:<32} median {statistics.median(values):7.0f} ms   "
            f"min {min(values):7.0f}   max {max(values):7.0f}"
        )

    print(f"workspace documents shown: {count}; runs: {args.runs}")
    print(f"GraphQL requests per page load: {sorted(requests)}")
    print(line("time to first render", renders))
    print(line("the GraphQL request", graphql))


if __name__ == "__main__":
    main()
