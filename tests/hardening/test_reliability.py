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
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mongomock_motor import AsyncMongoMockClient
from schemathesis import GenerationMode, openapi

from app.rest.openapi import build_openapi
from persistence.client import connect
from persistence.documents.fields import COUNT_FIELDS, SEARCH_FIELDS
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers import build_registry
from resolvers.framework.registry import CapabilitySpec
from tests.conftest import Tenant, app_on, make_tenant
from tests.documents.conftest import KNOWN
from tests.hypothesis_profiles import examples

REGISTRY = build_registry()
WHERE_FIELDS = {"documents.search": SEARCH_FIELDS, "documents.count": COUNT_FIELDS}
OPENAPI = openapi.from_dict(build_openapi(REGISTRY, "http://fincap.test"))
KNOWN_IDS = [document["_id"] for document in KNOWN]
EXAMPLES = examples(40)
WIRE_EXAMPLES = examples(30)

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


# Values a where clause may meet: extreme numbers, dates at the ends of the calendar with
# offsets, lone surrogates.
edge_scalars = st.one_of(
    # The edges themselves: int64 cents, Decimal's 28 digits, float range.
    st.sampled_from([2**63, -(2**63) - 1, 10**17, 1e20, 1e30, -1e25, 1e308, 5e-324]),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(min_value=-1e300, max_value=1e300),
    st.datetimes(timezones=st.timezones()).map(lambda moment: moment.isoformat()),
    st.sampled_from(["0001-01-01T00:00:00+05:00", "9999-12-31T23:00:00-05:00", "1e30"]),
    st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0xE010), min_size=1, max_size=4),
    st.text(max_size=12),
)
OPS = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "regex", "exists"]


def where_clauses(fields: Mapping[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Clauses on the capability's own fields with values of the op's shape: they get past the
    shape checks to value coercion and the store. Money and date fields, where range errors
    hide, are drawn as often as all the others."""
    ranged = sorted(name for name, spec in fields.items() if spec.type in ("money", "date"))
    names = st.sampled_from(ranged) | st.sampled_from(sorted(fields))

    @st.composite
    def condition(draw: st.DrawFn) -> dict[str, Any]:
        op = draw(st.sampled_from(OPS))
        if op in ("in", "nin"):
            value: Any = draw(st.lists(edge_scalars, min_size=1, max_size=3))
        elif op == "exists":
            value = draw(st.booleans() | json_values)
        else:
            value = draw(edge_scalars | json_values)
        return {"field": draw(names), "op": op, "value": value}

    return st.fixed_dictionaries(
        {
            "logic": st.sampled_from(["and", "or"]),
            "conditions": st.lists(condition(), min_size=1, max_size=3),
        }
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

    strategies = []
    if spec.slug in WHERE_FIELDS:
        # Half of these bodies: the where clause is where values meet the store.
        strategies += 5 * [
            st.fixed_dictionaries(
                {"where": where_clauses(WHERE_FIELDS[spec.slug])},
                optional={"groupBy": st.just("month")}
                if spec.slug == "documents.count"
                else {"useSearch": st.just(False)},
            )
        ]
    return st.one_of(
        *strategies,
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
        self.runner.run(self.store.documents.writes.insert_many(self.tenant.org_id, KNOWN))
        app = app_on(self.store, REGISTRY)
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
            # A key's last use (written at most once a minute when it authenticates) is a
            # trace of the caller, not of the refused call: left out.
            hidden = {"lastUsedAt": 0} if name == "api_keys" else None
            rows = await db[name].find({}, hidden).to_list(None)
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


@pytest.fixture(scope="module")
def wire(embedded_server: EmbeddedServer) -> Iterator[Harness]:
    """The same harness on SecantusDB: GridFS, and BSON encoding of every value (int64 bounds,
    valid UTF-8), which the in-memory store never does."""
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
    yield harness
    harness.runner.run(drop())
    harness.close()


REAL_FILE = base64.b64encode(b"%PDF-1.4\n%%EOF\n").decode()


@pytest.mark.wire
@pytest.mark.parametrize("slug", ["files.upload", "documents.search", "documents.count"])
def test_fuzzed_on_the_wire(wire: Harness, slug: str) -> None:
    spec = REGISTRY.get(slug)
    assert spec is not None
    strategy = bodies(spec)
    if slug == "files.upload":
        names = st.text(max_size=300)
        strategy |= st.builds(lambda n: {"fileName": n, "base64Data": REAL_FILE}, names)

    @settings(FUZZ, max_examples=WIRE_EXAMPLES)
    @given(body=strategy)
    def fuzz(body: Any) -> None:
        wire.check(slug, body)

    fuzz()
