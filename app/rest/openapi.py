"""The OpenAPI 3.1 description, generated once from the frozen registry."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from app.rest.routes import PlainRoute
from resolvers.framework.errors import every_reason
from resolvers.framework.registry import CapabilitySpec, Registry

REF = "#/components/schemas/{model}"
PATH_PARAMETER = re.compile(r"{(\w+)}")
ERROR_STATUSES = {
    "400": "Invalid request: the message names the field and the reason",
    "401": "Missing or invalid API key",
    "403": "Workspace or scope not allowed for this key",
    "404": "Unknown capability or resource",
    "413": "Request body over the service's limit (counted while it arrives)",
    "500": "Internal error (no internals are revealed)",
}
# Statuses only capabilities that declare a cost (they analyse a stored original) answer.
EXPENSIVE_STATUSES = {
    "422": "The input cannot be analysed (an unreadable or missing original, or work over its "
    "budget); repeating the call will not help",
    "429": "This API key already runs this expensive capability, or spent its budget of "
    "expensive calls; Retry-After says in how many seconds to try again",
}
SECURITY_SCHEMES = {
    "bearerAuth": {
        "type": "http",
        "scheme": "bearer",
        "description": "Authorization: Bearer sk_… (recommended) or an OAuth access token",
    },
    "serviceApiKey": {"type": "apiKey", "in": "header", "name": "X-Service-API-Key"},
    "apiKeyHeader": {"type": "apiKey", "in": "header", "name": "x-api-key"},
    "apiKeyQuery": {
        "type": "apiKey",
        "in": "query",
        "name": "apiKey",
        "description": "Fallback; the body field apiKey is accepted too",
    },
}
ORG_PARAMETER = {
    "name": "X-Service-Org-Id",
    "in": "header",
    "required": False,
    "description": "Workspace id (org_…); required by capabilities that act in a workspace",
    "schema": {"type": "string", "pattern": "^org_"},
}


def _error_envelope() -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["success", "code", "error"],
        "properties": {
            "success": {"type": "boolean", "const": False},
            "code": {"type": "integer", "description": "Equals the HTTP status"},
            "error": {
                "type": "object",
                "required": ["errorCode", "errorMessage", "reason"],
                "properties": {
                    "errorCode": {"type": "integer", "description": "Equals the HTTP status"},
                    "errorMessage": {"type": "string"},
                    "reason": {
                        "type": "string",
                        "enum": every_reason(),
                        "description": "The error's stable, machine-readable name (the same "
                        "on every face); branch on it, not on the message",
                    },
                },
            },
        },
    }


def _success_envelope(result_ref: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["success", "code", "data"],
        "properties": {
            "success": {"type": "boolean", "const": True},
            "code": {"type": "integer", "const": 200},
            "data": {
                "type": "object",
                "required": ["result"],
                "properties": {"result": result_ref},
            },
        },
    }


def _operation(spec: CapabilitySpec, refs: Mapping[Any, Any]) -> dict[str, Any]:
    responses: dict[str, Any] = {
        "200": {
            "description": "Success",
            "content": {
                "application/json": {
                    "schema": _success_envelope(refs[(spec.output, "serialization")])
                }
            },
        }
    }
    statuses = {**ERROR_STATUSES, **(EXPENSIVE_STATUSES if spec.cost else {})}
    for status, text in sorted(statuses.items()):
        responses[status] = {
            "description": text,
            "content": {
                "application/json": {"schema": {"$ref": REF.format(model="ErrorEnvelope")}}
            },
        }
    summary = spec.description.split("\n", 1)[0]
    return {
        "operationId": spec.name,
        "summary": summary,
        "description": spec.description,
        "tags": [spec.slug.split(".", 1)[0]],
        "parameters": [ORG_PARAMETER] if spec.needs_workspace else [],
        "requestBody": {
            "required": True,
            "content": {"application/json": {"schema": refs[(spec.input, "validation")]}},
        },
        "responses": responses,
        "x-permissions": list(spec.permissions),
        "x-roles": list(spec.allowed_roles),
        "x-effect": spec.effect,
    }


def _one_name_per_model(
    refs: Mapping[Any, Any], schemas: dict[str, Any]
) -> tuple[dict[Any, Any], dict[str, Any]]:
    """Name both JSON Schemas of a model used in both directions, as GraphQL does.

    pydantic names them ``LineItem-Input`` and ``LineItem-Output``, both titled ``LineItem``,
    and client generators that name classes by title drop both ("duplicate models"). The
    output keeps the model's name and the input becomes ``LineItemInput`` (GraphQL's name for
    the same input type), each with its own title.
    """
    renames: dict[str, str] = {}
    for name in schemas:
        base, _, direction = name.rpartition("-")
        if direction in ("Input", "Output") and base:
            renames[name] = base + ("Input" if direction == "Input" else "")
    clashes = set(renames.values()) & (set(schemas) - set(renames))
    if clashes or len(set(renames.values())) != len(renames):
        raise ValueError(f"OpenAPI schema names clash after renaming: {sorted(clashes)}")
    targets = {REF.format(model=old): REF.format(model=new) for old, new in renames.items()}

    def renamed(node: Any) -> Any:
        if isinstance(node, dict):
            return {
                key: targets.get(value, value) if key == "$ref" else renamed(value)
                for key, value in node.items()
            }
        if isinstance(node, list):
            return [renamed(item) for item in node]
        return node

    result: dict[str, Any] = {}
    for name, schema in schemas.items():
        new_name = renames.get(name, name)
        result[new_name] = renamed(schema)
        if name in renames:
            result[new_name]["title"] = new_name
    return {key: renamed(value) for key, value in refs.items()}, result


def _plain_operation(
    route: PlainRoute, registry: Registry, refs: Mapping[Any, Any]
) -> dict[str, Any]:
    """A declared GET route as an operation: its parameters, its answers, the error envelopes
    (or the route's own error content: a page for a browser), its scopes."""
    responses: dict[str, Any] = {}
    if route.capability is not None:
        spec = registry.get(route.capability)
        assert spec is not None  # a route names a capability only where the registry has it
        ok = _success_envelope(refs[(spec.output, "serialization")])
        responses["200"] = {
            "description": "Success",
            "content": {"application/json": {"schema": ok}},
        }
    responses.update({status: dict(answer) for status, answer in route.responses.items()})
    errors = {"400", "404", "500"} if route.public else set(ERROR_STATUSES) - {"413"}
    envelope = {"application/json": {"schema": {"$ref": REF.format(model="ErrorEnvelope")}}}
    for status in sorted(errors - set(responses)):
        responses[status] = {
            "description": ERROR_STATUSES[status],
            "content": route.error_content or envelope,
        }
    parameters: list[dict[str, Any]] = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
        for name in PATH_PARAMETER.findall(route.path)
    ]
    parameters += [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": text,
            "schema": {"type": "string"},
        }
        for name, text in route.query
    ]
    if route.needs_workspace:
        parameters.append(ORG_PARAMETER)
    operation: dict[str, Any] = {
        "operationId": route.operation_id,
        "summary": route.summary,
        "tags": [route.tag],
        "parameters": parameters,
        "responses": dict(sorted(responses.items())),
        "x-permissions": list(route.permissions),
    }
    if route.public:
        operation["security"] = []
    return operation


def build_openapi(
    registry: Registry, base_url: str, routes: Sequence[PlainRoute] | None = None
) -> dict[str, Any]:
    """OpenAPI 3.1 for every capability and every declared GET route (``routes``; by default
    the REST face's, ``app.rest.plain_routes``); paths are relative to the one server ``…/v1``."""
    if routes is None:
        from app.rest import plain_routes  # the package imports this module first

        routes = plain_routes(registry)
    pairs: list[tuple[type[BaseModel], JsonSchemaMode]] = []
    for spec in registry:
        pairs += [(spec.input, "validation"), (spec.output, "serialization")]
    refs, definitions = models_json_schema(list(dict.fromkeys(pairs)), ref_template=REF)
    refs, schemas = _one_name_per_model(refs, dict(definitions.get("$defs", {})))
    schemas["ErrorEnvelope"] = _error_envelope()

    paths: dict[str, Any] = {
        route.described_path: {"get": _plain_operation(route, registry, refs)} for route in routes
    }
    for spec in registry:
        paths[f"/capabilities/{spec.slug}"] = {"post": _operation(spec, refs)}

    return {
        "openapi": "3.1.0",
        "info": {
            "title": "fincap capability API",
            "version": "1.0.0",
            "description": "Every operation is a capability: POST /capabilities/{slug}.",
        },
        "servers": [{"url": f"{base_url}/v1", "description": "production"}],
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": SECURITY_SCHEMES},
        "security": [{name: []} for name in SECURITY_SCHEMES],
    }
