"""Reliability: every capability's input schema, fuzzed through the REST face.

For each capability, bodies are drawn from its JSON Schema in /openapi.json (schemathesis's
generators: valid bodies and bodies that violate the schema), plus valid bodies with one member
replaced by arbitrary JSON or with an unknown member, and arbitrary JSON altogether; they are
sent with a valid key and workspace. Whatever the body: no 5xx, and a rejected call leaves every
collection exactly as it was. files.upload runs on the wire (GridFS); the rest in memory.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient
from schemathesis import GenerationMode, openapi

from app.config import Settings
from app.main import create_app
from app.openapi import build_openapi
from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_registry
from resolvers.registry import CapabilitySpec
from tests.conftest import Tenant, make_tenant
from tests.documents.conftest import KNOWN

REGISTRY = build_registry()
OPENAPI = openapi.from_dict(build_openapi(REGISTRY, "http://fincap.test"))
KNOWN_IDS = [document["_id"] for document in KNOWN]
EXAMPLES = 40

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)


def schema_bodies(spec: CapabilitySpec, mode: GenerationMode) -> st.SearchStrategy[Any]:
    operation = OPENAPI[f"/capabilities/{spec.slug}"]["POST"]
    return operation.as_strategy(generation_mode=mode).map(lambda case: case.body)


def bodies(spec: CapabilitySpec) -> st.SearchStrategy[Any]:
    """Valid bodies, invalid ones, nearly valid ones, and anything at all."""
    valid = schema_bodies(spec, GenerationMode.POSITIVE)

    @st.composite
    def with_known_id(draw: st.DrawFn) -> Any:
        body = draw(valid)
        body = json.loads(wire_form(body) or b"null")  # a copy the mutations below may change
        if isinstance(body, dict) and "id" in body and draw(st.booleans()):
            body["id"] = draw(st.sampled_from(KNOWN_IDS))  # reach the handler, not just 404
        return body

    @st.composite
    def one_member_replaced(draw: st.DrawFn) -> Any:
        body = draw(with_known_id())
        if isinstance(body, dict) and body:
            body[draw(st.sampled_from(sorted(body)))] = draw(json_values)
        return body

    @st.composite
    def unknown_member(draw: st.DrawFn) -> Any:
        body = draw(with_known_id())
        if isinstance(body, dict):
            body[draw(st.text(min_size=1, max_size=12))] = draw(json_values)
        return body

    return st.one_of(
        with_known_id(),
        schema_bodies(spec, GenerationMode.NEGATIVE),
        one_member_replaced(),
        unknown_member(),
        json_values,
    )


def wire_form(body: Any) -> bytes:
    """The request body: JSON, or the raw bytes (or nothing) a negative case may be."""
    if isinstance(body, bytes):
        return body
    try:
        return json.dumps(body).encode()
    except TypeError:  # schemathesis's "no body" marker
        return b""


class Harness:
    """The app on a store, driven from synchronous Hypothesis tests through one event loop."""

    def __init__(self, make_store: Callable[[], Any]) -> None:
        self.runner = asyncio.Runner()
        self.store: Store = self.runner.run(make_store())
        self.tenant: Tenant = self.runner.run(
            make_tenant(self.store, f"fuzz-{uuid.uuid4().hex[:6]}@example.com", "Fuzz Co")
        )
        self.runner.run(self.store.documents.insert_many(self.tenant.org_id, KNOWN))
        app = create_app(Settings(), store=self.store, registry=REGISTRY)
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
        )

    def close(self) -> None:
        self.runner.run(self.http.aclose())
        self.runner.close()

    async def _snapshot(self) -> str:
        digest = hashlib.sha256()
        db = self.store.db
        for name in sorted(await db.list_collection_names()):
            rows = await db[name].find({}).to_list(None)
            rows.sort(key=lambda row: str(row.get("_id")))
            digest.update(name.encode() + repr(rows).encode())
        return digest.hexdigest()

    def check(self, slug: str, body: Any) -> None:
        async def run() -> None:
            before = await self._snapshot()
            response = await self.http.post(
                f"/v1/capabilities/{slug}",
                content=wire_form(body),
                headers={**self.tenant.headers(), "content-type": "application/json"},
            )
            assert response.status_code < 500, (slug, body, response.text)
            envelope = response.json()
            assert envelope["code"] == response.status_code
            if response.status_code != 200:
                assert await self._snapshot() == before, (slug, body, response.text)

        self.runner.run(run())


async def _memory_store() -> Store:
    store = Store(AsyncMongoMockClient(tz_aware=True)[f"fuzz_{uuid.uuid4().hex[:8]}"])
    await store.ensure_indexes()
    return store


@pytest.fixture(scope="module")
def memory() -> Iterator[Harness]:
    harness = Harness(_memory_store)
    yield harness
    harness.close()


FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.mark.parametrize("slug", [spec.slug for spec in REGISTRY if spec.slug != "files.upload"])
def test_no_5xx_and_nothing_stored_on_rejection(memory: Harness, slug: str) -> None:
    spec = REGISTRY.get(slug)
    assert spec is not None

    @FUZZ
    @given(body=bodies(spec))
    def fuzz(body: Any) -> None:
        memory.check(slug, body)

    fuzz()


@pytest.mark.wire
def test_uploads_fuzzed_on_the_wire(embedded_server: EmbeddedServer) -> None:
    name = f"fuzz_{uuid.uuid4().hex[:8]}"
    clients: list[Any] = []

    async def wire_store() -> Store:
        client, db = connect(embedded_server.uri, name)
        clients.append(client)
        store = Store(db)
        await store.ensure_indexes()
        return store

    async def drop() -> None:
        await clients[0].drop_database(name)
        clients[0].close()

    harness = Harness(wire_store)
    spec = REGISTRY.get("files.upload")
    assert spec is not None
    real_file = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()
    try:

        @settings(FUZZ, max_examples=25)
        @given(
            body=bodies(spec)
            | st.builds(lambda n: {"fileName": n, "base64Data": real_file}, st.text(max_size=300))
        )
        def fuzz(body: Any) -> None:
            harness.check("files.upload", body)

        fuzz()
    finally:
        harness.runner.run(drop())
        harness.close()
