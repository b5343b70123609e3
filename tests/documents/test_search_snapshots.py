"""Search index snapshots: a process's first ranked search of a workspace loads the stored
snapshot and reads only what changed after its watermark; the loaded index ranks exactly as a
fresh build; a damaged, foreign or out-of-date snapshot is ignored and the index rebuilt.

A ``SearchIndexes()`` made anew stands for a restarted process (or another replica). The
documents' clock and the index's are moved by hand, so the refresh's overlap re-reads only what
was written in its last 5 s.
"""

from __future__ import annotations

import io
import json
import logging
from datetime import datetime
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from engines.ranking import embeddings, index_snapshot
from engines.ranking.search_index import SearchIndex, fused_top
from persistence import search_snapshots
from persistence.documents import collection as documents_clock
from persistence.documents.query import DocumentQuery
from persistence.documents.vectors import stored_fields
from persistence.store import Store
from resolvers.services.documents import search_indexes
from resolvers.services.documents.search_indexes import (
    OVERLAP,
    SearchConfig,
    SearchIndexes,
    candidates,
)
from tests.clock import ManualClock
from tests.conftest import Tenant, make_tenant
from tests.documents.conftest import doc
from tests.documents.test_search_candidates import _check_equal

MERCHANTS = ("Shell", "Starbucks", "REWE", "Aral", "Hotel Adlon", "Deutsche Bahn")
CATEGORIES = ("Fuel", "Meals", "Groceries", "Lodging", "Travel")
QUERIES = ("shell", "starb", "starbuks", "hotel invoice", "fuel", "latte croissant", "bahn")
CONFIG = SearchConfig(semantic=False, snapshot_min_rows=0)


class Spy:
    """Records the ``since`` of every ``index_rows`` call and how many rows it returned."""

    def __init__(self, store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[datetime | None, int]] = []
        original = store.documents.search.index_rows

        async def index_rows(workspace_id: str, since: datetime | None = None) -> Any:
            rows = await original(workspace_id, since)
            self.calls.append((since, len(rows)))
            return rows

        monkeypatch.setattr(store.documents.search, "index_rows", index_rows)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> ManualClock:
    moved = ManualClock()
    monkeypatch.setattr(documents_clock, "utcnow", moved)
    monkeypatch.setattr(search_indexes, "utcnow", moved)
    return moved


async def _seed(store: Store, workspace_id: str, count: int = 60, prefix: str = "doc") -> None:
    rng = np.random.default_rng(7)
    records = []
    for i in range(count):
        fields: dict[str, Any] = {
            "merchant": MERCHANTS[i % len(MERCHANTS)],
            "category": CATEGORIES[i % len(CATEGORIES)],
            "amount": Decimal(f"{i + 1}.50"),
            "summary": "Caffe latte and croissant" if i % 7 == 0 else f"Invoice {i}",
            "docType": "invoice" if i % 3 == 0 else "receipt",
        }
        if i % 11 == 0:
            fields["processingStatus"] = "queued"
        if i % 13 == 0:
            fields["archived"] = True
        records.append(doc(f"{prefix}_{i:03}", **fields))
    await store.documents.writes.insert_many(workspace_id, records)
    vectors = embeddings.normalise(rng.standard_normal((count, embeddings.DIM)))
    # Most documents embedded, a few not yet (they rank by words only).
    await store.documents.search.set_embeddings(
        workspace_id,
        {f"{prefix}_{i:03}": stored_fields(vectors[i]) for i in range(count) if i % 9},
    )


def _ranking(index: SearchIndex, query: str, vector: np.ndarray) -> list[tuple[str, float]]:
    rows = index.select(False, None)
    words = index.lexical_match(query, rows)
    similarity = index.vector_scores(vector, rows)
    best = fused_top(
        words.scores, similarity, 10, distinctive=words.distinctive, first=words.complete
    )
    return [
        (index.ids[int(rows[p])], score)
        for p, score in zip(best.ranked.rows, best.scores, strict=True)
    ]


async def _snapshotted(store: Store, workspace_id: str, clock: ManualClock) -> SearchIndexes:
    """A process that built the workspace's index and wrote its snapshot, a minute after the
    documents were written (so that its refresh's overlap does not re-read them)."""
    clock.advance(60)
    built = SearchIndexes(CONFIG)
    await built.fresh(store, workspace_id)
    await built.settled()
    assert await store.search_snapshots.head(workspace_id) is not None
    return built


async def test_a_loaded_snapshot_ranks_as_a_fresh_build(
    store: Store, alice: Tenant, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _seed(store, alice.org_id)
    built = await _snapshotted(store, alice.org_id, clock)
    fresh = await built.fresh(store, alice.org_id)
    clock.advance(60)
    spy = Spy(store, monkeypatch)
    restarted = SearchIndexes(CONFIG)
    loaded = await restarted.fresh(store, alice.org_id)
    assert spy.calls[0][0] is not None  # it loaded: no full read
    assert loaded is not fresh and loaded.ids == fresh.ids
    rng = np.random.default_rng(1)
    for query in QUERIES:
        vector = embeddings.normalise(rng.standard_normal(embeddings.DIM))[0]
        expected = _ranking(fresh, query, vector)
        assert expected, query
        assert _ranking(loaded, query, vector) == expected, query
    for row in range(len(fresh)):
        assert loaded.words(row) == fresh.words(row)
    fields = restarted._entries[alice.org_id].fields
    assert fields.rows() == built._entries[alice.org_id].fields.rows()
    await _check_equal(store, restarted, alice.org_id)


async def test_a_restarted_process_reads_only_what_changed_after_the_watermark(
    store: Store, alice: Tenant, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _seed(store, alice.org_id)
    await _snapshotted(store, alice.org_id, clock)
    head = await store.search_snapshots.head(alice.org_id)
    assert head is not None
    clock.advance(60)
    record = await store.documents.reads.loaded(alice.org_id, "doc_005")
    assert record is not None
    await store.documents.writes.update_fields(alice.org_id, record, {"merchant": "Zeppelin Werft"})
    await store.documents.writes.set_archived(alice.org_id, ["doc_006", "doc_007"], True)
    spy = Spy(store, monkeypatch)
    restarted = SearchIndexes(CONFIG)
    index = await restarted.fresh(store, alice.org_id)
    assert spy.calls == [(head["watermark"] - OVERLAP, 3)]
    rows = index.select(False, None)
    found = index.lexical_scores("zeppelin", rows)
    assert [index.ids[int(rows[i])] for i in np.flatnonzero(found)] == ["doc_005"]
    assert index.positions["doc_006"] not in set(rows.tolist())


async def test_edits_archives_and_deletions_after_the_snapshot_are_seen(
    store: Store, alice: Tenant, clock: ManualClock
) -> None:
    await _seed(store, alice.org_id)
    await _snapshotted(store, alice.org_id, clock)
    clock.advance(60)
    record = await store.documents.reads.loaded(alice.org_id, "doc_004")
    assert record is not None
    await store.documents.writes.update_fields(alice.org_id, record, {"merchant": "Zeppelin Werft"})
    await store.documents.writes.set_archived(alice.org_id, ["doc_008"], True)
    await store.documents.writes.set_archived(alice.org_id, ["doc_013"], False)
    await store.documents.writes.delete_unprocessed(alice.org_id, "doc_022")  # it was queued
    assert await store.documents.reads.get(alice.org_id, "doc_022") is None
    clock.advance(60)
    restarted = SearchIndexes(CONFIG)
    await _check_equal(store, restarted, alice.org_id)
    index = await restarted.fresh(store, alice.org_id)
    rows = await candidates(store, alice.org_id, index, DocumentQuery(), restarted)
    ids = {index.ids[int(r)] for r in rows}
    assert "doc_022" not in ids and "doc_008" not in ids and "doc_013" in ids
    shell = index.lexical_scores("shell", rows)
    zeppelin = index.lexical_scores("zeppelin", rows)
    position = int(np.flatnonzero(rows == index.positions["doc_004"])[0])
    assert zeppelin[position] > 0 and shell[position] == 0


async def _rebuilt(store: Store, workspace_id: str, monkeypatch: pytest.MonkeyPatch) -> None:
    spy = Spy(store, monkeypatch)
    restarted = SearchIndexes(CONFIG)
    await restarted.fresh(store, workspace_id)
    assert spy.calls[0][0] is None  # a full read: the snapshot was not used
    await _check_equal(store, restarted, workspace_id)


async def test_a_damaged_snapshot_is_ignored_and_the_index_rebuilt(
    store: Store,
    alice: Tenant,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _seed(store, alice.org_id)
    await _snapshotted(store, alice.org_id, clock)
    data, watermark = await store.search_snapshots.get(alice.org_id) or (b"", None)
    assert watermark is not None
    damaged = bytearray(data)
    damaged[len(damaged) // 2] ^= 0xFF
    # Stored as is (its head's checksum agrees): the archive's own checks must catch it.
    await store.search_snapshots.put(alice.org_id, bytes(damaged), watermark)
    with caplog.at_level(logging.WARNING, logger="fincap.search"):
        await _rebuilt(store, alice.org_id, monkeypatch)
    assert "ignored" in caplog.text
    # A chunk changed behind the head's back: the checksum catches it.
    await store.search_snapshots.put(alice.org_id, data, watermark)
    await store.db["search_snapshots"].update_one(
        {"workspaceId": alice.org_id, "kind": "chunk"}, {"$set": {"data": b"nonsense"}}
    )
    assert await store.search_snapshots.get(alice.org_id) is None
    await _rebuilt(store, alice.org_id, monkeypatch)


async def test_a_snapshot_of_another_format_is_ignored(
    store: Store,
    alice: Tenant,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _seed(store, alice.org_id)
    monkeypatch.setattr(index_snapshot, "FORMAT", 99)
    await _snapshotted(store, alice.org_id, clock)
    monkeypatch.undo()
    monkeypatch.setattr(documents_clock, "utcnow", clock)
    monkeypatch.setattr(search_indexes, "utcnow", clock)
    with caplog.at_level(logging.WARNING, logger="fincap.search"):
        await _rebuilt(store, alice.org_id, monkeypatch)
    assert f"format 99, not {index_snapshot.FORMAT}" in caplog.text


def _first_format(data: bytes) -> bytes:
    """A snapshot as format 1 wrote it: the postings' CSR by term only (``freqs``), no CSR by
    row."""
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = json.loads(bytes(arrays["header"]).decode())
    header["format"] = 1
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), dtype=np.uint8)
    arrays["freqs"] = arrays.pop("weights")
    del arrays["row_offsets"], arrays["row_terms"]
    out = io.BytesIO()
    np.savez(out, **arrays)  # type: ignore[arg-type]
    return out.getvalue()


async def test_a_snapshot_of_the_first_format_is_ignored_and_rebuilt(
    store: Store,
    alice: Tenant,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _seed(store, alice.org_id)
    await _snapshotted(store, alice.org_id, clock)
    found = await store.search_snapshots.get(alice.org_id)
    assert found is not None
    await store.search_snapshots.put(alice.org_id, _first_format(found[0]), found[1])
    with caplog.at_level(logging.WARNING, logger="fincap.search"):
        await _rebuilt(store, alice.org_id, monkeypatch)
    assert f"format 1, not {index_snapshot.FORMAT}" in caplog.text
    # Without its version check, the old layout is refused as damaged, not loaded.
    monkeypatch.setattr(index_snapshot, "FORMAT", 1)
    with pytest.raises(index_snapshot.SnapshotError, match="damaged"):
        index_snapshot.decode(_first_format(found[0]), embeddings.DIM)


async def test_one_workspaces_snapshot_is_never_loaded_for_another(
    store: Store,
    alice: Tenant,
    bob: Tenant,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _seed(store, alice.org_id)
    await _seed(store, bob.org_id, count=30, prefix="bob")
    await _snapshotted(store, alice.org_id, clock)
    assert await store.search_snapshots.head(bob.org_id) is None
    # Bob's process finds no snapshot of its own, and builds.
    spy = Spy(store, monkeypatch)
    restarted = SearchIndexes(CONFIG)
    index = await restarted.fresh(store, bob.org_id)
    assert spy.calls[0][0] is None
    assert all(i.startswith("bob_") for i in index.ids)
    # Alice's bytes filed under Bob's key (a bug, a hand-copied record): refused, rebuilt.
    data, watermark = await store.search_snapshots.get(alice.org_id) or (b"", None)
    assert watermark is not None
    await store.search_snapshots.put(bob.org_id, data, watermark)
    with caplog.at_level(logging.WARNING, logger="fincap.search"):
        await _rebuilt(store, bob.org_id, monkeypatch)
    assert "made for" in caplog.text


async def test_a_snapshot_is_rewritten_only_after_enough_changes(
    store: Store, alice: Tenant, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _seed(store, alice.org_id)
    process = await _snapshotted(store, alice.org_id, clock)
    first = await store.search_snapshots.head(alice.org_id)
    assert first is not None
    monkeypatch.setattr(search_indexes, "SNAPSHOT_INTERVAL", search_indexes.timedelta(0))
    clock.advance(60)
    # 60 rows: 10% is 6. Five changed rows write nothing …
    await store.documents.writes.set_archived(
        alice.org_id, [f"doc_{i:03}" for i in range(1, 6)], True
    )
    clock.advance(60)
    await process.fresh(store, alice.org_id)
    await process.settled()
    head = await store.search_snapshots.head(alice.org_id)
    assert head is not None and head["generation"] == first["generation"]
    # … a sixth does, with the watermark of the refresh that read it.
    await store.documents.writes.set_archived(alice.org_id, ["doc_010"], True)
    clock.advance(60)
    await process.fresh(store, alice.org_id)
    await process.settled()
    head = await store.search_snapshots.head(alice.org_id)
    assert head is not None and head["generation"] != first["generation"]
    assert head["watermark"] == process._entries[alice.org_id].checked
    chunks = await store.db["search_snapshots"].count_documents({"kind": "chunk"})
    assert chunks == head["chunks"]  # the old generation's chunks are gone


async def test_a_failed_snapshot_write_is_logged_not_raised(
    store: Store,
    alice: Tenant,
    clock: ManualClock,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _seed(store, alice.org_id)

    async def broken(*args: Any) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(store.search_snapshots, "put", broken)
    process = SearchIndexes(CONFIG)
    with caplog.at_level(logging.ERROR, logger="fincap.search"):
        index = await process.fresh(store, alice.org_id)
        await process.settled()
    assert len(index) == 60
    assert "not written" in caplog.text and "disk full" in caplog.text


async def test_small_indexes_are_not_snapshotted(store: Store, alice: Tenant) -> None:
    await _seed(store, alice.org_id, count=20)
    process = SearchIndexes(SearchConfig(semantic=False, snapshot_min_rows=21))
    await process.fresh(store, alice.org_id)
    await process.settled()
    assert await store.search_snapshots.head(alice.org_id) is None
    process = SearchIndexes(SearchConfig(semantic=False, snapshot_min_rows=20))
    await process.fresh(store, alice.org_id)
    await process.settled()
    assert await store.search_snapshots.head(alice.org_id) is not None


@pytest.mark.wire
async def test_a_snapshot_in_many_chunks_round_trips_on_the_wire(
    wire_store: Store, clock: ManualClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On the embedded store over TCP, in chunks far smaller than the snapshot: a restarted
    process loads it (no full read) and ranks as the process that built it."""
    monkeypatch.setattr(search_snapshots, "CHUNK", 16 * 1024)
    tenant = await make_tenant(wire_store, "wire@example.com", "Wire")
    await _seed(wire_store, tenant.org_id, count=120)
    built = await _snapshotted(wire_store, tenant.org_id, clock)
    head = await wire_store.search_snapshots.head(tenant.org_id)
    assert head is not None and head["chunks"] > 3
    fresh = await built.fresh(wire_store, tenant.org_id)
    clock.advance(60)
    spy = Spy(wire_store, monkeypatch)
    restarted = SearchIndexes(CONFIG)
    loaded = await restarted.fresh(wire_store, tenant.org_id)
    assert spy.calls == [(head["watermark"] - OVERLAP, 0)]
    vector = embeddings.normalise(np.random.default_rng(2).standard_normal(embeddings.DIM))[0]
    for query in QUERIES:
        assert _ranking(loaded, query, vector) == _ranking(fresh, query, vector), query
    await _check_equal(wire_store, restarted, tenant.org_id)
