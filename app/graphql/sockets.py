"""The GraphQL WebSocket (graphql-transport-ws) with fincap's bounds and authorization.

Strawberry's handler, with what a hostile client taught us (issue 35):

- **Messages are bounded before they are parsed**: ``before_init_bytes`` until the socket has
  said who it is (``connection_init`` carries only credentials), ``message_bytes`` after; a
  longer message closes the socket with 1009 and is never parsed. (``fincap serve`` also tells
  uvicorn the larger bound, so the server never holds a longer message.) JSON nested deeper
  than the HTTP faces accept closes it with 4400 saying so (it raised ``RecursionError``).
- **Operations are bounded**: at most ``operations`` in flight on one socket, ``per_member``
  for one person over all their sockets and ``per_workspace`` in one workspace, per process;
  past one, the operation gets an ``error`` message naming it (429 ``too_many_requests``).
- **Each operation is authorized when it runs**: it gets a context of its own (a fresh graph
  session: its DataLoaders and authorizations live for that operation only), and every
  capability field goes through ``invoke()`` as over HTTP.
- **The socket follows its authorization**: it holds an ``AccessWatch`` (``stream_access``) and
  checks its credentials again from the store when a change may have touched them (at once for
  this process's changes, within a poll for another's) and every ``recheck`` seconds; when they
  fail, the socket closes with 4403 and the reason. (A subscription on it checks its own
  grant too, and ends with an error when the member's role or scopes changed.)
- **An operation refused before it runs says why** (an oversized document got a bare
  ``complete``): the ``error`` message of the protocol, with the message.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphql import GraphQLError
from starlette.websockets import WebSocketDisconnect, WebSocketState
from strawberry.asgi import ASGIWebSocketAdapter
from strawberry.http.exceptions import NonTextMessageReceived
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
    Operation,
    _OperationStreamClosed,  # the handler's own signal that an operation closed the socket
)
from strawberry.utils.aio import aclosing

from app.http.json_body import MalformedJson, parse_json
from resolvers.framework.context import Context
from resolvers.framework.errors import CapabilityError, TooManyRequests
from resolvers.framework.invoke import authorize
from resolvers.services.events.hub import hub_of
from resolvers.services.events.stream_access import next_check_in

if TYPE_CHECKING:
    from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
        ConnectionInitMessage,
        SubscribeMessage,
    )

# Where a WebSocket's credentials (from ``connection_init``) are kept in the GraphQL context,
# and the socket's authorized context (``GraphQLFace.on_ws_connect``).
CREDENTIALS_KEY = "credentials"
SOCKET_CONTEXT_KEY = "socket_context"
# A WebSocket close reason is at most 123 bytes.
MAX_REASON = 120


@dataclass(frozen=True)
class SocketLimits:
    """Bounds on GraphQL WebSockets (``FINCAP_WS_*`` settings)."""

    before_init_bytes: int = 16 * 1024
    message_bytes: int = 256 * 1024
    operations: int = 20
    per_member: int = 50
    per_workspace: int = 200


class SocketOperations:
    """The operations in flight on this process's sockets, per person and per workspace."""

    def __init__(self, limits: SocketLimits) -> None:
        self.limits = limits
        self.per_member: Counter[str] = Counter()
        self.per_workspace: Counter[str] = Counter()

    def take(self, ctx: Context, on_socket: int) -> None:
        """Count one more operation of ``ctx``'s person and workspace; ``TooManyRequests``
        (nothing counted) past a bound."""
        workspace = ctx.require_workspace()
        for held, most, whose in (
            (on_socket, self.limits.operations, "This socket"),
            (self.per_member[ctx.user_id], self.limits.per_member, "This member"),
            (self.per_workspace[workspace], self.limits.per_workspace, "This workspace"),
        ):
            if held >= most:
                raise TooManyRequests(
                    f"{whose} already has {held} GraphQL operations in flight over WebSockets "
                    f"(at most {most}); complete one first"
                )
        self.per_member[ctx.user_id] += 1
        self.per_workspace[workspace] += 1

    def give_back(self, ctx: Context) -> None:
        for counter, key in (
            (self.per_member, ctx.user_id),
            (self.per_workspace, ctx.require_workspace()),
        ):
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]


def reason_text(message: str) -> str:
    encoded = message.encode()
    if len(encoded) <= MAX_REASON:
        return message
    return encoded[: MAX_REASON - 3].decode(errors="ignore") + "..."


class BoundedSocketAdapter(ASGIWebSocketAdapter):
    """Reads each message's size before parsing it, and parses it as the HTTP faces do."""

    def __init__(self, view: Any, request: Any, response: Any) -> None:
        super().__init__(view, request, response)
        # Raised by the handler once the socket has said who it is.
        self.limit = getattr(view, "socket_limits", SocketLimits()).before_init_bytes

    async def iter_json(
        self, *, ignore_parsing_errors: bool = False
    ) -> AsyncGenerator[object, None]:
        try:
            while self.ws.application_state != WebSocketState.DISCONNECTED:
                text = await self.ws.receive_text()
                # A character is at most four bytes: only long messages pay the exact count.
                size = len(text) if len(text) * 4 <= self.limit else len(text.encode())
                if size > self.limit:
                    await self.close(
                        1009, f"Message of {size} bytes; at most {self.limit} bytes here"
                    )
                    return
                try:
                    yield parse_json(text)
                except MalformedJson as exc:
                    await self.close(4400, reason_text(str(exc)))
                    return
        except KeyError as exc:
            raise NonTextMessageReceived from exc
        except WebSocketDisconnect:
            pass


class _Operation(Operation[Any, Any]):
    """An operation with a context of its own."""

    __slots__ = ("context",)


class FincapTransportWS(BaseGraphQLTransportWSHandler[Any, Any]):
    """Strawberry's graphql-transport-ws handler with the bounds and checks above."""

    _watcher: asyncio.Task[None] | None = None

    @property
    def _limits(self) -> SocketLimits:
        limits: SocketLimits = self.view.socket_limits  # type: ignore[attr-defined]
        return limits

    @property
    def _operations(self) -> SocketOperations:
        operations: SocketOperations = self.view.socket_operations  # type: ignore[attr-defined]
        return operations

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        await super().handle_connection_init(message)
        ctx = self.context.get(SOCKET_CONTEXT_KEY)
        if self.connection_acknowledged and ctx is not None:
            if isinstance(self.websocket, BoundedSocketAdapter):
                self.websocket.limit = self._limits.message_bytes
            self._watcher = asyncio.create_task(self._follow_access(ctx))

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        ctx: Context | None = self.context.get(SOCKET_CONTEXT_KEY)
        if ctx is None or not self.connection_acknowledged or message["id"] in self.operations:
            await super().handle_subscribe(message)  # closes the socket as the protocol says
            return
        try:
            self._operations.take(ctx, len(self.operations))
        except TooManyRequests as exc:
            extensions = {"code": exc.code, "status": exc.status, "reason": exc.reason}
            error = GraphQLError(exc.message, extensions=extensions)
            await self.send_message(
                {"id": message["id"], "type": "error", "payload": [error.formatted]}
            )
            return
        payload = message["payload"]
        operation = _Operation(
            self,
            message["id"],
            payload["query"],
            payload.get("variables"),
            payload.get("operationName"),
        )
        operation.context = self.view.operation_context(self.context)  # type: ignore[attr-defined]
        operation.task = asyncio.create_task(self.run_operation(operation))
        # Given back when the task ends however it ends (cancelled before it started too).
        operation.task.add_done_callback(lambda _: self._operations.give_back(ctx))
        operation.task.add_done_callback(self._task_done)
        self.operations[message["id"]] = operation

    async def run_operation(self, operation: Operation[Any, Any]) -> None:
        """Strawberry's, with the operation's own context, and an ``error`` message (not a
        bare ``complete``) for an operation refused before it ran."""
        context = getattr(operation, "context", self.context)
        try:
            result_source = await self.schema.stream(
                operation.query,
                variable_values=operation.variables,
                context_value=context,
                root_value=self.root_value,
                operation_name=operation.operation_name,
            )
            async with aclosing(result_source):
                await self._send_result_stream(operation, result_source)
            await operation.send_operation_message({"id": operation.id, "type": "complete"})
        except _OperationStreamClosed:
            return
        except GraphQLError as error:  # a limit checked before parsing (the document's size)
            await operation.send_initial_errors([error])
        except Exception as error:
            await self.handle_task_exception(error)
            with contextlib.suppress(Exception):
                await operation.send_operation_message({"id": operation.id, "type": "complete"})
            self.operations.pop(operation.id, None)
            raise

    async def _follow_access(self, ctx: Context) -> None:
        """Check the socket's credentials again when a change may have touched them, and every
        ``recheck`` seconds; close the socket (4403, the reason) when they fail."""
        services = ctx.services
        credentials = self.context[CREDENTIALS_KEY]
        hub = hub_of(services)
        watch = hub.watch_access(ctx.principal, ctx.require_workspace())
        woken = asyncio.Event()
        watch.on_change(woken.set)
        try:
            while True:
                wait = next_check_in(ctx.principal, hub.limits.recheck)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), wait)
                woken.clear()
                watch.changed = False
                try:
                    await authorize(credentials, services, (), needs_workspace=True, fresh=True)
                except CapabilityError as exc:
                    await self.websocket.close(4403, reason_text(exc.message))
                    return
        finally:
            hub.unwatch(watch)

    async def shutdown(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watcher
        await super().shutdown()
