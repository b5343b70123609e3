"""The OpenAPI document is valid 3.1, generated from the registry, and every $ref resolves."""

from __future__ import annotations

from typing import Any

import httpx
from openapi_spec_validator import validate

from resolvers.framework.registry import Registry


def refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in refs_in(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in refs_in(value)]
    return []


def resolve(document: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node: Any = document
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


async def test_openapi_is_valid_and_complete(client: httpx.AsyncClient, registry: Registry) -> None:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    document = response.json()
    validate(document)  # raises on any violation of OpenAPI 3.1

    assert document["openapi"].startswith("3.1")
    assert document["info"]["version"] == "1.0.0"
    assert len(document["servers"]) == 1 and document["servers"][0]["url"].endswith("/v1")

    refs = refs_in(document)
    assert refs, "the document should reference component schemas"
    for ref in refs:
        assert resolve(document, ref) is not None

    for spec in registry:
        operation = document["paths"][f"/capabilities/{spec.slug}"]["post"]
        assert operation["operationId"] == spec.name
        assert operation["requestBody"]["required"] is True
        request_schema = resolve(
            document, operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        )
        assert request_schema["additionalProperties"] is False
        ok = operation["responses"]["200"]["content"]["application/json"]["schema"]
        assert ok["properties"]["data"]["properties"]["result"]["$ref"].startswith(
            "#/components/schemas/"
        )
        for status in ("400", "401", "404"):
            error = operation["responses"][status]["content"]["application/json"]["schema"]
            assert error == {"$ref": "#/components/schemas/ErrorEnvelope"}


async def test_every_route_of_the_api_is_described(
    client: httpx.AsyncClient, registry: Registry
) -> None:
    """What the app serves under /v1 (besides GraphQL and the OAuth and inbound doors) is in
    /openapi.json, with the scopes the route checks."""
    app = client._transport.app  # type: ignore[attr-defined]
    document = (await client.get("/openapi.json")).json()
    described = {f"/v1{path}": set(item) for path, item in document["paths"].items()}
    served = {
        route.path: {method.lower() for method in route.methods or ()} - {"head"}
        for route in app.routes
        if route.path.startswith("/v1/")
        and not route.path.startswith(("/v1/graphql", "/v1/oauth", "/v1/inbound", "/v1/webhooks"))
        and route.path != "/v1/capabilities/{slug}"
    }
    for path, methods in served.items():
        assert path in described and methods <= described[path], path
    for path in (
        "/v1/documents/{document_id}",
        "/v1/files/{document_id}",
        "/v1/files/{document_id}/thumbnail",
        "/v1/integrations/{integration_id}/connect",
        "/v1/integrations/{integration_id}/callback",
    ):
        assert path in served and path in described, path
    original = document["paths"]["/files/{document_id}"]["get"]
    assert original["x-permissions"] == list(registry.get("documents.get").permissions)  # type: ignore[union-attr]
    assert document["paths"]["/integrations/{integration_id}/callback"]["get"]["security"] == []

    schemes = document["components"]["securitySchemes"]
    assert {(s.get("in"), s.get("name") or s.get("scheme")) for s in schemes.values()} == {
        (None, "bearer"),
        ("header", "X-Service-API-Key"),
        ("header", "x-api-key"),
        ("query", "apiKey"),
    }
    assert {next(iter(req)) for req in document["security"]} == set(schemes)
