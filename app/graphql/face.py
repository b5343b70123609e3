"""The GraphQL face: ``/v1/graphql`` (POST JSON, GET for queries, GraphiQL for browsers).

The schema is generated from the registry (``app.graphql.builder.build_schema``); each field calls
the same ``invoke()`` as REST, with the same credentials (every API-key form, ``X-Service-Org-Id``).
Capability errors become ``errors[].extensions`` ``{code, status, reason}``; anything unexpected
shows only "Internal server error".

GraphQL over HTTP (graphql-http's audit passes every MUST and SHOULD): the response media type
follows ``Accept`` (``application/graphql-response+json`` or ``application/json``, the default);
a request error (bad JSON, syntax, validation, limits, variables) omits ``data`` and answers 400
under ``application/graphql-response+json`` and 200 under ``application/json``, as the spec asks.
Malformed HTTP requests answer with a GraphQL-shaped JSON error, never plain text.

Subscriptions (``documentEvents``) run over a WebSocket at the same path, graphql-transport-ws
only: the credentials travel in the ``connection_init`` payload (``Authorization: Bearer …`` or
``apiKey``, and ``X-Service-Org-Id``), since browsers cannot set a WebSocket's headers; a
connection whose credentials fail is closed with 4403. Pages of other origins may not open one
(strawberry's origin check).

A POST of JSON whose document the schema keeps parsed and valid, from a caller that
authenticates, runs the short way (``app.graphql.kept_requests``): graphql-core's executor on
the kept document, past strawberry's per-request machinery, with the same answers.

Browsers asking for HTML get fincap's explorer (``app.graphql.explorer``: GraphiQL, vendored,
served from here, so it works offline).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Mapping
from datetime import timedelta
from typing import Any

from cross_web import HTTPException
from graphql import GraphQLError, OperationType, get_operation_ast, parse
from pydantic import BaseModel
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route, WebSocketRoute
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.http import GraphQLHTTPResponse
from strawberry.schema.exceptions import InvalidOperationTypeError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types import ExecutionResult
from strawberry.types.unset import UNSET

from app.graphql.builder import build_schema
from app.graphql.declarations import CapabilityLike, Graph, Link, LinkArgument, Stream
from app.graphql.document_cache import KEEP_KEY
from app.graphql.explorer import PATH, explorer_routes
from app.graphql.graph import CONTEXT_KEY, GraphSession, document_graph
from app.graphql.kept_requests import KeptOperation, execute_kept, kept_operation
from app.graphql.limits import Limits, MaskUnexpectedErrors
from app.graphql.listing import document_inputs, listing_graph
from app.graphql.listing import translated_filter as typed_where
from app.graphql.nested import nested_graph
from app.graphql.nodes import node_graph
from app.graphql.read_budget import AnonymousBudget, ReadBudget
from app.graphql.selection import listed_fields, lists_documents
from app.graphql.sockets import (
    CREDENTIALS_KEY,
    SOCKET_CONTEXT_KEY,
    BoundedSocketAdapter,
    FincapTransportWS,
    SocketLimits,
    SocketOperations,
)
from app.graphql.transactions import transaction_graph
from app.http.json_body import MalformedJson, parse_json
from app.http.request_context import client_address, credentials_of, services_of
from app.http.security_headers import PLAIN_CSP, page_headers
from resolvers.framework.auth import authenticate
from resolvers.framework.context import Credentials, Principal
from resolvers.framework.errors import (
    STORE_RETRY_AFTER_S,
    CapabilityError,
    PayloadTooLarge,
    ServiceUnavailable,
    reason_for_status,
    store_errors,
)
from resolvers.framework.invoke import authorize, invoke
from resolvers.framework.registry import Registry
from resolvers.services.events.event_filters import event_filter
from resolvers.services.events.hub import open_stream, watch
from schema.documents import Document
from schema.events import DocumentEvent
from schema.value_meanings import meaning_of

GRAPHQL_RESPONSE_JSON = "application/graphql-response+json"
JSON_MEDIA = "application/json"
HTTP_CODES = {
    400: "BAD_REQUEST",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
    429: "TOO_MANY_REQUESTS",
}


def negotiate(accept: str) -> str:
    """The response media type for an ``Accept`` header (``application/json`` by default).

    The higher ``q`` wins, then the earlier entry; ``*/*``, ``application/*`` and an absent or
    unsupported header mean ``application/json`` (the spec's choice for legacy clients).
    """
    candidates: list[tuple[float, int, str]] = []
    for position, item in enumerate(accept.split(",")):
        media, *params = (part.strip().lower() for part in item.split(";"))
        if media == GRAPHQL_RESPONSE_JSON:
            chosen = GRAPHQL_RESPONSE_JSON
        elif media in (JSON_MEDIA, "*/*", "application/*"):
            chosen = JSON_MEDIA
        else:
            continue
        q = 1.0
        for param in params:
            name, _, value = param.partition("=")
            if name.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if q > 0:
            candidates.append((q, -position, chosen))
    return max(candidates)[2] if candidates else JSON_MEDIA


def is_request_error(result: ExecutionResult) -> bool:
    """Whether the operation failed before execution (syntax, validation, limits, variables).

    Field errors always carry a ``path``; errors of the request as a whole never do.
    """
    errors = result.errors or []
    return result.data is None and bool(errors) and all(error.path is None for error in errors)


class GraphQLFace(GraphQL):
    """Strawberry's ASGI view with fincap's HTTP behaviour (negotiation, errors, body limit)
    and its WebSocket bounds and checks (``app.graphql.sockets``)."""

    graphql_transport_ws_handler_class = FincapTransportWS
    websocket_adapter_class = BoundedSocketAdapter  # type: ignore[assignment]
    # Counted by ``SocketOperations`` instead (per socket, member and workspace).
    max_subscriptions_per_connection = None

    def __init__(
        self,
        schema: Any,
        ide_html: str,
        registry: Registry,
        ide_csp: str = PLAIN_CSP,
        socket_limits: SocketLimits | None = None,
        read_budget: ReadBudget | None = None,
        anonymous_budget: AnonymousBudget | None = None,
    ) -> None:
        super().__init__(
            schema,
            graphql_ide="graphiql",
            allow_queries_via_get=True,
            subscription_protocols=(GRAPHQL_TRANSPORT_WS_PROTOCOL,),
            # A client that opens a socket and never says who it is holds it this long.
            connection_init_wait_timeout=timedelta(seconds=10),
        )
        self._ide_html = ide_html
        self._ide_headers = page_headers(ide_csp)
        self._registry = registry
        self.socket_limits = socket_limits or SocketLimits()
        self.socket_operations = SocketOperations(self.socket_limits)
        self.read_budget = read_budget or ReadBudget()
        self.anonymous_budget = anonymous_budget or AnonymousBudget()
        self._mask = MaskUnexpectedErrors()

    async def get_context(  # type: ignore[override]  # the context is a dict
        self, request: Request, response: Any
    ) -> dict[str, Any]:
        # A fresh graph session per request: its DataLoaders cache only within the request.
        credentials = credentials_of(request)
        services = services_of(request)
        principal = await principal_of(credentials, services)
        session = GraphSession(self._registry, credentials, services, principal)
        if principal is not None and request.scope["type"] != "websocket":
            # Counted per key: a key that spent its read budget waits, before anything runs.
            wait = self.read_budget.wait_for(principal.key_id)
            if wait is not None:
                request.state.graphql_retry_after = wait
                raise HTTPException(429, self.read_budget.refusal(wait))
            request.state.graphql_read_key = principal.key_id
        return {
            "request": request,
            "response": response,
            CONTEXT_KEY: session,
            CREDENTIALS_KEY: credentials,
            # Only a request that authenticates may fill the document cache (a stranger's
            # unique documents would fill the process's memory).
            KEEP_KEY: request.scope["type"] == "websocket" or principal is not None,
        }

    async def on_ws_connect(self, context: dict[str, Any]) -> Any:  # type: ignore[override]
        """A WebSocket's ``connection_init``: its payload carries the credentials (the same
        forms as headers). Authenticated here, from the store, or the socket closes with 4403;
        each operation is authorized when it runs (``operation_context``)."""
        request = context["request"]
        credentials = credentials_from_params(context.get("connection_params") or {}, request)
        services = services_of(request)
        try:
            ctx = await authorize(credentials, services, (), needs_workspace=True, fresh=True)
        except CapabilityError as exc:
            raise ConnectionRejectionError({"message": exc.message, "reason": exc.reason}) from None
        context[CREDENTIALS_KEY] = credentials
        context[SOCKET_CONTEXT_KEY] = ctx
        return UNSET

    def operation_context(self, socket_context: dict[str, Any]) -> dict[str, Any]:
        """The context of one operation on a socket: the socket's, with a graph session of its
        own, so that nothing it authorized or loaded outlives the operation."""
        credentials: Credentials = socket_context[CREDENTIALS_KEY]
        services = services_of(socket_context["request"])
        session = GraphSession(self._registry, credentials, services)
        return {**socket_context, CONTEXT_KEY: session}

    @property
    def graphql_ide_html(self) -> str:
        return self._ide_html

    async def render_graphql_ide(self, request: Request) -> Response:
        return HTMLResponse(self._ide_html, headers=self._ide_headers)

    async def execute_single(self, *args: Any, **kwargs: Any) -> ExecutionResult:
        request_data = kwargs.get("request_data", args[5] if len(args) > 5 else None)
        if request_data is not None and is_subscription(request_data):
            # Over HTTP a subscription would run as a query and answer a null error.
            raise HTTPException(400, SUBSCRIPTIONS_OVER_WEBSOCKET)
        context = kwargs.get("context", args[3] if len(args) > 3 else None)
        if request_data is not None and isinstance(context, dict) and not context[KEEP_KEY]:
            # No credential: the document is parsed for nothing it may read, so the client's
            # address pays for its size first (``AnonymousBudget``).
            request = context["request"]
            wait = self.anonymous_budget.take(client_address(request), request_data.query or "")
            if wait is not None:
                request.state.graphql_retry_after = wait
                raise HTTPException(429, self.anonymous_budget.refusal(wait))
        try:
            result: ExecutionResult = await super().execute_single(*args, **kwargs)
        except HTTPException as exc:
            # GraphQL over HTTP: a mutation sent with GET is 405 Method Not Allowed (strawberry
            # says 400).
            if isinstance(exc.__cause__, InvalidOperationTypeError):
                raise HTTPException(405, exc.reason) from exc
            raise
        return result

    async def process_result(
        self, request: Request, result: ExecutionResult
    ) -> GraphQLHTTPResponse:
        response = await super().process_result(request, result)
        if is_request_error(result):
            # No execution happened, so there is no data entry at all (GraphQL spec, 7.1.2).
            response.pop("data", None)
            request.state.graphql_request_error = True
        request.state.graphql_retry_after = unavailable_for(result)
        key = getattr(request.state, "graphql_read_key", None)
        if key is not None and result.data is not None:
            request.state.graphql_cost = self.read_budget.charge(key, result.data)
        return response

    async def run(  # type: ignore[override]
        self, request: Request, context: Any = UNSET, root_value: Any = UNSET
    ) -> Response:
        if request.scope["type"] == "websocket":  # strawberry's WebSocket handling
            return await super().run(request, context, root_value)  # type: ignore[no-any-return]
        media = negotiate(request.headers.get("accept", ""))
        try:
            response: Response = await self._answer(request, context, root_value)
        except PayloadTooLarge as exc:  # raised while the body streams in (app.http.body_limit)
            return self._error_response(exc.status, exc.message, media)
        except HTTPException as exc:
            response = self._error_response(exc.status_code, exc.reason, media)
            if exc.status_code == 429:
                response.headers["retry-after"] = str(request.state.graphql_retry_after)
            if exc.status_code == 405:
                response.headers["allow"] = "POST" if request.method == "GET" else "GET, POST"
            return response
        cost = getattr(request.state, "graphql_cost", None)
        if cost is not None:
            response.headers.update(cost.headers())
        if response.media_type == JSON_MEDIA:
            response.headers["content-type"] = f"{media}; charset=utf-8"
            if media == GRAPHQL_RESPONSE_JSON and getattr(
                request.state, "graphql_request_error", False
            ):
                response.status_code = 400
            retry_after = getattr(request.state, "graphql_retry_after", None)
            if retry_after is not None:
                # The store is away and nothing could be answered: an HTTP client, a proxy
                # or a load balancer sees the 503 and its Retry-After without reading the body.
                response.status_code = 503
                response.headers["retry-after"] = str(retry_after)
        return response

    async def _answer(self, request: Request, context: Any, root_value: Any) -> Response:
        """A POST whose document is kept and valid the short way (``app.graphql.kept_requests``),
        anything else through strawberry's view; both with the context made here first, as
        strawberry makes it (before the body is read: a spent read budget answers 429 first)."""
        if request.method != "POST" or context is not UNSET or root_value is not UNSET:
            return await super().run(request, context, root_value)  # type: ignore[no-any-return]
        sub_response = await self.get_sub_response(request)
        context = await self.get_context(request, response=sub_response)
        kept = await self._kept_operation(request, context)
        if kept is None:
            return await super().run(request, context, root_value)  # type: ignore[no-any-return]
        result = await execute_kept(self.schema, kept, context, self._mask)
        return self.create_response(await self.process_result(request, result), sub_response)

    async def _kept_operation(
        self, request: Request, context: dict[str, Any]
    ) -> KeptOperation | None:
        """The operation a POST runs when the short way may answer it, else None."""
        documents = getattr(self.schema, "documents", None)
        if documents is None or not context[KEEP_KEY]:
            return None  # anonymous: ``execute_single`` charges the document's size first
        # The media type only (strawberry's own parser goes through the ``email`` package,
        # a twentieth of a kept ``node(id:)``'s time); its test is strawberry's.
        content_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
        if "application/json" not in content_type:
            return None  # multipart, or a type strawberry refuses with its 400
        return kept_operation(documents, self.parse_json(await request.body()))

    def parse_json(self, data: str | bytes) -> Any:
        # Bodies and the ``variables``/``extensions`` query parameters: one JSON reader for
        # every face, so 100,000 nested brackets are a GraphQL-shaped 400 like any bad JSON.
        try:
            return parse_json(data)
        except MalformedJson as exc:
            raise HTTPException(400, str(exc)) from None

    def _error_response(self, status: int, message: str, media: str) -> Response:
        code = HTTP_CODES.get(status, "BAD_REQUEST")
        extensions = {"code": code, "status": status, "reason": reason_for_status(status)}
        body = {"errors": [{"message": message, "extensions": extensions}]}
        return Response(
            json.dumps(body, separators=(",", ":")),
            status_code=status,
            media_type=f"{media}; charset=utf-8",
        )


SUBSCRIPTIONS_OVER_WEBSOCKET = (
    "subscriptions are served over a WebSocket at this path (graphql-transport-ws); "
    "without one, read GET /v1/events (Server-Sent Events)"
)


def is_subscription(request_data: Any) -> bool:
    """Whether the operation a request runs is a subscription (parsed only when the text can
    hold one: queries and mutations pay a substring check)."""
    query = getattr(request_data, "query", None)
    if not isinstance(query, str) or "subscription" not in query:
        return False
    try:
        operation = get_operation_ast(parse(query), getattr(request_data, "operation_name", None))
    except GraphQLError:
        return False  # the execution reports the syntax error as it always does
    return operation is not None and operation.operation == OperationType.SUBSCRIPTION


async def principal_of(credentials: Credentials, services: Any) -> Principal | None:
    """The live key or token ``credentials`` name (through the auth cache); None for none,
    and also while the store cannot say: the execution then answers the outage itself."""
    if not credentials.api_key:
        return None
    try:
        with store_errors():
            return await authenticate(services.store, credentials, services.auth_cache)
    except CapabilityError:
        return None


def unavailable_for(result: ExecutionResult) -> int | None:
    """``Retry-After`` seconds when the store's outage left the result with no data at all
    (every field that failed failed with 503); None otherwise (a field that answered is
    data worth a 200, its failed neighbours say 503 in their ``extensions``)."""
    errors = result.errors or []
    codes = [(error.extensions or {}).get("code") for error in errors]
    if not errors or any(code != ServiceUnavailable.code for code in codes):
        return None
    data = result.data
    if data is not None and any(value is not None for value in data.values()):
        return None
    retry = [(error.extensions or {}).get("retryAfter") for error in errors]
    return max((r for r in retry if isinstance(r, int)), default=STORE_RETRY_AFTER_S)


def as_graphql_error(exc: CapabilityError) -> Exception:
    """A capability error as GraphQL shows it (``extensions.code``/``status``/``reason``); 5xx
    unchanged, so that the schema masks it as "Internal server error" and logs it."""
    if not exc.exposed:
        return exc
    extensions: dict[str, Any] = {"code": exc.code, "status": exc.status, "reason": exc.reason}
    if exc.retry_after is not None:
        extensions["retryAfter"] = exc.retry_after
    return GraphQLError(exc.message, extensions=extensions)


def capability_executor(registry: Registry) -> Any:
    """The ``execute`` callable of the schema: ``invoke()`` with the request's credentials
    (and, for a capability that lists documents, the fields the query selects of them)."""

    async def execute(spec: CapabilityLike, arguments: dict[str, Any], info: Any) -> BaseModel:
        request: Request = info.context["request"]
        listed = lists_documents(spec.output, Document)
        try:
            return await invoke(
                registry,
                spec.slug,
                arguments,
                info.context[CREDENTIALS_KEY],
                services_of(request),
                selected_fields=listed_fields(info, Document) if listed else None,
            )
        except CapabilityError as exc:
            raise as_graphql_error(exc) from None

    return execute


def with_capability_errors(graph: Graph) -> Graph:
    """``graph`` with every link's capability errors shown as capability fields show them."""

    def wrap(link: Link) -> Link:
        async def resolve(root: Any, info: Any, arguments: dict[str, Any] | None) -> Any:
            try:
                return await link.resolve(root, info, arguments)
            except CapabilityError as exc:
                raise as_graphql_error(exc) from None

        return dataclasses.replace(link, resolve=resolve)

    return dataclasses.replace(graph, links=tuple(wrap(link) for link in graph.links))


def credentials_from_params(params: Mapping[str, Any], request: Any) -> Credentials:
    """A WebSocket's credentials from its ``connection_init`` payload: the header forms
    (``Authorization: Bearer``, ``X-Service-API-Key``, ``x-api-key``; any case) or ``apiKey``,
    and ``X-Service-Org-Id`` (or ``orgId``)."""
    fields = {str(name).lower(): value for name, value in params.items() if isinstance(value, str)}
    scheme, _, token = fields.get("authorization", "").partition(" ")
    bearer = token.strip() if scheme.lower() == "bearer" else ""
    key = (
        bearer or fields.get("x-service-api-key") or fields.get("x-api-key") or fields.get("apikey")
    )
    org = fields.get("x-service-org-id") or fields.get("orgid")
    return Credentials(
        api_key=key or None,
        org_id=org or None,
        request_id=request.scope.get("state", {}).get("request_id", ""),
    )


async def document_events(
    info: Any, after: str | None, arguments: dict[str, Any]
) -> AsyncIterator[BaseModel]:
    """``documentEvents``: the caller's workspace's document events (``open_stream``), only
    those of documents that match ``filter`` when one is given (``event_filters``)."""
    credentials: Credentials = info.context[CREDENTIALS_KEY]
    services = services_of(info.context["request"])
    try:
        translated = typed_where(arguments.get("filter"))
        accepts = event_filter(translated.where, translated.locate)
        _, subscription = await open_stream(credentials, services, after, accepts)
    except CapabilityError as exc:
        raise as_graphql_error(exc) from None
    try:
        async for event in watch(subscription, credentials, services):
            if event is not None:  # a heartbeat: graphql-transport-ws has its own pings
                yield event
    except CapabilityError as exc:
        # The subscription's authorization ended or changed, or the store went away: its last
        # message says why.
        raise as_graphql_error(exc) from None


DOCUMENT_EVENTS = Stream(
    name="documentEvents",
    returns=DocumentEvent,
    subscribe=document_events,
    description="What happens to the workspace's documents, as it happens: created, processed "
    "(with the extracted fields), updated, archived, unarchived; `lagged` when this subscriber "
    "fell behind (resume after its id). Needs read_documents.",
    after_description="Resume after this event id (events are kept 24 hours)",
    arguments=(
        LinkArgument(
            "filter",
            document_inputs().filter,
            "Only events of documents that match, as read when the event is delivered (the "
            "document it carries); an event of a document that no longer exists, and `lagged`, "
            "always pass. Checked like documentsConnection's filter.",
        ),
    ),
)


def service_schema(registry: Registry, limits: Limits | None = None) -> Any:
    """The service's schema: every capability, the document graph, and the live events
    (where the registry has documents)."""
    graph = with_capability_errors(
        node_graph(
            registry,
            transaction_graph(
                registry,
                nested_graph(registry, listing_graph(registry, document_graph(registry))),
            ),
        )
    )
    streams = [DOCUMENT_EVENTS] if registry.get("documents.get") is not None else []
    return build_schema(registry, capability_executor(registry), limits, graph, meaning_of, streams)


def graphql_routes(
    registry: Registry,
    limits: Limits | None = None,
    socket_limits: SocketLimits | None = None,
    read_budget: ReadBudget | None = None,
    anonymous_budget: AnonymousBudget | None = None,
) -> list[Route | WebSocketRoute]:
    """The GraphQL endpoint, the explorer's files and ``/graphql``, for one frozen registry."""
    # One schema per registry and limits in a process (``Registry.derived``): the apps that
    # share them share its kept documents too, which are valid for any app of that schema.
    schema = registry.derived(("graphql schema", limits), lambda: service_schema(registry, limits))
    page, page_csp, explorer = explorer_routes()
    face = GraphQLFace(
        schema, page, registry, page_csp, socket_limits, read_budget, anonymous_budget
    )
    return [
        # The view is an ASGI app, so Route passes every method to it and a PUT gets GraphQL's
        # own 405 with ``Allow`` (a function endpoint would be limited to GET).
        Route(PATH, face),
        WebSocketRoute(PATH, face),
        *explorer,
    ]
