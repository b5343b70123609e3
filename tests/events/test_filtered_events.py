"""``documentEvents(filter:)`` over a real socket (uvicorn in a thread, in-memory store): only
events of documents that match arrive; a filter documents.search would refuse is a clear
error; another workspace's events never arrive. "Did not arrive" is shown by a later event
that must come after it (a sentinel), never by waiting."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from domain.documents import SEARCH_FILTERS
from domain.typed_filters import translate
from resolvers.services.events.event_filters import event_filter
from schema.events import DocumentEvent
from tests.documents.conftest import doc
from tests.events.test_live import (
    PROTOCOL,
    Setup,
    init_payload,
    make_setup,
    next_data,
    receive,
    wait_for_subscribers,
    ws_url,
)
from tests.live import Threaded, app_in_thread

FILTERED = """subscription Filtered($filter: DocumentFilter) {
  documentEvents(filter: $filter) { type documentId document { merchant amount archived } }
}"""
BIG = {"amount": {"gte": "100"}}
# Three levels: or → and → not.
NESTED = {
    "or": [
        {"amount": {"gte": "100"}},
        {"and": [{"merchant": {"eq": "Aldi"}}, {"not": {"category": {"eq": "Fuel"}}}]},
    ]
}


@pytest.fixture(scope="module")
def served() -> Iterator[Threaded[Setup]]:
    with app_in_thread(make_setup) as server:
        yield server


async def no_subscribers(served: Threaded[Setup]) -> None:
    """Until the subscriptions of the tests before have ended on the server (a closed socket's
    subscription ends a moment later), so that ``wait_for_subscribers`` counts this test's."""
    for _ in range(3000):  # a hang guard of a minute, for a loaded machine
        if served.setup.hub.subscribers() == 0:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the earlier subscriptions did not end")


async def subscribe(ws: ClientConnection, tenant: Any, variables: dict[str, Any]) -> None:
    await ws.send(json.dumps({"type": "connection_init", "payload": init_payload(tenant)}))
    assert (await receive(ws))["type"] == "connection_ack"
    payload = {"query": FILTERED, "variables": variables}
    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))


def insert(served: Threaded[Setup], org_id: str, *documents: dict[str, Any]) -> None:
    served.run(served.setup.store.documents.writes.insert_many(org_id, list(documents)))


async def test_only_matching_documents_events_arrive(served: Threaded[Setup]) -> None:
    setup = served.setup
    org = setup.alice.org_id
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await no_subscribers(served)
        await subscribe(ws, setup.alice, {"filter": BIG})
        await wait_for_subscribers(served, 1)
        insert(served, org, doc("f_small", amount=Decimal("10.00")))
        insert(served, org, doc("f_big", amount=Decimal("250.00")))
        first = await next_data(ws)
        # Had f_small's event passed, it would have come first: the filter dropped it.
        assert (first["type"], first["documentId"]) == ("document_created", "f_big")
        assert first["document"]["amount"] == "250.00"

        # A document changed so that it matches: its event passes; archiving a matching one
        # passes (its fields still match), archiving one that does not is dropped.
        small = served.run(setup.store.documents.reads.loaded(org, "f_small"))
        served.run(
            setup.store.documents.writes.update_fields(org, small, {"amount": Decimal("120")})
        )
        updated = await next_data(ws)
        assert (updated["type"], updated["documentId"]) == ("document_updated", "f_small")
        insert(served, org, doc("f_other", amount=Decimal("1.00")))
        served.run(setup.store.documents.writes.set_archived(org, ["f_other"], True))
        served.run(setup.store.documents.writes.set_archived(org, ["f_big"], True))
        archived = await next_data(ws)
        assert (archived["type"], archived["documentId"]) == ("document_archived", "f_big")
        assert archived["document"]["archived"] is True

        # An event of a document that no longer exists has nothing to test: it passes.
        served.run(setup.hub.publish(org, "document.updated", ["f_gone"]))
        gone = await next_data(ws)
        assert (gone["documentId"], gone["document"]) == ("f_gone", None)


async def test_a_resumed_subscription_replays_only_matching_events(
    served: Threaded[Setup],
) -> None:
    """Events read back from the store (``after``) are filtered like live ones."""
    setup = served.setup
    org = setup.alice.org_id
    [mark] = served.run(setup.hub.publish(org, "document.updated", ["r_mark"]))
    insert(served, org, doc("r_small", amount=Decimal("10.00")))
    insert(served, org, doc("r_big", amount=Decimal("300.00")))
    query = FILTERED.replace("($filter: DocumentFilter)", "($filter: DocumentFilter, $a: String)")
    query = query.replace(
        "documentEvents(filter: $filter)", "documentEvents(filter: $filter, after: $a)"
    )
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await ws.send(json.dumps({"type": "connection_init", "payload": init_payload(setup.alice)}))
        assert (await receive(ws))["type"] == "connection_ack"
        payload = {"query": query, "variables": {"filter": BIG, "a": mark}}
        await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
        # r_small's event is older than r_big's: had it passed, it would have come first.
        replayed = await next_data(ws)
    assert (replayed["type"], replayed["documentId"]) == ("document_created", "r_big")


async def test_a_nested_filter_with_or_and_not(served: Threaded[Setup]) -> None:
    setup = served.setup
    org = setup.alice.org_id
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await no_subscribers(served)
        await subscribe(ws, setup.alice, {"filter": NESTED})
        await wait_for_subscribers(served, 1)
        insert(
            served,
            org,
            doc("n_aldi_fuel", merchant="Aldi", category="Fuel"),  # not: fails
            doc("n_shell", merchant="Shell", category="Meals"),  # and: merchant fails
            doc("n_aldi_food", merchant="Aldi", category="Groceries"),  # passes
            doc("n_big", amount=Decimal("100.00")),  # passes (gte)
        )
        seen = [(await next_data(ws))["documentId"], (await next_data(ws))["documentId"]]
        insert(served, org, doc("n_sentinel", amount=Decimal("500.00")))
        assert (await next_data(ws))["documentId"] == "n_sentinel"
    assert sorted(seen) == ["n_aldi_food", "n_big"]


async def test_another_workspaces_events_never_arrive(served: Threaded[Setup]) -> None:
    setup = served.setup
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await no_subscribers(served)
        await subscribe(ws, setup.alice, {"filter": BIG})
        await wait_for_subscribers(served, 1)
        insert(served, setup.bob.org_id, doc("b_big", amount=Decimal("900.00")))
        insert(served, setup.alice.org_id, doc("a_sentinel", amount=Decimal("900.00")))
        assert (await next_data(ws))["documentId"] == "a_sentinel"


@pytest.mark.parametrize(
    ("value", "where", "why"),
    [
        ({"merchant": {"in": [f"m{i}" for i in range(101)]}}, "filter.merchant.in", "at most 100"),
        ({"merchant": {"regex": "(a+)+$"}}, "filter.merchant.regex", "exponential"),
        (
            {"not": {"not": {"not": {"not": {"merchant": {"eq": "x"}}}}}},
            "filter.not.not.not.not",
            "nest at most 4",
        ),
        ({"or": []}, "filter.or", "at least one"),
    ],
)
async def test_a_filter_past_the_limits_is_a_clear_error(
    served: Threaded[Setup], value: dict[str, Any], where: str, why: str
) -> None:
    setup = served.setup
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await subscribe(ws, setup.alice, {"filter": value})
        message, then = await receive(ws), await receive(ws)
    assert message["type"] == "next" and message["payload"]["data"] is None, message
    error = message["payload"]["errors"][0]
    assert error["extensions"]["status"] == 400, error
    assert where in error["message"] and why in error["message"], error
    assert then == {"id": "1", "type": "complete"}


async def test_a_misspelt_field_is_refused_before_anything_runs(served: Threaded[Setup]) -> None:
    async with connect(ws_url(served.base), subprotocols=[PROTOCOL]) as ws:  # type: ignore[list-item]
        await subscribe(ws, served.setup.alice, {"filter": {"amout": {"gte": "1"}}})
        message = await receive(ws)
    assert message["type"] == "error", message
    assert "amout" in json.dumps(message["payload"])


def test_events_without_a_document_state_pass() -> None:
    """``lagged`` and a vanished document's event carry nothing to test: they pass; an event
    whose stored document does not match is dropped."""
    accepts = event_filter(translate(BIG, SEARCH_FILTERS).where)
    assert accepts is not None
    at = "2026-01-01T00:00:00Z"
    lagged = DocumentEvent.model_validate({"id": "e1", "type": "lagged", "at": at, "skipped": 3})
    gone = DocumentEvent.model_validate({"id": "e2", "type": "document.updated", "at": at})
    small = DocumentEvent.model_validate({"id": "e3", "type": "document.updated", "at": at})
    small._stored = {"_id": "d", "amount": 1000}  # stored in cents: 10.00
    big = DocumentEvent.model_validate({"id": "e4", "type": "document.updated", "at": at})
    big._stored = {"_id": "d", "amount": 25000}
    assert [accepts(e) for e in (lagged, gone, small, big)] == [True, True, False, True]
    assert event_filter(None) is None
