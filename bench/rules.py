"""What automation rules cost: reading a sentence, and the rules step per processed document.

1. ``read_rule`` (tokens → lark Earley parse → rule) over the 41 sentences of the table test,
   median and max per sentence, several runs.
2. ``run_document_rules`` on one document against an embedded SecantusDB with N enabled
   document-processed rules (N = 0, 5, 20): the matching read (one ``$facet`` per rule) and
   the stats writes, when no rule matches and when one does (a set-category with its history
   entry and rollup rows). Median milliseconds per document of several runs.

    .venv/bin/python bench/rules.py [--runs 5] [--docs 40]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from datetime import date
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.host.config import Settings
from app.host.services import build_services
from bench.harness import discard, load_average
from engines.rules import parser as rules_parser
from engines.rules.parser import read_rule
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.resources.rules import validated
from resolvers.services.auth import accounts
from resolvers.services.rules.rule_runner import RuleEvent, run_document_rules
from tests.rules.test_language import CASES


def parse_times(runs: int) -> tuple[float, float]:
    read_rule("warm up the parser")
    medians, worst = [], 0.0
    for _ in range(runs):
        samples = []
        for case in CASES:
            rules_parser._read_rule.cache_clear()  # a first reading, not a cached one
            started = time.perf_counter()
            read_rule(case.sentence)
            samples.append((time.perf_counter() - started) * 1000)
        medians.append(statistics.median(samples))
        worst = max(worst, max(samples))
    return statistics.median(medians), worst


async def rules_step(store: Store, rules: int, docs: int, runs: int) -> tuple[float, float]:
    created = await accounts.bootstrap(store, f"bench{rules}@example.com", f"Bench {rules}")
    workspace, user = created["orgId"], created["userId"]
    sentences = [f"Categorize receipts from Merchant{i} as Travel" for i in range(rules)]
    for sentence in sentences:
        draft = read_rule(sentence)
        assert draft.rule is not None
        rule = validated(draft.rule).model_dump(mode="json", exclude_none=True)
        await store.rules.create(
            workspace,
            name=rule["name"],
            text=sentence,
            definition=rule,
            created_by=user,
            webhook_secret=None,
            next_run_at=None,
        )
    services = build_services(Settings(), store)
    results = []
    for matching in (False, True):
        per_run = []
        for run in range(runs):
            ids = [f"doc_{rules}_{matching}_{run}_{i}" for i in range(docs)]
            merchant = "Merchant0" if matching and rules else "Elsewhere"
            await store.documents.writes.insert_many(
                workspace,
                [
                    {
                        "_id": doc_id,
                        "merchant": merchant,
                        "amount": Decimal("12.00"),
                        "currency": "EUR",
                        "docDate": date(2024, 1, 1),
                        "category": "Other",
                        "docType": "receipt",
                        "processingStatus": "processed",
                    }
                    for doc_id in ids
                ],
            )
            started = time.perf_counter()
            for doc_id in ids:
                await run_document_rules(
                    services, workspace, doc_id, RuleEvent("document-processed", "processed")
                )
            per_run.append((time.perf_counter() - started) * 1000 / docs)
        results.append(statistics.median(per_run))
    return results[0], results[1]


async def main(runs: int, docs: int) -> None:
    median, worst = parse_times(runs)
    print(f"read_rule over {len(CASES)} sentences: median {median:.1f} ms, max {worst:.1f} ms")
    server = EmbeddedServer(storage=":memory:").start()
    try:
        client, db = connect(server.uri, "bench_rules")
        store = Store(db)
        await store.ensure_indexes()
        for rules in (0, 5, 20):
            none, one = await rules_step(store, rules, docs, runs)
            print(
                f"rules step with {rules:2d} enabled rules: {none:6.2f} ms/document when "
                f"none matches, {one:6.2f} ms when one does"
            )
        print(f"({load_average()})")
        client.close()
    finally:
        discard(server)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--docs", type=int, default=40)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.docs))
