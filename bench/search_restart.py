"""The first ranked search of a workspace after a restart: the index built from the documents
(no snapshot: what every process did before snapshots) against the index loaded from its stored
snapshot (``resolvers.services.documents.search_indexes``), on the embedded store.

Per size: one workspace of demo documents with embeddings (random unit vectors stored as the
service stores them, int8: ranking costs the same whatever the vectors say), inserted in bulk.
Each run is a new ``SearchIndexes`` (a restarted process) whose first ``fresh`` + one ranking
(words and meaning, ``fused_top``) is timed; "before" and "after" alternate, the first of them
varying from run to run. "after, 1% changed" has 1% of the documents archived after the
snapshot (the refresh reads them). Also printed: the snapshot's size and write time in the two
representations measured (npz, npz compressed), the parts of a load, and the index's memory per
document beyond its vectors (tracemalloc, one untimed build and one untimed load).

    .venv/bin/python bench/search_restart.py [--sizes 10000 100000] [--runs 3]
"""

from __future__ import annotations

import gc
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import Workspace, load_average, loaded, run_sizes
from engines.demo import demo_documents
from engines.ranking import embeddings, index_snapshot
from engines.ranking.search_index import SearchIndex, fused_top
from persistence.documents.stamp import STAMP
from persistence.documents.vectors import stored_fields
from persistence.embedded import EmbeddedServer
from persistence.ids import utcnow
from persistence.store import Store
from resolvers.services.documents import search_indexes
from resolvers.services.documents.search_indexes import SearchConfig, SearchIndexes

BATCH = 1000
EARLIER = timedelta(hours=1)
QUERY = "hotel invoice"


async def insert(store: Store, org_id: str, count: int) -> None:
    """``count`` demo documents with embeddings, prepared as the service prepares them."""
    rng = np.random.default_rng(3)
    documents = demo_documents(count, seed=1)
    for start in range(0, count, BATCH):
        now = utcnow()
        records = []
        chunk = documents[start : start + BATCH]
        vectors = embeddings.normalise(rng.standard_normal((len(chunk), embeddings.DIM)))
        for fields, vector in zip(chunk, vectors, strict=True):
            record: dict[str, Any] = dict(store.documents.writes.prepare(org_id, fields, now))
            record.update(stored_fields(vector))
            record[STAMP] = now - EARLIER  # written earlier: a refresh's overlap skips them
            records.append(record)
        await store.db["documents"].insert_many(records, ordered=False)


# Where-clauses of a ranked search, as ``compile_where`` emits them: one field, two fields.
WHERE = {
    "currency=EUR": {"currency": "EUR"},
    "currency=EUR and category=Meals": {"$and": [{"currency": "EUR"}, {"category": "Meals"}]},
}


def rank(
    index: SearchIndex,
    vector: np.ndarray,
    filtered: Callable[[np.ndarray], np.ndarray] | None = None,
) -> int:
    rows = index.select(False, None)
    if filtered is not None:
        rows = filtered(rows)
    words = index.lexical_match(QUERY, rows)
    similarity = index.vector_scores(vector, rows)
    best = fused_top(
        words.scores, similarity, 20, distinctive=words.distinctive, first=words.complete
    )
    return len(best.ranked.rows)


async def first_search(store: Store, org_id: str, snapshots: bool, vector: np.ndarray) -> float:
    """Seconds of a restarted process's first ranked search."""
    process = SearchIndexes(SearchConfig(semantic=False, snapshots=snapshots))
    begin = time.perf_counter()
    index = await process.fresh(store, org_id)
    assert rank(index, vector) > 0
    return time.perf_counter() - begin


def memory_per_document(
    index_rows: list[Any] | None = None, snapshot: tuple[bytes, str] | None = None
) -> tuple[float, float, float]:
    """Bytes per document an index holds beyond its vectors: all of it, its postings and rows,
    its filter fields (under tracemalloc: one build from ``index_rows`` already read, or one
    load of a stored ``snapshot``: its bytes and workspace)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    entry = search_indexes._Entry(SearchIndex(embeddings.DIM))
    if snapshot is not None:
        entry.index, entry.fields = search_indexes._decode(*snapshot)
    else:
        SearchIndexes._apply(entry, index_rows or [])
    gc.collect()
    total = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    n = len(entry.index)
    vectors = entry.index._vectors.nbytes
    fields = entry.fields.nbytes + _deep_size(entry.fields._values)
    return (total - vectors) / n, (total - vectors - fields) / n, fields / n


def _deep_size(value: Any, seen: set[int] | None = None) -> int:
    seen = set() if seen is None else seen
    if id(value) in seen:
        return 0
    seen.add(id(value))
    size = sys.getsizeof(value)
    if isinstance(value, dict):
        size += sum(_deep_size(k, seen) + _deep_size(v, seen) for k, v in value.items())
    elif isinstance(value, list | tuple):
        size += sum(_deep_size(v, seen) for v in value)
    return size


async def measure(size: int, runs: int, server: EmbeddedServer) -> None:
    workspaces = [Workspace("restart@example.com", "Restart", 0)]
    async with loaded(server, f"bench_restart_{size}", workspaces) as db:
        store, org_id = db.store, db.tenants[0]["orgId"]
        begin = time.perf_counter()
        await insert(store, org_id, size)
        print(f"{size} documents (inserted in {time.perf_counter() - begin:.0f} s)")
        vector = embeddings.normalise(np.random.default_rng(5).standard_normal(embeddings.DIM))[0]

        # The snapshot, in the two representations measured.
        process = SearchIndexes(SearchConfig(semantic=False, snapshots=False))
        index = await process.fresh(store, org_id)
        entry = process._entries[org_id]
        for compress in (False, True):
            begin = time.perf_counter()
            data = index_snapshot.encode(index, {}, {}, compress=compress)
            encoded = time.perf_counter() - begin
            begin = time.perf_counter()
            index_snapshot.decode(data, embeddings.DIM)
            decoded = time.perf_counter() - begin
            name = "npz compressed" if compress else "npz"
            print(
                f"  snapshot {name:<15} {len(data) / 1e6:7.1f} MB "
                f"({len(data) / size:6.0f} B/doc), encode {encoded * 1000:6.0f} ms, "
                f"decode {decoded * 1000:6.0f} ms"
            )
        begin = time.perf_counter()
        arrays = index.to_arrays()
        copied = time.perf_counter() - begin
        data = search_indexes._encode(arrays, entry.fields.encode(), org_id)
        encoded = time.perf_counter() - begin
        begin = time.perf_counter()
        assert entry.checked is not None
        await store.search_snapshots.put(org_id, data, entry.checked)
        written = time.perf_counter() - begin
        begin = time.perf_counter()
        found = await store.search_snapshots.get(org_id)
        assert found is not None
        read = time.perf_counter() - begin
        begin = time.perf_counter()
        search_indexes._decode(found[0], org_id)
        decoded = time.perf_counter() - begin
        print(
            f"  snapshot stored (npz + filter fields): {len(data) / 1e6:.1f} MB, "
            f"encode {encoded * 1000:.0f} ms (copy under the lock {copied * 1000:.0f} ms), "
            f"write {written * 1000:.0f} ms, "
            f"read {read * 1000:.0f} ms, decode {decoded * 1000:.0f} ms"
        )

        times: dict[str, list[float]] = {"before": [], "after": []}
        for run in range(runs):
            order = ("before", "after") if run % 2 == 0 else ("after", "before")
            for kind in order:
                times[kind].append(await first_search(store, org_id, kind == "after", vector))
        changed = [r["_id"] for r in await store.db["documents"].find({}, {"_id": 1}).to_list(None)]
        await store.documents.writes.set_archived(org_id, changed[::100], True)
        times["after, 1% changed"] = [
            await first_search(store, org_id, True, vector) for _ in range(runs)
        ]
        before = statistics.median(times["before"])
        for kind, samples in times.items():
            median = statistics.median(samples)
            print(
                f"  first ranked search {kind:<19} median {median * 1000:8.0f} ms "
                f"(x{before / median:5.1f} faster)  [{load_average()}]"
            )
        # Later searches of the loaded index, filtered by a where-clause on the fields it keeps.
        process = SearchIndexes(SearchConfig(semantic=False))
        loaded_index = await process.fresh(store, org_id)
        for name, selector in WHERE.items():
            samples = []
            for _ in range(max(runs, 5)):
                begin = time.perf_counter()
                rank(loaded_index, vector, partial(process.filtered, org_id, selector=selector))
                samples.append(time.perf_counter() - begin)
            print(
                f"  later ranked search, where {name}: median "
                f"{statistics.median(samples) * 1000:.1f} ms, fastest {min(samples) * 1000:.1f} "
                f"[{load_average()}]"
            )
        rows = await store.documents.search.index_rows(org_id)
        found = await store.search_snapshots.get(org_id)
        assert found is not None
        for how, kept in (
            ("built", memory_per_document(rows)),
            ("loaded", memory_per_document(snapshot=(found[0], org_id))),
        ):
            total, postings, fields = kept
            print(
                f"  index memory beyond vectors, {how}: {total:.0f} B/doc (postings, ids "
                f"and rows {postings:.0f}, filter fields {fields:.0f})  [{load_average()}]"
            )


def main() -> None:
    run_sizes(__doc__, measure, sizes=[10_000], runs=3)


if __name__ == "__main__":
    main()
