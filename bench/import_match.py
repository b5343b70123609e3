"""statements.import with automatic matching: how long a statement takes to import when the
matcher runs over its new transactions against the workspace's documents.

The set is ``bench/reconcile.py``'s generator (the same noise: card lags, foreign currency,
tips, legal names, splits, missing receipts, near-duplicates): ``--transactions`` bookings as
one CSV statement (German layout), ``--documents`` receipts and invoices stored in the
workspace first. Each run imports it through REST on the embedded store (SecantusDB over the
wire, a fresh database per import) twice over: with automatic matching on (the default) and
switched off (matches.configure), in a varied order, so the difference is the matching's cost.
Medians of ``--runs`` runs.

    .venv/bin/python bench/import_match.py [--transactions 2000] [--documents 20000] [--runs 3]
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
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from app.host.config import Settings
from bench.harness import discard, load_average, serving_app
from bench.reconcile import Generated, generate
from engines.reconciliation import BankTransaction, CandidateDocument
from persistence.client import connect
from persistence.documents.stamp import stamped_record
from persistence.embedded import EmbeddedServer
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.services.auth import accounts


def _cell(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def statement(transactions: list[BankTransaction]) -> bytes:
    """The bookings as a CSV statement in the German layout the reader detects."""
    out = [
        '"Buchungstag";"Betrag";"Waehrung";"Beguenstigter/Zahlungspflichtiger";"Verwendungszweck"'
    ]
    for txn in sorted(transactions, key=lambda t: (t.booking_date, t.id)):
        amount = f"{txn.amount:.2f}".replace(".", ",")
        out.append(
            ";".join(
                (
                    _cell(f"{txn.booking_date:%d.%m.%Y}"),
                    _cell(amount),
                    _cell(txn.currency),
                    _cell(txn.counterparty),
                    _cell(txn.reference or txn.id),
                )
            )
        )
    return "\n".join(out).encode("utf-8")


def stored(doc: CandidateDocument) -> dict[str, Any]:
    """A generated document as the store keeps a processed receipt."""
    return {
        "_id": doc.id,
        "merchant": doc.merchant or None,
        "merchantLegalName": doc.seller or None,
        "amount": doc.total,
        "currency": doc.currency,
        "docDate": doc.date,
        "invoiceId": doc.invoice_number or None,
        "paymentMethodEnding": doc.card_last4,
        "tipAmount": doc.tip,
        "docType": "receipt",
        "processingStatus": "processed",
        "source": "upload",
    }


async def import_once(uri: str, made: Generated, data: bytes, auto: bool) -> tuple[float, int]:
    """Seconds for the import (documents already stored), and how many it matched."""
    mongo, db = connect(uri, f"bench_{uuid.uuid4().hex[:8]}")
    store = Store(db)
    await store.ensure_indexes()
    created = await accounts.bootstrap(store, "bench@example.com", "Bench")
    org = created["orgId"]
    await store.workspaces.set_matching(org, {"autoMatch": auto})
    # Stored as the store would (prepare, stamped) but straight into the collection: the
    # documents' own arrival (rollups, events, 4 ms apiece on the embedded store) is not timed
    # here, and would take minutes per run.
    now = utcnow()
    records = [
        stamped_record(store.documents.writes.prepare(org, stored(d), now), now)
        for d in made.documents
    ]
    for at in range(0, len(records), 5_000):
        await db["documents"].insert_many(records[at : at + 5_000])
    headers = {"Authorization": f"Bearer {created['apiKey']}", "X-Service-Org-Id": org}
    body = {"fileName": "statement.csv", "base64Data": base64.b64encode(data).decode()}
    app = serving_app(Settings(), store)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://bench.test", timeout=600
    ) as client:
        began = time.perf_counter()
        response = await client.post(
            "/v1/capabilities/statements.import", json=body, headers=headers
        )
        took = time.perf_counter() - began
    assert response.status_code == 200, response.text[:300]
    answer = response.json()["data"]["result"]
    assert answer["added"] == len(made.transactions), answer
    await mongo.drop_database(db.name)
    mongo.close()
    return took, int(answer["autoMatched"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--transactions", type=int, default=2_000)
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    made = generate(args.seed, args.transactions, args.documents)
    data = statement(made.transactions)
    print(
        f"seed {args.seed}: a statement of {len(made.transactions):,} lines "
        f"({len(data) / 1_000_000:.2f} MB) against {len(made.documents):,} documents, "
        f"{args.runs} runs [{load_average()}]"
    )
    timings: dict[bool, list[float]] = {True: [], False: []}
    matched: set[int] = set()
    server = EmbeddedServer(storage=":memory:").start()
    try:
        for run in range(args.runs):
            order = [True, False]
            random.Random(run).shuffle(order)  # neither always first (warm caches)
            for auto in order:
                took, count = asyncio.run(import_once(server.uri, made, data, auto))
                timings[auto].append(took)
                state = "on " if auto else "off"
                print(
                    f"run {run + 1}, auto-match {state}: {took:.2f} s [{load_average()}]",
                    flush=True,
                )
                if auto:
                    matched.add(count)
                else:
                    assert count == 0
    finally:
        discard(server)
    on, off = statistics.median(timings[True]), statistics.median(timings[False])
    print(f"auto-matched {', '.join(str(m) for m in sorted(matched))} of {len(made.transactions)}")
    print(
        f"import with auto-match {on * 1000:.0f} ms, without {off * 1000:.0f} ms, "
        f"matching {(on - off) * 1000:.0f} ms (median; runs on "
        f"{', '.join(f'{t:.2f}' for t in timings[True])} s, off "
        f"{', '.join(f'{t:.2f}' for t in timings[False])} s)"
    )
    print(f"[{load_average()}]")


if __name__ == "__main__":
    main()
