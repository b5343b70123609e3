"""Every script of ``bench/`` still runs and prints its figures: each one at a tiny size, as
people run it (``python bench/NAME.py``'s arguments, a process of its own, forked with the
service already imported: ``tests/preloaded.py``), asserting the lines that carry
its figures and the load average beside them. The figures themselves are not judged (a test
asserts behaviour, not speed): a bench that no longer starts, or stops printing what its page in
the docs quotes, fails here instead of on the day someone needs its numbers.

A new script in ``bench/`` must be added to ``BENCHES`` (``test_every_bench_script_is_here``).
The scripts are split into classes so that ``--dist loadscope`` spreads them over the workers.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.preloaded import ScriptTimedOut, run_script
from tests.requires import requires

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# A figure of the machine's load, as the scripts print it: "load 9.06 6.67 4.81", "load average
# 16.25, …", "load=10.94 …", "[load 12.01 …]", "load average before: 10.90".
LOAD = r"load(?: average)?(?: before:)?[ =:]*\d+\.\d"
# A bench at a tiny size starts servers, a browser or the model on a loaded machine: minutes at
# worst (the per-test limit is raised to match).
LIMIT_S = 540
NUMBER = r"\d+(?:\.\d+)?"


@dataclass(frozen=True)
class Bench:
    """One script: its tiny-size arguments and the figure lines it must print (regexes; the
    load average's is added to them)."""

    args: tuple[str, ...]
    figures: tuple[str, ...]


# Scripts that run in this process's tools only (the in-memory or embedded store, ASGI).
IN_PROCESS = {
    "mcp_tools": Bench((), (rf"^\s+tools\s+{NUMBER}$", rf"^\s+whole response\s+{NUMBER}")),
    "graphql_vs_rest": Bench(
        ("--calls", "2", "--runs", "1"), (rf"ratio GraphQL / REST\s+:\s+{NUMBER}x",)
    ),
    "transaction_graph": Bench(
        ("--transactions", "200", "--documents", "50", "--runs", "1", "--calls", "1"),
        (
            rf"connection: GraphQL connection .* {NUMBER} ms, REST search\+count {NUMBER} ms, "
            rf"ratio {NUMBER}x",
            rf"totals: transactionTotals by MONTH {NUMBER} ms, REST transactions.count {NUMBER} ms",
            rf"links: page of 50 with documents {NUMBER} ms, the same page without {NUMBER} ms",
        ),
    ),
    "graphql_selection": Bench(("--calls", "2", "--runs", "1"), (rf"{NUMBER} ms median per call",)),
    "mcp_vs_rest": Bench(("--calls", "2", "--runs", "1"), (rf"ratio MCP / REST\s+:\s+{NUMBER}x",)),
    "rest_overhead": Bench(
        ("--calls", "2", "--runs", "1"),
        (rf"ratio full / bare\s+:\s+{NUMBER}×", rf"authorize, fresh \(a write\) :\s+{NUMBER} µs"),
    ),
    "rules": Bench(
        ("--runs", "1", "--docs", "3"),
        (
            rf"read_rule over \d+ sentences: median {NUMBER} ms",
            rf"rules step with 20 enabled rules:\s+{NUMBER} ms/document",
        ),
    ),
    "reconcile": Bench(
        ("--transactions", "300", "--documents", "500", "--runs", "1"),
        (
            rf"^auto-match precision {NUMBER}% \(\d+/\d+\), recall {NUMBER}%",
            rf"^top-3 candidate recall {NUMBER}%",
            rf"^match 300 transactions × 500 documents: median {NUMBER} s",
        ),
    ),
    "import_match": Bench(
        ("--transactions", "30", "--documents", "60", "--runs", "1"),
        (
            r"^auto-matched \d+ of \d+$",
            rf"^import with auto-match {NUMBER} ms, without {NUMBER} ms, matching -?{NUMBER} ms",
        ),
    ),
    "match_rules": Bench(
        ("--transactions", "30", "--documents", "60", "--runs", "1"),
        (
            rf"^import \(median\): with the rule {NUMBER} s, without {NUMBER} s, ratio {NUMBER}; "
            rf"the rules' job {NUMBER} s, {NUMBER} ms per matched transaction$",
        ),
    ),
    "exports": Bench(("--documents", "3", "--runs", "1"), (rf"^\s+deliver\s+{NUMBER}$",)),
    "statements": Bench(
        ("--lines", "20", "--runs", "1"),
        tuple(
            rf"^{name}\s+{NUMBER} MB: read\s+{NUMBER} ms, import\s+{NUMBER} ms, "
            rf"again\s+{NUMBER} ms"
            for name in ("csv", "mt940", "camt053", "ofx")
        ),
    ),
    "inbound": Bench(
        ("--messages", "2", "--runs", "1"),
        (
            rf"SMTP accepted .*:\s+{NUMBER} messages/min",
            rf"processed into documents .*:\s+{NUMBER} documents/min",
        ),
    ),
    "search_restart": Bench(
        ("--sizes", "60", "--runs", "1"),
        (
            rf"snapshot npz\s+{NUMBER} MB",
            rf"first ranked search after\s+median\s+{NUMBER} ms",
            rf"later ranked search, where currency=EUR: median {NUMBER} ms",
            rf"index memory beyond vectors, built: {NUMBER} B/doc",
            rf"index memory beyond vectors, loaded: {NUMBER} B/doc",
        ),
    ),
    "documents": Bench(
        ("--sizes", "50", "--runs", "1"),
        (
            rf"documents.count groupBy month :\s+{NUMBER} ms median",
            rf"documents.search filter\+sort  :\s+{NUMBER} ms median",
        ),
    ),
    "ingestion": Bench(
        ("--stored", "30", "--documents", "3"),
        (rf"ratio full / empty \(median total\): {NUMBER}",),
    ),
    "extraction": Bench(
        # The synthetic invoices only: the dev set is not in every clone.
        ("--folder", "synthetic", "--synthetic", "8", "--folds", "2"),
        (rf"synthetic n=\s*8\s+amount \d+/8 \({NUMBER}%\)",),
    ),
    "extraction_pipeline": Bench(
        ("--limit", "0", "--synthetic", "2", "--in-thread"),
        (rf"synthetic\s+n=\s*2\s+upload→processed p50={NUMBER}s",),
    ),
}
# The graph bench's figures, in process and then through a `fincap serve` process on the same
# loaded store (one run of the script for both faces: one import of the app and one load).
GRAPH_FIGURES = (
    rf"connection .*: GraphQL {NUMBER} ms, REST search\+count {NUMBER} ms, ratio {NUMBER}x",
    rf"aggregate MONTH x CATEGORY, one year .*, rollups: {NUMBER} ms median",
    rf"aggregate MONTH x CATEGORY, one year, forced aggregation .*: {NUMBER} ms median",
    rf"node\(id:\) {NUMBER} ms vs documents.get {NUMBER} ms",
)
# Scripts that load workspaces into stores of their own and restart or replace them (in this
# process): a class of their own, so that `--dist loadscope` does not put them on the worker
# that runs the served ones, the longest class.
OWN_STORES = {
    "dashboard": Bench(
        ("--sizes", "30", "--runs", "1", "--cold", "1", "--small", "10"),
        (rf"GraphQL dashboard\s+{NUMBER} /\s+{NUMBER}", r"cold \(store restarted"),
    ),
    "fleet": Bench(
        (
            *("--big", "40", "--mid", "2", "--mid-size", "10", "--small", "3"),
            *("--small-size", "3", "--sample", "2", "--runs", "1"),
        ),
        (
            rf"^order big-first: 40 \+ 2 x 10 \+ 3 x 3 documents loaded in {NUMBER} s",
            rf"^    GraphQL dashboard\s+{NUMBER} /\s+{NUMBER}",
            rf"^  count by month\s+3: +{NUMBER}x",
            r"^uptime: .*load average",
        ),
    ),
}
# Scripts that start `fincap serve` or workers, each a process of its own.
SERVED = {
    "graphql_graph": Bench(
        ("--documents", "200", "--runs", "1", "--calls", "1", "--slow-calls", "1", "--also-served"),
        tuple(
            rf"service: in process[\s\S]*{figure}[\s\S]*service: fincap serve[\s\S]*{figure}"
            for figure in GRAPH_FIGURES
        ),
    ),
    "workers": Bench(
        ("--workers", "1", "--documents", "2", "--backlog", "2", "--runs", "1", "--replicas", "1"),
        (
            rf"1 worker process: +{NUMBER} documents/min",
            rf"1 worker process: B waited +{NUMBER} s behind A's 2",
        ),
    ),
    "outage": Bench(
        ("--rounds", "1"),
        (
            rf"first 503: median {NUMBER} s, largest {NUMBER} s over 1 rounds",
            rf"back: median {NUMBER} s",
        ),
    ),
    # Two quick attacks of the forty (each is a test of its own in tests/hardening): the bench's
    # set-up, its victim's measures and its table.
    "attacks": Bench(
        (
            *("--runs", "1", "--documents", "5", "--rest-seconds", "1", "--seed-on-server"),
            # Neither attack uses the attacker's prepared documents, nor analyses anything.
            *("--skip-prepare",),
            *("--only", "regex (a+)+$", "control: 200"),
        ),
        (
            r"serve tree at rest: \d+ MB",
            rf"^control: 200 × GET /healthz, 10 at once\s+{NUMBER}\s+\d+",
        ),
    ),
}
# Scripts that need the embedding model.
WITH_MODEL = {
    "help_center": Bench(
        ("--runs", "1"),
        (
            rf"query end to end \(REST through the ASGI app\): median {NUMBER} ms",
            rf"shipped \(normalised sum\)\s+all\s+\d+\s+{NUMBER}",
        ),
    ),
    "search": Bench(
        ("--sizes", "50", "--e2e-sizes", "50", "--runs", "1", "--queries-per-kind", "1"),
        (
            rf"hybrid sum\s+{NUMBER} / {NUMBER}",
            rf"50 documents: hybrid top-5\s+{NUMBER}",
            rf"50 documents \(loaded in \d+ s\): warm\s+{NUMBER}",
        ),
    ),
}
# Scripts that drive the dashboard in headless Chromium. `--seed-on-server` (and attacks'): the
# workspace is made on the running server's store, one store start and clean stop fewer a run.
IN_CHROMIUM = {
    "documents_page": Bench(
        ("--documents", "30", "--runs", "1", "--warm-ups", "0", "--seed-on-server"),
        (rf"first render #/documents\s+median\s+{NUMBER} ms", r"CSV of all matching\s+median"),
    ),
    "events": Bench(
        (
            *("--uploads", "2", "--writes", "2", "--idle", "5", "--calls", "2", "--rounds", "1"),
            *("--documents", "20", "--seed-on-server", "--analysis", "thread"),
        ),
        (
            rf"upload → SSE client: median {NUMBER} ms",
            rf"upload → dashboard \(Chromium\): median {NUMBER} ms",
            rf"another process's write → SSE client \(poller\): median {NUMBER} ms",
            rf"with 0 idle subscribers: median {NUMBER} ms",
        ),
    ),
    "web": Bench(
        (
            *("--documents", "30", "--runs", "1", "--uploads", "1", "--seed-on-server"),
            *("--analysis", "thread", "--warm-ups", "0"),
        ),
        (
            rf"overview: first content\s+median\s+{NUMBER} ms",
            rf"documents: first content\s+median\s+{NUMBER} ms",
            rf"event: processed write → dashboard: median {NUMBER} ms",
        ),
    ),
}
BENCHES = {**IN_PROCESS, **OWN_STORES, **SERVED, **WITH_MODEL, **IN_CHROMIUM}


def run_bench(name: str, bench: Bench) -> None:
    """Run ``bench/NAME.py`` with its tiny arguments; it must exit 0 and print its figures.

    The script runs in a process of its own forked with the service already imported
    (``tests/preloaded.py``): 2-4 s less a script than a new interpreter, the same run otherwise.
    A session of its own: past the limit, the bench and what it started (a ``fincap serve``, a
    store, a browser) are killed together, not the bench alone with its servers left behind."""
    try:
        ran = run_script(
            BENCH / f"{name}.py",
            list(bench.args),
            ROOT,
            {**os.environ, "PYTHONUNBUFFERED": "1"},
            LIMIT_S,
        )
    except ScriptTimedOut as late:
        pytest.fail(
            f"bench/{name}.py ran past {LIMIT_S} s\n{late.stdout[-4000:]}\n{late.stderr[-4000:]}"
        )
    stdout, stderr = ran.stdout, ran.stderr
    shown = f"stdout:\n{stdout[-4000:]}\nstderr:\n{stderr[-4000:]}"
    assert ran.returncode == 0, shown
    expected = (*bench.figures, LOAD)
    missing = [f for f in expected if not re.search(f, stdout, re.MULTILINE)]
    assert not missing, f"no line matches {missing}\n{shown}"


def test_every_bench_script_is_here() -> None:
    scripts = {
        path.stem
        for path in BENCH.glob("*.py")
        if 'if __name__ == "__main__":' in path.read_text(encoding="utf-8")
    }
    assert scripts == set(BENCHES)


@pytest.mark.timeout(LIMIT_S + 60)
class TestInProcess:
    @pytest.mark.parametrize("name", sorted(IN_PROCESS))
    def test_runs_and_prints_its_figures(self, name: str) -> None:
        run_bench(name, IN_PROCESS[name])


@pytest.mark.wire
@pytest.mark.timeout(LIMIT_S + 60)
class TestOwnStores:
    @pytest.mark.parametrize("name", sorted(OWN_STORES))
    def test_runs_and_prints_its_figures(self, name: str) -> None:
        run_bench(name, OWN_STORES[name])


@pytest.mark.wire
@pytest.mark.timeout(LIMIT_S + 60)
class TestServed:
    @pytest.mark.parametrize("name", sorted(SERVED))
    def test_runs_and_prints_its_figures(self, name: str) -> None:
        run_bench(name, SERVED[name])


@requires("model")
@pytest.mark.timeout(LIMIT_S + 60)
class TestWithModel:
    @pytest.mark.parametrize("name", sorted(WITH_MODEL))
    def test_runs_and_prints_its_figures(self, name: str) -> None:
        run_bench(name, WITH_MODEL[name])


@requires("chromium")
@pytest.mark.wire
@pytest.mark.timeout(LIMIT_S + 60)
class TestInChromium:
    @pytest.mark.parametrize("name", sorted(IN_CHROMIUM))
    def test_runs_and_prints_its_figures(self, name: str) -> None:
        run_bench(name, IN_CHROMIUM[name])
