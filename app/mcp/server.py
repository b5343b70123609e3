"""The MCP face: ``POST /mcp`` (streamable HTTP, JSON-RPC 2.0), one tool per capability.

Tools are generated from the registry when the app is built: name = slug with ``.`` and ``-``
as ``_``, the capability's description, its discovery input schema, its output model's schema,
and annotations from its effect. A call goes through the same ``invoke()`` as REST, with the
OAuth access token as the credential and the token's workspace as the org context.

Stateless (any API process answers any request, no session kept): each request gets a fresh
transport of the official SDK. ``initialize``, notifications, ``ping`` and ``tools/list`` need
no token; a request holding ``tools/call`` without a live access token is answered 401 with
``WWW-Authenticate`` pointing at the protected-resource metadata, so clients find the
authorization server by themselves.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from app.http.credentials import api_key_from_headers
from app.http.json_body import MalformedJson, parse_json
from app.http.request_context import replay, services_of
from app.oauth.metadata import MCP_PATH, resource_metadata_url
from resolvers.framework.access_tokens import find_access_token, resource_covers
from resolvers.framework.context import MCP_AUDIENCE, Credentials
from resolvers.framework.errors import CapabilityError, MissingScope
from resolvers.framework.invoke import invoke
from resolvers.framework.registry import CapabilitySpec, Registry
from schema.approvals import APPROVAL_REQUIRED

# JSON-RPC error code of a call the token's scopes do not cover (implementation-defined range).
INSUFFICIENT_SCOPE = -32003
CONTEXT_TOOL = "workspace_get_context"
PROTECTED_METHODS = frozenset({"tools/call"})


def tool_name(slug: str) -> str:
    """``documents.bulk-edit`` → ``documents_bulk_edit``."""
    return slug.replace(".", "_").replace("-", "_")


def tool_title(spec: CapabilitySpec) -> str:
    resource, _, action = spec.slug.partition(".")
    return f"{resource.replace('-', ' ').capitalize()}: {action.replace('-', ' ')}"


def tool_of(spec: CapabilitySpec) -> types.Tool:
    return types.Tool(
        name=tool_name(spec.slug),
        title=tool_title(spec),
        description=spec.description,
        input_schema=spec.input.model_json_schema(),
        output_schema=spec.output.model_json_schema(),
        annotations=types.ToolAnnotations(
            title=tool_title(spec),
            read_only_hint=spec.effect == "read",
            destructive_hint=spec.effect == "destructive",
            # Reads can be repeated freely; a write repeated may queue or change twice.
            idempotent_hint=spec.effect == "read",
            open_world_hint=False,
        ),
    )


CONTEXT_OUTPUT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "userId": {"type": "string"},
        "email": {"type": "string"},
        "workspace": {
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "role": {"type": "string"},
            },
        },
        "scopes": {"type": "array", "items": {"type": "string"}},
        "clientId": {"type": "string"},
        "tokenExpiresAt": {"type": "integer", "description": "Unix time (seconds)"},
    },
    "required": ["userId", "workspace", "scopes", "tokenExpiresAt"],
}

CONTEXT = types.Tool(
    name=CONTEXT_TOOL,
    title="Workspace: get context",
    description="Who and where this connection acts: the signed-in user, the workspace the "
    "token is bound to (and the user's role there), the granted scopes and when the token "
    "expires. To act in another workspace, the user authorizes the client again.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema=CONTEXT_OUTPUT,
    annotations=types.ToolAnnotations(
        title="Workspace: get context",
        read_only_hint=True,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
)


def result_of(value: dict[str, Any]) -> types.CallToolResult:
    """Structured content plus the same JSON as a text block (for clients that read text)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=value
    )


APPROVAL_TOOLS = ("approvals_get", "approvals_approve", "approvals_reject")


def approval_result(value: dict[str, Any]) -> types.CallToolResult:
    """A gated call's answer, naming the tools that review it (decisions.md, MCP)."""
    value = {**value, "nextTools": list(APPROVAL_TOOLS)}
    request_id = value.get("approvalRequestId")
    note = (
        "Nothing ran yet: this call needs approval by an owner or admin of the workspace. "
        f"Show it with approvals_get, run it with approvals_approve or drop it with "
        f'approvals_reject, each with {{"approvalRequestId": "{request_id}"}}.'
    )
    result = result_of(value)
    result.content.append(types.TextContent(type="text", text=note))
    return result


def failed(exc: CapabilityError) -> types.CallToolResult:
    """A capability's failure as a tool error: the message as text, and the REST envelope's
    error (status, message, ``reason``) as structured content for clients that branch on it."""
    status, message, reason = (
        (exc.status, exc.message, exc.reason)
        if exc.exposed
        else (500, "Internal server error", CapabilityError.reason)
    )
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        structured_content={
            "error": {"errorCode": status, "errorMessage": message, "reason": reason}
        },
        is_error=True,
    )


def build_server(registry: Registry) -> Server[Any]:
    """The SDK server with fincap's tools (built once per app)."""
    specs = {tool_name(spec.slug): spec for spec in registry}
    tools = [CONTEXT, *(tool_of(spec) for spec in registry)]

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        request: Request = ctx.request
        token = api_key_from_headers(request) or ""
        if params.name == CONTEXT_TOOL:
            return result_of(await context_of(request, token))
        spec = specs.get(params.name)
        if spec is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        credentials = Credentials(
            api_key=token,
            request_id=request.scope.get("state", {}).get("request_id", ""),
            audience=MCP_AUDIENCE,
        )
        try:
            result = await invoke(
                registry, spec.slug, dict(params.arguments or {}), credentials, services_of(request)
            )
        except MissingScope as exc:
            raise MCPError(
                INSUFFICIENT_SCOPE,
                f"insufficient_scope: this token lacks the scope {', '.join(exc.scopes)}; "
                "authorize again asking for it",
                {
                    "error": "insufficient_scope",
                    "scope": " ".join(exc.scopes),
                    "reason": exc.reason,
                },
            ) from None
        except CapabilityError as exc:
            return failed(exc)
        value = result.model_dump(mode="json", exclude_unset=True)
        if value.get("status") == APPROVAL_REQUIRED:
            return approval_result(value)
        return result_of(value)

    return Server("fincap", on_list_tools=list_tools, on_call_tool=call_tool)


async def context_of(request: Request, token: str) -> dict[str, Any]:
    store = services_of(request).store
    access = await find_access_token(store, token)
    if access is None:  # revoked between the gate and here
        raise MCPError(types.INVALID_REQUEST, "The access token is no longer valid")
    user = await store.users.get(access.user_id) or {}
    found = await store.workspaces.list_for_user(access.user_id, only=access.workspace_id)
    workspace = found[0] if found else {"_id": access.workspace_id, "name": "", "role": ""}
    return {
        "userId": access.user_id,
        "email": user.get("email", ""),
        "workspace": {
            "id": workspace["_id"],
            "name": workspace.get("name", ""),
            "role": workspace.get("role", ""),
        },
        "scopes": access.scopes,
        "clientId": access.client_id,
        "tokenExpiresAt": access.expires_at,
    }


def unauthorized(base: str, error: str | None, description: str, scopes: list[str]) -> Response:
    """401 with the challenge MCP clients follow: where the protected-resource metadata is,
    and the scopes the refused call needs (so a client asks for the least it must)."""
    params = [f'resource_metadata="{resource_metadata_url(base)}"']
    if scopes:
        params.append(f'scope="{" ".join(scopes)}"')
    if error:
        params = [f'error="{error}"', f'error_description="{description}"', *params]
    challenge = "Bearer " + ", ".join(params)
    return JSONResponse(
        {"error": error or "invalid_token", "error_description": description},
        status_code=401,
        headers={"WWW-Authenticate": challenge},
    )


def protected_calls(parsed: Any) -> list[dict[str, Any]] | None:
    """The ``params`` of each protected call in a parsed JSON-RPC body (one message or a
    batch); None when the body holds none."""
    messages: list[Any] = parsed if isinstance(parsed, list) else [parsed]
    calls: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") in PROTECTED_METHODS:
            params = message.get("params")
            calls.append(params if isinstance(params, dict) else {})
    return calls or None


def parse_error(message: str) -> Response:
    """JSON-RPC's parse error (-32700) with HTTP 400, as REST and GraphQL answer a body that is
    not JSON or nests too deep."""
    return JSONResponse(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": message}},
        status_code=400,
    )


class McpEndpoint:
    """The ASGI endpoint of ``/mcp``: the token gate, then a stateless SDK transport."""

    def __init__(self, registry: Registry) -> None:
        self.server = build_server(registry)
        self.permissions = {tool_name(spec.slug): spec.permissions for spec in registry}

    def scopes_of(self, calls: list[dict[str, Any]]) -> list[str]:
        """The scopes the called tools need (the context tool needs none of its own)."""
        needed: list[str] = []
        for params in calls:
            for scope in self.permissions.get(str(params.get("name")), ()):
                if scope not in needed:
                    needed.append(scope)
        return needed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.method != "POST":
            response = JSONResponse(
                {"error": "stateless server: send JSON-RPC with POST"},
                status_code=405,
                headers={"Allow": "POST"},
            )
            await response(scope, receive, send)
            return
        body = await request.body()  # bounded by the app's body-size middleware
        try:
            # The shared guard: the standard parser recurses per level, so a body nested a
            # thousand deep would otherwise be a RecursionError (a 500) here or in the SDK.
            parsed = parse_json(body)
        except MalformedJson as exc:
            await parse_error(str(exc).replace("Malformed JSON body", "Parse error"))(
                scope, receive, send
            )
            return
        calls = protected_calls(parsed)
        if calls is not None:
            token = api_key_from_headers(request)
            base = str(request.app.state.settings.base_url)
            needed = self.scopes_of(calls)
            refusal = None
            access = await find_access_token(services_of(request).store, token) if token else None
            if not token:
                refusal = unauthorized(base, None, "tools/call needs an OAuth access token", needed)
            elif access is None:
                refusal = unauthorized(
                    base, "invalid_token", "the token is invalid or expired", needed
                )
            elif not resource_covers(access.resource, base + MCP_PATH):
                # RFC 8707: a token granted for another resource of this service (the REST
                # API, say) is not one for MCP.
                refusal = unauthorized(
                    base, "invalid_token", "the token was issued for another resource", needed
                )
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        manager = StreamableHTTPSessionManager(self.server, json_response=True, stateless=True)
        async with manager.run():
            await manager.handle_request(scope, replay(body, receive), send)


def mcp_routes(registry: Registry) -> list[Route]:
    return [Route(MCP_PATH, McpEndpoint(registry), methods=["GET", "POST", "DELETE"])]
