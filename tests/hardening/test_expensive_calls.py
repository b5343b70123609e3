"""Item 4: expensive capabilities have a cost in GraphQL and run one at a time per key."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from engines.analysis import Analysis, analyze
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.services.processing.analyzer import Analyzer
from tests.conftest import Tenant, app_on, make_tenant
from tests.documents.conftest import call

PDF = (Path(__file__).parents[1] / "fixtures" / "extraction" / "text-layer.pdf").read_bytes()
release = threading.Event()
started: list[str] = []
pdfium = threading.Lock()  # pdfium is not thread-safe; these analyses run in threads


def held_analysis(data: bytes, mime: str, **hints: Any) -> Analysis:
    """Runs in a worker thread until the test releases it."""
    started.append(mime)
    release.wait(timeout=30)
    with pdfium:
        return analyze(PDF, "application/pdf")


@pytest.fixture
async def inspecting(
    store: Store, registry: Registry, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[httpx.AsyncClient, Tenant, Tenant]]:
    release.clear()
    started.clear()

    async def original(workspace_id: str, file_ref: dict[str, Any]) -> bytes:
        return PDF  # GridFS is a wire-test matter; here the original is served from memory

    monkeypatch.setattr(store.files, "read", original)
    alice = await make_tenant(store, "alice@example.com", "Alice Co")
    bob = await make_tenant(store, "bob@example.com", "Bob Ltd")
    for tenant, document_id in ((alice, "doc_1"), (bob, "doc_2")):
        file_ref = {"gridfsId": "x", "mimeType": "application/pdf", "fileName": "a.pdf"}
        await store.documents.writes.insert_many(
            tenant.org_id,
            [{"_id": document_id, "file": file_ref, "processingStatus": "processed"}],
        )
    app = app_on(store, registry, analyzer=Analyzer(function=held_analysis))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        yield http, alice, bob
    release.set()


async def until_started(count: int) -> None:
    for _ in range(12_000):  # a hang guard of a minute, for a loaded machine
        if len(started) >= count:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"{count} analyses never started")


async def test_a_second_inspect_with_the_same_key_is_429_and_others_are_not_held(
    inspecting: tuple[httpx.AsyncClient, Tenant, Tenant],
) -> None:
    http, alice, bob = inspecting
    first = asyncio.create_task(call(http, alice, "documents.inspect", {"id": "doc_1"}))
    await until_started(1)
    # Five more from the same key while the first runs: refused at once, nothing queued.
    refused = await asyncio.gather(
        *(call(http, alice, "documents.inspect", {"id": "doc_1"}) for _ in range(5))
    )
    assert [r.status_code for r in refused] == [429] * 5
    assert refused[0].json()["error"]["errorMessage"] == (
        "documents.inspect is already running for this API key; retry when it has finished"
    )
    assert len(started) == 1
    # Another workspace's key is not refused.
    other = asyncio.create_task(call(http, bob, "documents.inspect", {"id": "doc_2"}))
    await until_started(2)
    release.set()
    assert (await first).status_code == 200 and (await other).status_code == 200
    # The slot is free again once the call has finished.
    again = await call(http, alice, "documents.inspect", {"id": "doc_1"})
    assert again.status_code == 200


async def test_five_aliased_inspects_in_one_graphql_request_are_refused(
    inspecting: tuple[httpx.AsyncClient, Tenant, Tenant],
) -> None:
    http, alice, _ = inspecting
    release.set()
    fields = " ".join(
        f'i{n}: documentsInspect(input: {{id: "doc_1"}}) {{ documentId }}' for n in range(5)
    )
    response = await http.post(
        "/v1/graphql",
        json={"query": "{ " + fields + " }"},
        headers={**alice.headers(), "accept": "application/graphql-response+json"},
    )
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["message"].startswith(
        "The operation costs 5. Allowed: 1 (documentsInspect costs 1"
    )
    assert started == []  # refused before anything ran
    one = await http.post(
        "/v1/graphql",
        json={"query": '{ documentsInspect(input: {id: "doc_1"}) { documentId } }'},
        headers=alice.headers(),
    )
    assert one.json() == {"data": {"documentsInspect": {"documentId": "doc_1"}}}


async def test_a_concurrent_graphql_inspect_is_a_too_many_requests_error(
    inspecting: tuple[httpx.AsyncClient, Tenant, Tenant],
) -> None:
    http, alice, _ = inspecting
    first = asyncio.create_task(call(http, alice, "documents.inspect", {"id": "doc_1"}))
    await until_started(1)
    response = await http.post(
        "/v1/graphql",
        json={"query": '{ documentsInspect(input: {id: "doc_1"}) { documentId } }'},
        headers=alice.headers(),
    )
    [error] = response.json()["errors"]
    assert error["extensions"] == {
        "code": "TOO_MANY_REQUESTS",
        "status": 429,
        "reason": "too_many_requests",
        "retryAfter": 1,
    }
    release.set()
    assert (await first).status_code == 200


def test_expensive_slots_are_capped_per_member_and_per_workspace_whatever_the_keys() -> None:
    """Issue 35: original reads (and expensive calls) were one at a time per key, and keys are
    free to make: 100 keys of one person read 100 originals at once."""
    from resolvers.framework.errors import TooManyRequests
    from resolvers.framework.throttle import ExpensiveCallGate

    gate = ExpensiveCallGate(per_key=1, per_member=2, per_workspace=3)
    with contextlib.ExitStack() as held:
        for key in ("key_1", "key_2"):
            held.enter_context(gate.slot(key, "original", 0, member="usr_m", workspace="org_w"))
        with pytest.raises(TooManyRequests, match="this member"):
            held.enter_context(gate.slot("key_3", "original", 0, member="usr_m", workspace="org_w"))
        held.enter_context(gate.slot("key_4", "original", 0, member="usr_n", workspace="org_w"))
        with pytest.raises(TooManyRequests, match="this workspace"):
            held.enter_context(gate.slot("key_5", "original", 0, member="usr_o", workspace="org_w"))
        # Another workspace is not held back.
        held.enter_context(gate.slot("key_6", "original", 0, member="usr_p", workspace="org_x"))
    # All given back.
    with gate.slot("key_3", "original", 0, member="usr_m", workspace="org_w"):
        pass
