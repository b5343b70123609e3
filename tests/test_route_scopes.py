"""Routes that serve what a capability serves need the scopes that capability declares, read
from its spec, not written again beside the route: the file and preview routes and the GraphQL
links and counts follow documents.get (here declaring ``read_rules``), connecting an integration
follows integrations.configure (here declaring ``read_currency``)."""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.registry import Registry
from resolvers.resources import approvals, documents, integrations, workspaces
from tests.conftest import Tenant, asgi_client
from tests.graphql.helpers import gql


@functools.cache
def stand_in_registry() -> Registry:
    """The real workspaces, documents and integrations (with the approvals that review their gated
    calls, as every face needs), with other scopes declared. Built once: frozen, it keeps the
    GraphQL schema its apps derive."""
    declared = {"documents.get": ("read_rules",), "integrations.configure": ("read_currency",)}
    registry = Registry()
    for spec in Registry.from_modules([workspaces, documents, integrations, approvals]):
        if spec.slug in declared:
            spec = dataclasses.replace(spec, permissions=declared[spec.slug])
        registry.add(spec)
    return registry.freeze()


@pytest.fixture
async def api(store: Store) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, stand_in_registry()) as http:
        yield http


async def key_with(store: Store, tenant: Tenant, *scopes: str) -> dict[str, str]:
    secret = new_api_key_secret()
    await store.api_keys.create(
        tenant.user_id, secret, restricted_to=tenant.org_id, scopes=[*scopes]
    )
    return {"Authorization": f"Bearer {secret}", "X-Service-Org-Id": tenant.org_id}


def reason(response: httpx.Response) -> Any:
    return response.json()["error"]["reason"]


async def test_file_routes_need_what_documents_get_declares(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    declared = await key_with(store, alice, "read_rules")
    habitual = await key_with(store, alice, "read_documents")
    for path in ("/v1/files/doc_x", "/v1/files/doc_x/thumbnail", "/v1/documents/doc_x"):
        # Past the scope check: the document is not there.
        assert reason(await api.get(path, headers=declared)) == "not_found", path
        refused = await api.get(path, headers=habitual)
        assert refused.status_code == 403 and reason(refused) == "missing_scope", path
        assert "read_rules" in refused.json()["error"]["errorMessage"]
    described = (await api.get("/openapi.json")).json()["paths"]
    for path in ("/files/{document_id}", "/files/{document_id}/thumbnail"):
        assert described[path]["get"]["x-permissions"] == ["read_rules"], path


async def test_graph_counts_need_what_documents_get_declares(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    query = "{ workspace { id documentCount } }"
    declared = await key_with(store, alice, "read_workspaces", "read_rules")
    body = await gql(api, query, headers=declared)
    assert "errors" not in body, body
    assert body["data"]["workspace"] == {"id": alice.org_id, "documentCount": 0}
    habitual = await key_with(store, alice, "read_workspaces", "read_documents")
    body = await gql(api, query, headers=habitual)
    [error] = body["errors"]
    assert error["extensions"]["reason"] == "missing_scope"
    assert error["path"] == ["workspace", "documentCount"]


async def test_connecting_needs_what_integrations_configure_declares(
    api: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    path = "/v1/integrations/nowhere/connect"
    declared = await key_with(store, alice, "read_currency")
    assert reason(await api.get(path, headers=declared)) == "not_found"
    habitual = await key_with(store, alice, "write_integrations")
    refused = await api.get(path, headers=habitual)
    assert refused.status_code == 403 and reason(refused) == "missing_scope"
    described = (await api.get("/openapi.json")).json()["paths"]
    assert described["/integrations/{integration_id}/connect"]["get"]["x-permissions"] == [
        "read_currency"
    ]
