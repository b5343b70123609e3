"""Rules about bank transactions at import: what a transaction-matched rule adds to
statements.import (the request: it only queues one job), and what that job costs.

The set is ``bench/reconcile.py``'s generator, imported as ``bench/import_match.py`` imports it
(one CSV statement through REST on the embedded store, SecantusDB over the wire, a fresh
database per import). Each run imports it twice, in a varied order: with a rule that matches
every transaction ("Categorize all transactions as Reconciled": the worst case, every matched
document changed) and without any rule. Printed: the import's time both ways, then the
``run-match-rules`` jobs' time (one job per 500 matches), per matched transaction, and the
rule's stats. Medians of ``--runs`` runs.

    .venv/bin/python bench/match_rules.py [--transactions 2000] [--documents 4000] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from app.host.config import Settings
from app.host.services import build_services
from app.host.workers import WorkerPool
from bench.harness import discard, load_average, serving_app
from bench.import_match import statement, stored
from bench.reconcile import Generated, generate
from engines.rules.parser import read_rule
from persistence.client import connect
from persistence.documents.stamp import stamped_record
from persistence.embedded import EmbeddedServer
from persistence.ids import utcnow
from persistence.store import Store
from resolvers import build_job_kinds, build_registry
from resolvers.services.auth import accounts
from resolvers.services.rules.rule_runner import MATCH_RULES_SLICE

SENTENCE = "Categorize all transactions as Reconciled"


async def import_once(
    uri: str, made: Generated, data: bytes, with_rule: bool
) -> tuple[float, float, int, dict[str, int]]:
    """Seconds for the import, seconds for the rules' job, transactions matched, rule stats."""
    mongo, db = connect(uri, f"bench_{uuid.uuid4().hex[:8]}")
    store = Store(db)
    await store.ensure_indexes()
    created = await accounts.bootstrap(store, "bench@example.com", "Bench")
    org = created["orgId"]
    now = utcnow()
    records = [
        stamped_record(store.documents.writes.prepare(org, stored(d), now), now)
        for d in made.documents
    ]
    for at in range(0, len(records), 5_000):
        await db["documents"].insert_many(records[at : at + 5_000])
    rule_id = None
    if with_rule:
        draft = read_rule(SENTENCE)
        assert draft.rule is not None and draft.rule["trigger"]["type"] == "transaction-matched"
        saved = await store.rules.create(
            org,
            name=draft.rule["name"],
            text=SENTENCE,
            definition=draft.rule,
            created_by=created["userId"],
            webhook_secret=None,
            next_run_at=None,
        )
        rule_id = saved["_id"]
    headers = {"Authorization": f"Bearer {created['apiKey']}", "X-Service-Org-Id": org}
    body = {"fileName": "statement.csv", "base64Data": base64.b64encode(data).decode()}
    settings = Settings()
    app = serving_app(settings, store)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://bench.test", timeout=600
    ) as client:
        began = time.perf_counter()
        response = await client.post(
            "/v1/capabilities/statements.import", json=body, headers=headers
        )
        took = time.perf_counter() - began
    assert response.status_code == 200, response.text[:300]
    matched = int(response.json()["data"]["result"]["autoMatched"])
    pool = WorkerPool(build_services(settings, store, registry=build_registry()), build_job_kinds())
    began = time.perf_counter()
    jobs = await pool.run_until_idle()
    job_took = time.perf_counter() - began
    stats: dict[str, int] = {}
    # A job that failed (and was run again: its done work is not redone) is reported.
    for job in await db["jobs"].find({"attempts": {"$gt": 1}}).to_list(None):
        print(f"  job retried ({job['attempts']} attempts): {job.get('lastError')}")
    assert await db["jobs"].count_documents({"status": {"$ne": "done"}}) == 0
    if rule_id is not None:
        assert jobs >= -(-matched // MATCH_RULES_SLICE), jobs  # one job per 500 matches
        rule = await store.rules.get(org, rule_id) or {}
        stats = {k: int(v) for k, v in (rule.get("stats") or {}).items() if isinstance(v, int)}
    else:
        assert jobs == 0, jobs
    await mongo.drop_database(db.name)
    mongo.close()
    return took, job_took, matched, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--transactions", type=int, default=2_000)
    parser.add_argument("--documents", type=int, default=4_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    made = generate(args.seed, args.transactions, args.documents)
    data = statement(made.transactions)
    print(
        f"seed {args.seed}: {len(made.transactions):,} lines against {len(made.documents):,} "
        f"documents, {args.runs} runs [{load_average()}]"
    )
    imports: dict[bool, list[float]] = {True: [], False: []}
    jobs: list[float] = []
    per_match: list[float] = []
    server = EmbeddedServer(storage=":memory:").start()
    try:
        for run in range(args.runs):
            order = [True, False]
            random.Random(run).shuffle(order)
            for with_rule in order:
                took, job_took, matched, stats = asyncio.run(
                    import_once(server.uri, made, data, with_rule)
                )
                imports[with_rule].append(took)
                line = (
                    f"run {run + 1}, {'rule   ' if with_rule else 'no rule'}: import {took:.2f} s"
                )
                if with_rule:
                    jobs.append(job_took)
                    per_match.append(job_took / max(matched, 1))
                    line += (
                        f", job {job_took:.2f} s for {matched} matches "
                        f"({job_took / max(matched, 1) * 1000:.1f} ms each); stats runs "
                        f"{stats.get('runs')}, documentsMatched {stats.get('documentsMatched')}, "
                        f"actionsApplied {stats.get('actionsApplied')}"
                    )
                print(f"{line} [{load_average()}]", flush=True)
    finally:
        discard(server)
    with_rule, without = statistics.median(imports[True]), statistics.median(imports[False])
    print(
        f"import (median): with the rule {with_rule:.2f} s, without {without:.2f} s, ratio "
        f"{with_rule / without:.2f}; the rules' job {statistics.median(jobs):.2f} s, "
        f"{statistics.median(per_match) * 1000:.1f} ms per matched transaction"
    )
    print(f"[{load_average()}]")


if __name__ == "__main__":
    main()
