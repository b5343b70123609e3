"""The dashboard in headless Chromium: time to first render of the overview and of the Documents
page, and the GraphQL requests behind each.

A data directory gets a user, a workspace and N demo documents (``fincap demo load``; with
``--data-dir`` it is kept and reused by later runs), ``fincap serve`` runs on it (embedded
store) and Chromium opens the dashboard signed in with the API key. Each run is a fresh page
load (a new document, the store's caches warm after one uncounted warm-up). A script the bench
adds to every page records ``performance.now()`` (milliseconds since navigation start) at the
first animation frame after the page's first content is laid out: the overview's first month
bar, the Documents page's first row (a table row or a card). Printed per page: median / min / max
of that time and of the GraphQL requests (Resource Timing), the requests per load, and the load
average beside every figure. Then the event latency at this size (``bench/events.py``'s clients).

    .venv/bin/python bench/web.py --documents 20000 --runs 5 --data-dir .bench/web-20k
    .venv/bin/python bench/web.py --documents 1000 --runs 5        # quick, throwaway data

``--analysis thread`` runs the server's analysis in a thread instead of its process pool (whose
processes cost ~2 CPU-s each to start): the smoke test's tiny run. The event latencies start at
the processed write, after the analysis.

``--seed-on-server`` starts the server first and loads the demo documents on its store (one
store start and stop fewer: the smoke test's tiny run; the "loaded" time is then the commands'
alone, without a store's start and stop). Without ``--data-dir`` the server is killed at the
end, not stopped cleanly: its data directory is thrown away.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.events import SseClient, browser_event_latencies, summary
from bench.events import uploads as upload_one_at_a_time
from bench.harness import add_analysis_option, add_warm_up_option
from tests.browser import CHROMIUM
from tests.web.dashboard_live import (
    LiveDashboard,
    Page,
    add_seed_on_server,
    chromium,
    prepare,
    prepared_and_serving,
)

GOAL_MS = 500
# What counts as "first content" on each page (first match wins; any that matches counts).
PAGES = {
    # A month with no documents draws a bar of no height: the first bar with a value.
    "overview": ("#/", '#chart-months .bar:not([data-value="0"])'),
    "documents": ("#/documents", "main table tbody tr, #doc-list > li"),
}
# Added to every document before its scripts run: records when each page's first content is
# in the DOM with a size, at the next animation frame (the frame that paints it).
FIRST_VISIBLE = """
(() => {
  const selectors = %s;
  const seen = (window.__benchFirstVisible = {});
  const check = () => {
    for (const [name, selector] of Object.entries(selectors)) {
      if (name in seen) continue;
      const element = document.querySelector(selector);
      if (!element) continue;
      const box = element.getBoundingClientRect();
      if (box.width > 0 && box.height > 0) {
        seen[name] = null;
        requestAnimationFrame(() => { seen[name] = performance.now(); });
      }
    }
  };
  new MutationObserver(check).observe(document, { childList: true, subtree: true });
})();
"""


def load() -> str:
    return "load " + " ".join(f"{value:.2f}" for value in os.getloadavg())


def seeded(data_dir: Path, documents: int) -> dict[str, Any]:
    """The bootstrap answer for ``data_dir``, seeding it first unless an earlier run did."""
    saved = data_dir / "bench-boot.json"
    if saved.exists():
        boot: dict[str, Any] = json.loads(saved.read_text())
        if boot.get("documents") == documents:
            print(f"reusing {documents:,} demo documents in {data_dir}")
            return boot
        sys.exit(f"{data_dir} holds {boot.get('documents')} documents; use another --data-dir")
    started = time.perf_counter()
    boot = {**prepare(data_dir, documents), "documents": documents}
    saved.write_text(json.dumps(boot))
    print(
        f"loaded {documents:,} demo documents in {time.perf_counter() - started:.0f} s ({load()})"
    )
    return boot


def measure(
    page: Page, base: str, name: str, runs: int, warm_ups: int = 1
) -> dict[str, list[float]]:
    """``runs`` fresh loads of one page (after ``warm_ups`` uncounted ones): first content and
    GraphQL times."""
    hash_, _ = PAGES[name]
    figures: dict[str, list[float]] = {"first": [], "graphql": [], "requests": []}
    for run in range(warm_ups + runs):
        # A new query string makes a real navigation (a new hash alone would not reload).
        page.go(f"{base}/app/?bench={name}-{run}{hash_}")
        first = page.wait(
            f"(window.__benchFirstVisible || {{}})[{json.dumps(name)}] || 0", timeout=120
        )
        if run < warm_ups:
            continue
        figures["first"].append(float(first))
        figures["requests"].append(float(page.js("window.__fincapRequests || 0")))
        figures["graphql"].extend(
            page.js(
                "performance.getEntriesByType('resource')"
                ".filter(e => e.name.endsWith('/v1/graphql')).map(e => e.duration)"
            )
        )
    return figures


def line(name: str, values: list[float]) -> str:
    return (
        f"{name:<34} median {statistics.median(values):7.0f} ms   "
        f"min {min(values):7.0f}   max {max(values):7.0f}   ({load()})"
    )


def event_latency(live: LiveDashboard, page: Page, uploads: int) -> None:
    """The live events at this size: ``uploads`` PDFs uploaded one at a time while the overview
    is open; each one's latency from its processed write (the event's ``at``) to an SSE client
    and to the dashboard (``bench/events.py`` measures the same on a small workspace, and the
    write of another process through the poller)."""
    page.go(f"{live.base}/app/#/")  # the overview listens: the stream opens
    page.wait("window.__fincapLive?.status === 'open'", timeout=60)
    sse = SseClient(live)
    ids = upload_one_at_a_time(live, sse, uploads)
    at = {i: sse.processed[i][0] for i in ids}
    print(
        summary(
            "event: processed write → SSE client",
            [(sse.processed[i][1] - at[i]) * 1000 for i in ids],
        )
    )
    print(summary("event: processed write → dashboard", browser_event_latencies(page, at)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--uploads", type=int, default=20, help="uploads timed for event latency")
    parser.add_argument("--data-dir", type=Path, help="keep the seeded data here and reuse it")
    add_seed_on_server(parser)
    add_analysis_option(parser)
    add_warm_up_option(parser)
    args = parser.parse_args()
    if CHROMIUM is None:
        sys.exit("needs a chromium binary (make browser-deps)")
    os.environ["FINCAP_EXTRACTION_EXECUTOR"] = args.analysis  # the server's (and the seed's)

    with tempfile.TemporaryDirectory() as root:
        data_dir = args.data_dir or Path(root) / "data"
        seed = partial(seeded, data_dir, args.documents)
        # A --data-dir is kept for later runs: its server stops cleanly.
        throwaway = args.data_dir is None
        with (
            prepared_and_serving(data_dir, seed, args.seed_on_server, throwaway) as live,
            chromium(Path(root) / "profile") as page,
        ):
            selectors = {name: selector for name, (_, selector) in PAGES.items()}
            page.call(
                "Page.addScriptToEvaluateOnNewDocument",
                source=FIRST_VISIBLE % json.dumps(selectors),
            )
            page.go(f"{live.base}/app/")
            page.wait("!!document.querySelector('#key-form')")
            session = {"kind": "key", "secret": live.api_key, "orgId": live.org_id}
            page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(session))})")
            results = {
                name: measure(page, live.base, name, args.runs, args.warm_ups) for name in PAGES
            }
            counted = live.call("documents.count", {"archived": "include"}).json()
            count = counted["data"]["result"]["count"]
            print(f"workspace documents: {count:,}; runs per page: {args.runs}")
            for name, figures in results.items():
                median = statistics.median(figures["first"])
                verdict = "meets" if median <= GOAL_MS else "MISSES"
                print(line(f"{name}: first content", figures["first"]))
                print(f"{'':<34} {verdict} the {GOAL_MS} ms goal")
                print(line(f"{name}: each GraphQL request", figures["graphql"]))
                print(f"{name}: GraphQL requests per load: {sorted(set(figures['requests']))}")
            event_latency(live, page, args.uploads)


if __name__ == "__main__":
    main()
