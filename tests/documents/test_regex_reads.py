"""Regex conditions matched in fincap's process on the embedded store (``regex_reads``; issue
35, attack M3): the same answers as the store's own ``$regex`` on the same data (counts, pages,
keyset pages, candidate ids, totals, groups), and no ``$regex`` of the caller's sent to it."""

from __future__ import annotations

import random
from datetime import date
from decimal import Decimal
from typing import Any

import pytest

from domain.where import WhereClause
from persistence.documents.query import DocumentQuery, Keyset
from persistence.documents.regex_reads import conjuncts, ids_filter, regex_fields
from persistence.errors import QueryTimeout
from persistence.store import Store
from persistence.where import compile_where
from tests.documents.conftest import doc

pytestmark = pytest.mark.wire

MERCHANTS = ["Shell", "Starbucks", "shell station", "REWE", "Café Müller", None]
SUMMARIES = ["coffee shop!", "a" * 300, "fuel at shell", "Lunch: café", None, "x!y"]
CONDITIONS: list[dict[str, Any]] = [
    {"field": "merchant", "op": "regex", "value": "^sh"},
    {"field": "merchant", "op": "regex", "value": "ll$"},
    {"field": "summary", "op": "regex", "value": "[a-z]{0,15}!"},
    {"field": "summary", "op": "regex", "value": "caf"},
    {"field": "category", "op": "regex", "value": "fuel|meals"},
    {"field": "amount", "op": "gt", "value": "20"},
    {"field": "docDate", "op": "gte", "value": "2024-02-01"},
    {"field": "merchant", "op": "exists", "value": False},
    {"field": "currency", "op": "eq", "value": "USD"},
    {"field": "docType", "op": "ne", "value": "invoice"},
]


def documents(rng: random.Random, count: int, prefix: str = "doc") -> list[dict[str, Any]]:
    out = []
    for n in range(count):
        fields: dict[str, Any] = {
            "merchant": rng.choice(MERCHANTS),
            "summary": rng.choice(SUMMARIES),
            "amount": Decimal(rng.randint(1, 40)),
            "currency": rng.choice(["EUR", "USD"]),
            "category": rng.choice(["Fuel", "Meals", "Travel"]),
            "docDate": date(2024, rng.randint(1, 4), rng.randint(1, 28)),
            "docType": rng.choice(["receipt", "invoice"]),
        }
        out.append(doc(f"{prefix}_{n:03d}", **{k: v for k, v in fields.items() if v is not None}))
    return out


def clause(rng: random.Random) -> dict[str, Any]:
    """A random clause with at least one regex, at any of the first two levels."""
    regexes = [c for c in CONDITIONS if c["op"] == "regex"]
    inner = {
        "logic": rng.choice(["and", "or", "nor"]),
        "conditions": rng.sample(CONDITIONS, rng.randint(1, 3)),
    }
    parts = [rng.choice(regexes), *rng.sample(CONDITIONS, rng.randint(0, 2))]
    if rng.random() < 0.5:
        parts.append(inner)
    rng.shuffle(parts)
    return {"logic": rng.choice(["and", "and", "or", "nor"]), "conditions": parts}


async def answers(store: Store, workspace_id: str, query: DocumentQuery) -> dict[str, Any]:
    docs = store.documents
    first = await docs.reads.find(workspace_id, query, limit=4)
    after = None
    if first:
        last = first[-1]
        after = Keyset("docDate", -1, last["docDate"], last["_id"])
    second = await docs.reads.find(workspace_id, DocumentQuery(**{**vars(query), "after": after}))
    totals = await docs.totals.of(workspace_id, query, group_by="month")
    grouped = await docs.aggregates.of(workspace_id, query, ["merchant"], max_groups=50)
    return {
        "count": await docs.reads.count(workspace_id, query),
        "first": [row["_id"] for row in first],
        "second": [row["_id"] for row in second],
        "sorted": [
            row["_id"]
            for row in await docs.reads.find(
                workspace_id, query, sort_by="amount", order=1, limit=5
            )
        ],
        "all": [row["_id"] for row in await docs.reads.find(workspace_id, query)],
        "candidates": sorted(await docs.reads.candidate_ids(workspace_id, query)),
        "totals": totals,
        "groups": grouped,
    }


async def both_ways(store: Store, workspace_id: str, query: DocumentQuery) -> None:
    store.documents.collection.regex_here = False
    theirs = await answers(store, workspace_id, query)
    store.documents.collection.regex_here = True
    ours = await answers(store, workspace_id, query)
    assert ours == theirs, query


async def test_matched_here_agrees_with_the_embedded_store(wire_store: Store) -> None:
    rng = random.Random(35)
    await wire_store.documents.writes.insert_many("org_a", documents(rng, 60))
    await wire_store.documents.writes.insert_many(
        "org_b", documents(rng, 10, "other")
    )  # never counted
    for _ in range(40):
        where = WhereClause.model_validate(clause(rng))
        await both_ways(wire_store, "org_a", DocumentQuery(where=where))
    # With the other filters of a read: words, a name, the export state, the archive.
    where = WhereClause.model_validate({"conditions": [CONDITIONS[2]]})
    for query in (
        DocumentQuery(where=where, words="shell"),
        DocumentQuery(where=where, merchant="shell", export_status="not-exported"),
        DocumentQuery(where=where, archived="include"),
    ):
        await both_ways(wire_store, "org_a", query)


async def test_no_regex_of_the_callers_reaches_the_embedded_store(wire_store: Store) -> None:
    """Fails when the store evaluates the caller's regex: every pipeline it is sent is
    recorded, and none may test the regex's field with ``$regex``."""
    await wire_store.documents.writes.insert_many("org_a", documents(random.Random(1), 20))
    sent: list[Any] = []
    real = wire_store.documents.collection.docs.aggregate

    def recording(pipeline: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(pipeline)
        return real(pipeline, *args, **kwargs)

    wire_store.documents.collection.docs.aggregate = recording  # type: ignore[method-assign]
    where = WhereClause.model_validate({"conditions": [CONDITIONS[2], CONDITIONS[5]]})
    query = DocumentQuery(where=where)
    await answers(wire_store, "org_a", query)
    assert sent and "'summary': {'$regex'" not in repr(sent)
    # Sanity of the probe: with the store matching, the regex is sent.
    wire_store.documents.collection.regex_here = False
    await wire_store.documents.reads.count("org_a", query)
    assert "'summary': {'$regex'" in repr(sent)


async def test_a_regex_read_past_its_budget_names_the_field(
    wire_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    await wire_store.documents.writes.insert_many("org_a", documents(random.Random(2), 5))
    monkeypatch.setattr("persistence.documents.regex_reads.QUERY_TIME_LIMIT_MS", 0)
    where = WhereClause.model_validate({"conditions": [CONDITIONS[2]]})
    with pytest.raises(QueryTimeout) as raised:
        await wire_store.documents.reads.count("org_a", DocumentQuery(where=where))
    assert raised.value.fields == ("summary",)


def test_the_parts_of_a_compiled_clause() -> None:
    where = WhereClause.model_validate(
        {
            "conditions": [
                CONDITIONS[0],
                {"logic": "or", "conditions": [CONDITIONS[3], CONDITIONS[5]]},
                CONDITIONS[6],
            ]
        }
    )
    compiled = compile_where(where, _fields())
    assert len(conjuncts(compiled)) == 3
    assert regex_fields(compiled) == ("merchant", "summary")
    assert ids_filter(["doc_a"])["$expr"]["$eq"][1] is True


def _fields() -> dict[str, Any]:
    from persistence.documents.fields import SEARCH_FIELDS

    return dict(SEARCH_FIELDS)
