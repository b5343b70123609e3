"""The in-memory filter evaluator (``persistence.documents.matching``) selects what the stores
select: random where-clauses compiled by ``compile_where`` (and the words and name filters of
``DocumentQuery``) over random documents, against the independent oracle and SecantusDB."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from persistence.documents.matching import UnsupportedFilter, matches
from persistence.documents.query import DocumentQuery, combined
from persistence.documents.records import to_record
from tests.documents.test_where import clauses, compile_, documents
from tests.documents.where_oracle import matches as oracle
from tests.hypothesis_profiles import examples

PROPERTY = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def records(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {**to_record(doc), "_id": f"d{i}", "workspaceId": "org_a"} for i, doc in enumerate(docs)
    ]


@PROPERTY
@given(docs=st.lists(documents(), max_size=25), clause=clauses)
def test_the_evaluator_agrees_with_the_oracle(
    docs: list[dict[str, Any]], clause: dict[str, Any]
) -> None:
    compiled = compile_(clause)
    found = {r["_id"] for r in records(docs) if matches(compiled, r)}
    assert found == {f"d{i}" for i, doc in enumerate(docs) if oracle(doc, clause)}, compiled


WORDS = st.sampled_from(["shell", "sh", "caf", "müller", "rewe star", "x", ""])


@pytest.mark.wire
@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=st.lists(documents(), max_size=20),
    clause=clauses,
    words=st.one_of(st.none(), WORDS),
    merchant=st.one_of(st.none(), st.sampled_from(["shell", "REWE", "Café Müller"])),
    exported=st.sampled_from(["all", "exported", "not-exported"]),
)
def test_the_evaluator_agrees_with_the_embedded_store(
    secantus_collection: Any,
    docs: list[dict[str, Any]],
    clause: dict[str, Any],
    words: str | None,
    merchant: str | None,
    exported: Any,
) -> None:
    """The whole caller filter of a search (where-clause, words, merchant, export state) on
    stored records, exactly as the store reads them back (aware datetimes, int64 cents)."""
    secantus = secantus_collection
    secantus.delete_many({})
    stored = records(docs)
    for i, record in enumerate(stored):
        record["searchTerms"] = sorted(set(str(record.get("merchant") or "").lower().split()))
        record["exportStatus"] = "exported" if i % 3 == 0 else "not-exported"
    if stored:
        secantus.insert_many(stored)
    query = DocumentQuery(where=None, words=words, merchant=merchant, export_status=exported)
    selector = {**compile_(clause)}
    selector = combined([selector, *query.parts()])
    expected = {r["_id"] for r in secantus.find(selector, {"_id": 1})}
    read_back = list(secantus.find({}))
    assert {r["_id"] for r in read_back if matches(selector, r)} == expected, selector


def test_what_it_does_not_read_is_refused() -> None:
    record = {"lineItems": [{"description": "fuel"}], "when": datetime(2026, 1, 1, tzinfo=UTC)}
    with pytest.raises(UnsupportedFilter):
        matches({"$where": "1"}, record)
    with pytest.raises(UnsupportedFilter):
        matches({"amount": {"$mod": [2, 0]}}, record)
    with pytest.raises(UnsupportedFilter):
        matches({"lineItems.description": "fuel"}, record)  # an array inside the path
    assert matches({"when": {"$lt": datetime(2026, 1, 2)}}, record)  # naive is UTC
    assert not matches({"when": {"$lt": "2026-01-02"}}, record)  # a string is no date
