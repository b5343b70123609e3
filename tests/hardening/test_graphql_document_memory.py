"""Attack M1 (issue 35): 600 unique 64 KB GraphQL documents, sent without any credential, took
the server from 345 to 1,100 MB and it kept the memory: every document was kept parsed (its
syntax tree is up to ~70 times its text) in a cache bounded by count only, filled by anyone.
Now it is bounded in bytes and filled only by requests whose credentials authenticate."""

from __future__ import annotations

import httpx
from starlette.applications import Starlette
from starlette.routing import Route

from app.graphql.document_cache import Checked, DocumentCache, estimated_bytes
from app.host.config import Settings
from persistence.store import Store
from resolvers import build_registry
from tests.conftest import Tenant, app_on


def documents_of(app: Starlette) -> DocumentCache:
    """The GraphQL face's document cache."""
    for route in app.routes:
        if isinstance(route, Route) and route.path == "/v1/graphql":
            cache: DocumentCache = route.endpoint.schema.documents  # type: ignore[attr-defined]
            return cache
    raise LookupError("no GraphQL route")


def wide_document(n: int) -> str:
    """A valid document near the 64 KB limit and the 2,000-token limit, unique by ``n``."""
    return f"query Q{n} {{ " + " ".join(f"a{i}: __typename" for i in range(600)) + " }"


async def test_anonymous_documents_are_answered_but_not_kept(store: Store, alice: Tenant) -> None:
    # A registry of its own: the cache is kept on the registry, and the suite's shared one holds
    # the documents other tests' signed-in requests left.
    app = app_on(store, build_registry(), Settings())
    cache = documents_of(app)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as http:
        for n in range(20):
            answer = await http.post("/v1/graphql", json={"query": wide_document(n)})
            assert answer.status_code == 200
        assert len(cache) == 0
        # A wrong key is no credential either.
        wrong = {"Authorization": "Bearer sk_not-a-key"}
        await http.post("/v1/graphql", json={"query": wide_document(99)}, headers=wrong)
        assert len(cache) == 0
        signed = await http.post(
            "/v1/graphql", json={"query": wide_document(100)}, headers=alice.headers()
        )
        assert signed.status_code == 200
        assert len(cache) == 1


def test_the_cache_is_bounded_in_bytes() -> None:
    from graphql import parse

    cache = DocumentCache(maxsize=10_000, max_bytes=2_000_000)
    for n in range(200):
        text = wide_document(n)
        cache.put(text, Checked(parse(text), ()))
        assert cache.bytes <= 2_000_000
    assert 0 < len(cache) < 200
    one = wide_document(0)
    assert estimated_bytes(one, parse(one)) > 50 * len(one)  # the tree, not the text
