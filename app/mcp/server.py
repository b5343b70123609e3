"""The MCP face: ``POST /mcp`` (streamable HTTP, JSON-RPC 2.0), one tool per capability.

Tools are generated from the registry when the app is built (``app.mcp.tools``); a call goes
through the same ``invoke()`` as REST, with the connection's credential (an OAuth access token
or an API key, ``app.mcp.access``) and its workspace. Documents are also resources
(``app.mcp.resources``), and a few prompts walk an assistant through common tasks
(``app.mcp.prompts``). A connection may ask for fewer tools (``app.mcp.toolsets``), and a
credential sees only the tools its scopes allow.

Stateless (any API process answers any request, no session kept): each request gets a fresh
transport of the official SDK. ``initialize``, notifications, ``ping``, ``tools/list``, the
resource templates and the prompts need no credential; a request holding ``tools/call``,
``resources/list`` or ``resources/read`` without one is answered 401 with ``WWW-Authenticate``
pointing at the protected-resource metadata, so clients find the authorization server by
themselves. A credential that is sent must be valid, whatever the method.
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

from app.http.json_body import MalformedJson, parse_json
from app.http.request_context import replay, services_of
from app.mcp import identity
from app.mcp.access import (
    STATE_KEY,
    Caller,
    Refused,
    authenticate_request,
    caller_of,
    context_of,
    explain,
)
from app.mcp.errors import (
    INSUFFICIENT_SCOPE,
    SERVICE_UNAVAILABLE,
    missing_scope,
    outage_as_error,
    unavailable,
)
from app.mcp.prompts import PROMPTS, get_prompt
from app.mcp.resources import TEMPLATES, DocumentResources
from app.mcp.tools import CONTEXT_TOOL, Catalog, Entry, tool_name
from app.mcp.toolsets import BadSelection, Selection, selection_of
from app.oauth.metadata import MCP_PATH, resource_metadata_url
from resolvers.framework.errors import (
    CapabilityError,
    MissingScope,
    ServiceUnavailable,
    capability_error_of,
)
from resolvers.framework.invoke import invoke
from resolvers.framework.registry import Registry
from schema.approvals import APPROVAL_REQUIRED

PROTECTED_METHODS = frozenset({"tools/call", "resources/list", "resources/read"})
# What the gate found about the request's selection, beside the caller.
SELECTION_KEY = "mcp_selection"
# The tool whose reads the documents' resources are.
DOCUMENT_READER = "documents_get"
READ_DOCUMENTS = ("read_documents",)

CONTEXT = Entry(
    types.Tool(
        name=CONTEXT_TOOL,
        description="Call it first: who and where this connection acts. Returns userId, email, "
        "credential (oauth|api_key), workspace {id, name, role} (null: a key of several "
        "workspaces naming none), scopes, toolsets, moreToolsets (add with ?toolsets=), and "
        "(OAuth) clientId, tokenExpiresAt. Another workspace: authorize again (OAuth) or send "
        "X-Service-Org-Id (API key).",
        # No output schema: the description names every field (see app.mcp.tools).
        input_schema={"type": "object"},
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    toolset="workspaces",
    read_only=True,
    permissions=(),
)


def result_of(value: dict[str, Any]) -> types.CallToolResult:
    """Structured content plus the same JSON as a text block (for clients that read text)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=value
    )


# The capabilities that review a gated call, named as tools the way every tool is named.
APPROVAL_SLUGS = ("approvals.get", "approvals.approve", "approvals.reject")
APPROVAL_TOOLS = tuple(tool_name(slug) for slug in APPROVAL_SLUGS)


def approval_result(value: dict[str, Any]) -> types.CallToolResult:
    """A gated call's answer, naming the tools that review it (spec/decisions.md, approvals)."""
    value = {**value, "nextTools": list(APPROVAL_TOOLS)}
    request_id = value.get("approvalRequestId")
    show, run, drop = APPROVAL_TOOLS
    note = (
        "Nothing ran yet: this call needs approval by an owner or admin of the workspace. "
        f"Show it with {show}, run it with {run} or drop it with "
        f'{drop}, each with {{"approvalRequestId": "{request_id}"}}.'
    )
    result = result_of(value)
    result.content.append(types.TextContent(type="text", text=note))
    return result


def failed(exc: CapabilityError, caller: Caller) -> types.CallToolResult:
    """A capability's failure as a tool error: the message as text (saying how to fix the
    call), and the REST envelope's error (status, message, ``reason``) as structured content
    for clients that branch on it."""
    message = explain(exc, caller)
    status, reason = (exc.status, exc.reason) if exc.exposed else (500, CapabilityError.reason)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        structured_content={
            "error": {"errorCode": status, "errorMessage": message, "reason": reason}
        },
        is_error=True,
    )


def selection_in(request: Request) -> Selection:
    selection: Selection = request.scope.get("state", {}).get(SELECTION_KEY, Selection())
    return selection


def offered(request: Request, entry: Entry) -> bool:
    """Whether the connection is offered ``entry``: selected, and allowed by its scopes."""
    caller = caller_of(request)
    return selection_in(request).admits(entry) and (
        caller is None or caller.principal.allows(entry.permissions)
    )


def signed_in(request: Request) -> Caller:
    caller = caller_of(request)
    if caller is None:  # the gate answers 401 first; a guard, not a path
        raise MCPError(types.INVALID_REQUEST, "This method needs a credential")
    return caller


def build_server(registry: Registry) -> tuple[Server[Any], Catalog]:
    """The SDK server with fincap's tools, resources and prompts (built once per app)."""
    catalog = Catalog(registry, [CONTEXT])
    if any(spec.approval for spec in registry):
        # A gated call's answer names these tools; they must be tools of this server.
        missing = [slug for slug in APPROVAL_SLUGS if registry.get(slug) is None]
        if missing:
            raise ValueError(f"gated capabilities, but no {', '.join(missing)} to review them")
    documents = DocumentResources(registry) if registry.get("documents.get") else None

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[entry.tool for entry in catalog if offered(ctx.request, entry)]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        request: Request = ctx.request
        entry = catalog.get(params.name)
        if entry is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        selection = selection_in(request)
        if not selection.admits(entry):
            raise MCPError(types.INVALID_PARAMS, selection.refusal(entry))
        caller = signed_in(request)
        if entry.spec is None:
            try:
                context = await context_of(request, caller)
                return result_of({**context, **selection.described(catalog.toolsets)})
            except ServiceUnavailable:
                raise
            except CapabilityError as exc:
                return failed(exc, caller)
        try:
            result = await invoke(
                registry,
                entry.spec.slug,
                dict(params.arguments or {}),
                caller.credentials(),
                services_of(request),
            )
        except MissingScope as exc:
            raise missing_scope(exc) from None
        except ServiceUnavailable:
            raise  # outage_as_error: a JSON-RPC error, not the tool's failure
        except CapabilityError as exc:
            return failed(exc, caller)
        value = result.model_dump(mode="json", exclude_unset=True)
        if value.get("status") == APPROVAL_REQUIRED:
            return approval_result(value)
        return result_of(value)

    # The documents' resources are documents_get's reads: a connection is offered them when it
    # is offered that tool (its toolsets, read-only, its scopes), like any tool.
    reader = catalog.get(DOCUMENT_READER)

    def resources_offered(request: Request) -> bool:
        return documents is not None and reader is not None and offered(request, reader)

    async def list_templates(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        shown = TEMPLATES if resources_offered(ctx.request) else []
        return types.ListResourceTemplatesResult(resource_templates=shown)

    async def list_resources(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        if documents is None or not resources_offered(ctx.request):
            return types.ListResourcesResult(resources=[])
        cursor = params.cursor if params is not None else None
        return await documents.list(ctx.request, signed_in(ctx.request), cursor)

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if documents is None or reader is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown resource {params.uri!r}")
        selection = selection_in(ctx.request)
        if not selection.admits(reader):
            raise MCPError(
                types.INVALID_PARAMS,
                f"Resources are read as {DOCUMENT_READER}: " + selection.refusal(reader),
            )
        return await documents.read(ctx.request, signed_in(ctx.request), str(params.uri))

    def missing_tools(request: Request, tools: tuple[str, ...]) -> list[str]:
        return [name for name in tools if not ((e := catalog.get(name)) and offered(request, e))]

    def prompt_offered(request: Request, tools: tuple[str, ...]) -> bool:
        return not missing_tools(request, tools)

    async def list_prompts(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[spec.prompt for spec in PROMPTS if prompt_offered(ctx.request, spec.tools)]
        )

    async def get_prompt_text(
        ctx: Any, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        spec = next((spec for spec in PROMPTS if spec.prompt.name == params.name), None)
        missing = missing_tools(ctx.request, spec.tools) if spec is not None else []
        if missing:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Prompt {params.name} walks through {', '.join(missing)}, which this connection "
                "is not offered (its toolsets, read-only or scopes); connect with them to use it",
            )
        today = services_of(ctx.request).clock().date()
        return get_prompt(params.name, params.arguments, today)

    server: Server[Any] = Server(
        identity.NAME,
        version=identity.server_version(),
        title=identity.TITLE,
        description=identity.DESCRIPTION,
        instructions=identity.INSTRUCTIONS,
        on_list_tools=list_tools,
        # A store outage met by a tool or a resource is a JSON-RPC error saying so.
        on_call_tool=outage_as_error(call_tool),
        on_list_resource_templates=list_templates,
        on_list_resources=outage_as_error(list_resources),
        on_read_resource=outage_as_error(read_resource),
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt_text,
    )
    return server, catalog


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


def messages_of(parsed: Any) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a parsed body (one message or a batch)."""
    messages: list[Any] = parsed if isinstance(parsed, list) else [parsed]
    return [message for message in messages if isinstance(message, dict)]


def protected_calls(parsed: Any) -> list[tuple[str, dict[str, Any]]] | None:
    """The method and ``params`` of each protected request in a parsed JSON-RPC body; None
    when the body holds none."""
    calls: list[tuple[str, dict[str, Any]]] = []
    for message in messages_of(parsed):
        if message.get("method") in PROTECTED_METHODS:
            params = message.get("params")
            calls.append((str(message["method"]), params if isinstance(params, dict) else {}))
    return calls or None


def rpc_error(
    status: int, code: int, message: str, parsed: Any = None, data: Any = None
) -> Response:
    """A JSON-RPC error answered by the gate itself, with the request's id when it has one."""
    found = messages_of(parsed)
    request_id = found[0].get("id") if len(found) == 1 and not isinstance(parsed, list) else None
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return JSONResponse({"jsonrpc": "2.0", "id": request_id, "error": error}, status_code=status)


def base_of(request: Request) -> str:
    """The service's public address (its OAuth metadata and token audience use it)."""
    return str(request.app.state.settings.base_url)


class McpEndpoint:
    """The ASGI endpoint of ``/mcp``: the selection, the credential gate, then a stateless SDK
    transport."""

    def __init__(self, registry: Registry) -> None:
        # The tool list is the registry's, made once per registry (``Registry.derived``).
        self.server, self.catalog = registry.derived("mcp server", lambda: build_server(registry))

    def scopes_of(self, calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
        """The scopes the refused calls need (resources: read_documents; the context tool
        needs none of its own)."""
        needed: list[str] = []
        for method, params in calls:
            if method == "tools/call":
                entry = self.catalog.get(str(params.get("name")))
                scopes = entry.permissions if entry is not None else ()
            else:
                scopes = READ_DOCUMENTS
            needed.extend(scope for scope in scopes if scope not in needed)
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
            await rpc_error(400, types.PARSE_ERROR, f"Parse error: {exc.detail}")(
                scope, receive, send
            )
            return
        try:
            selection = selection_of(request, self.catalog.toolsets)
        except BadSelection as exc:
            await rpc_error(400, types.INVALID_PARAMS, str(exc), parsed)(scope, receive, send)
            return
        calls = protected_calls(parsed)
        try:
            caller = await authenticate_request(request)
        except Refused as exc:
            refusal = unauthorized(
                base_of(request), "invalid_token", exc.reason, self.scopes_of(calls or [])
            )
            await refusal(scope, receive, send)
            return
        except Exception as exc:
            # The credential cannot be checked while the store is away: 503, as REST says it.
            error = capability_error_of(exc)
            if not isinstance(error, ServiceUnavailable):
                raise
            busy = rpc_error(
                503, SERVICE_UNAVAILABLE, error.message, parsed, unavailable(error).error.data
            )
            busy.headers["Retry-After"] = str(error.retry_after)
            await busy(scope, receive, send)
            return
        if calls is not None and caller is None:
            description = f"{calls[0][0]} needs an OAuth access token (or an API key)"
            refusal = unauthorized(base_of(request), None, description, self.scopes_of(calls))
            await refusal(scope, receive, send)
            return
        state = scope.setdefault("state", {})
        state[STATE_KEY], state[SELECTION_KEY] = caller, selection
        manager = StreamableHTTPSessionManager(self.server, json_response=True, stateless=True)
        async with manager.run():
            await manager.handle_request(scope, replay(body, receive), send)


def mcp_routes(registry: Registry) -> list[Route]:
    return [Route(MCP_PATH, McpEndpoint(registry), methods=["GET", "POST", "DELETE"])]


__all__ = ["INSUFFICIENT_SCOPE", "McpEndpoint", "approval_result", "mcp_routes", "tool_name"]
