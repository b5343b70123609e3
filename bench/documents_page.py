"""The dashboard's Documents page in headless Chromium: first render, a sort, a filter, the CSV.

A fresh data directory gets a user, a workspace and N demo documents (``fincap demo load``),
``fincap serve`` runs on it (embedded store), and Chromium opens ``#/documents`` signed in with
the API key. Timed in the page (``performance.now()``, a MutationObserver on the list):

- first render: a fresh load of ``#/documents`` (the default: last 12 months, newest first, a
  page of 50 and the count), from navigation start to the table in the DOM;
- sort: a click on Amount (the server sorts every match) to the new table;
- filter: status = processed, to the new table and count;
- CSV of all matching: the Download CSV button with nothing ticked (every match fetched 100 at
  a time) to the file made, with the number of rows.

Median / min / max over ``--runs`` after one warm-up (``--warm-ups``), with the load average
beside each figure.

    .venv/bin/python bench/documents_page.py --documents 20000 --runs 5
    .venv/bin/python bench/documents_page.py --documents 1000 --runs 3     # quick

``--seed-on-server`` starts the server first and loads the demo documents on its store (one
store start and stop fewer: the smoke test's tiny run; the "loaded" time is then the commands'
alone, without a store's start and stop). The server is killed at the end, not stopped
cleanly: its data directory is thrown away.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import add_warm_up_option
from tests.browser import CHROMIUM
from tests.web.dashboard_live import (
    Page,
    add_seed_on_server,
    chromium,
    prepare,
    prepared_and_serving,
)

# Resolves when #doc-list shows `want` (its data-hash) — the list rendered for that address —
# with the milliseconds since `start`.
UNTIL_LISTED = """
(want, start) => new Promise((resolve) => {
  const listed = () => document.querySelector('#doc-list')?.dataset.hash === want;
  if (listed()) return resolve(performance.now() - start);
  new MutationObserver((changes, observer) => {
    if (listed()) { observer.disconnect(); resolve(performance.now() - start); }
  }).observe(document.getElementById('main'), { childList: true, subtree: true });
})
"""


def awaited(page: Page, expression: str) -> float:
    reply = page.call(
        "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
    )
    return float(reply["result"]["value"])


def in_page(page: Page, action: str, want: str) -> float:
    """Milliseconds from running ``action`` (JS) to the list for address ``want``."""
    return awaited(
        page,
        f"(() => {{ const start = performance.now(); const done = ({UNTIL_LISTED})"
        f"({json.dumps(want)}, start); {action}; return done; }})()",
    )


def report(name: str, values: list[float], extra: str = "") -> None:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"{name:<28} median {statistics.median(values):7.0f} ms  min {min(values):7.0f}  "
        f"max {max(values):7.0f}  (n={len(values)}; load average {load}){extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    add_seed_on_server(parser)
    add_warm_up_option(parser)
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit("needs a chromium binary (make browser-deps)")

    with tempfile.TemporaryDirectory() as root:
        data_dir = Path(root) / "data"

        def seed() -> dict[str, Any]:
            started = time.perf_counter()
            boot = prepare(data_dir, args.documents)
            took = time.perf_counter() - started
            print(f"loaded {args.documents:,} demo documents in {took:.0f} s")
            return boot

        with (
            prepared_and_serving(data_dir, seed, args.seed_on_server, throwaway=True) as live,
            chromium(Path(root) / "profile") as page,
        ):
            page.devtools.call("Browser.setDownloadBehavior", behavior="deny")
            page.go(f"{live.base}/app/")
            page.wait("!!document.querySelector('#key-form')")
            session = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
            page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(session))})")
            first: list[float] = []
            sort: list[float] = []
            status: list[float] = []
            csv: list[float] = []
            rows = 0
            # The first rounds (``--warm-ups``) warm caches and are not counted.
            for run in range(args.warm_ups + args.runs):
                page.go("about:blank")
                page.go(f"{live.base}/app/#/documents")
                page.wait(
                    "document.querySelector('#doc-list')?.dataset.hash === '#/documents'", 300
                )
                render = page.js("window.__fincapFirstRender")
                by_amount = in_page(
                    page,
                    "document.querySelector('button.sort[data-sort=amount]').click()",
                    "#/documents?sort=amount&order=desc",
                )
                processed = in_page(
                    page,
                    "location.hash = '#/documents?status=processed'",
                    "#/documents?status=processed",
                )
                page.js("location.hash = '#/documents'")
                page.wait(
                    "document.querySelector('#doc-list')?.dataset.hash === '#/documents'", 300
                )
                made = awaited(
                    page,
                    "new Promise((resolve) => { const start = performance.now();"
                    "const status = document.querySelector('#csv-status');"
                    "new MutationObserver((c, o) => { if (status.innerText.startsWith('Saved')) {"
                    "o.disconnect(); resolve(performance.now() - start); } })"
                    ".observe(status, { childList: true, subtree: true, characterData: true });"
                    "document.querySelector('#csv-download').click(); })",
                )
                rows = int(
                    page.js(
                        "parseInt(document.querySelector('#csv-status')"
                        ".innerText.replace(/\\D/g, ''))"
                    )
                )
                if run < args.warm_ups:
                    continue
                first.append(render)
                sort.append(by_amount)
                status.append(processed)
                csv.append(made)
            count = page.js("document.querySelector('#result-count').dataset.count")
            print(f"{args.documents:,} documents; {count} in the default range (last 12 months)")
            report("first render #/documents", first)
            report("sort by amount", sort)
            report("filter status=processed", status)
            report("CSV of all matching", csv, f"; {rows:,} rows")


if __name__ == "__main__":
    main()
