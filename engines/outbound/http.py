"""HTTP through the outbound policy: an ``httpx`` transport whose connections dial checked
addresses.

httpcore opens every connection through a *network backend* (``connect_tcp(host, port)``) and
then starts TLS on it with the request's host as the server name. ``PolicyBackend`` is that
backend: it asks the policy for the checked addresses of the host and dials one of them with
httpcore's own AnyIO backend, so the TCP connection goes to the address that was checked while
TLS (SNI and certificate check) and the ``Host`` header still name the host. ``PolicyTransport``
is httpx's transport over an httpcore pool with that backend; every transport failure leaves
it as one ``httpx.ConnectError`` reading ``could not connect to <host>:<port>`` (details in
the server log), during the request or while the body streams.
"""

from __future__ import annotations

import logging
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any, NoReturn, Protocol

import anyio
import httpcore
import httpx

from engines.outbound.refusal import Unreachable, refused, unreachable_text

log = logging.getLogger("fincap.outbound")
DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)

# Everything httpcore raises for a connection that failed, timed out or spoke nonsense.
TRANSPORT_ERRORS = (
    httpcore.TimeoutException,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.ProxyError,
    httpcore.UnsupportedProtocol,
    OSError,  # Unreachable (the policy's refusal), and the resolution's time running out
)


class CheckedAddresses(Protocol):
    """What the transport asks of the policy (``policy.OutboundPolicy``, which makes the clients
    here and so is not imported by this module): the addresses of a host it may dial."""

    async def checked_addresses_async(self, host: str, port: int) -> list[str]: ...


class PolicyBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, dialing only addresses the policy checked."""

    def __init__(self, policy: CheckedAddresses) -> None:
        self._policy = policy
        self._dial = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        # The connect timeout covers the resolution too: a slow resolver is a slow connect.
        with anyio.fail_after(timeout):
            addresses = await self._policy.checked_addresses_async(host, port)
            failure: Exception | None = None
            for address in addresses:
                try:
                    return await self._dial.connect_tcp(
                        address, port, timeout, local_address, socket_options
                    )
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                    failure = exc
        raise refused(host, port, f"connection failed: {failure!r}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise Unreachable(path, 0)  # never asked for: the pool is made without ``uds``

    async def sleep(self, seconds: float) -> None:
        await self._dial.sleep(seconds)


class PolicyTransport(httpx.AsyncBaseTransport):
    """An ``httpx`` transport over an httpcore pool whose backend is ``PolicyBackend``."""

    def __init__(
        self,
        policy: CheckedAddresses,
        *,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits = DEFAULT_LIMITS,
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=PolicyBackend(policy),
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        url = request.url
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=url.raw_scheme, host=url.raw_host, port=url.port, target=url.raw_path
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            answer = await self._pool.handle_async_request(core)
        except TRANSPORT_ERRORS as exc:
            _fail(request, exc)
        assert isinstance(answer.stream, AsyncIterable)
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_GuardedStream(answer.stream, request),
            extensions=answer.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _GuardedStream(httpx.AsyncByteStream):
    """A response body whose transport failures read like any other (uniform text)."""

    def __init__(self, stream: AsyncIterable[bytes], request: httpx.Request) -> None:
        self._stream = stream
        self._request = request

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for part in self._stream:
                yield part
        except TRANSPORT_ERRORS as exc:
            _fail(self._request, exc)

    async def aclose(self) -> None:
        closer = getattr(self._stream, "aclose", None)
        if closer is not None:
            await closer()


def _port(url: httpx.URL) -> int:
    return url.port or (443 if url.scheme == "https" else 80)


def _fail(request: httpx.Request, exc: Exception) -> NoReturn:
    host, port = request.url.host, _port(request.url)
    if not isinstance(exc, Unreachable):  # the policy logged its own refusals already
        log.warning(
            "outbound connection refused or failed",
            extra={"host": host, "port": port, "reason": repr(exc)},
        )
    raise httpx.ConnectError(unreachable_text(host, port), request=request) from None


def policy_client(
    policy: CheckedAddresses,
    *,
    timeout: float | httpx.Timeout,
    verify: ssl.SSLContext | bool = True,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` over ``PolicyTransport``: no proxies from the environment
    (a proxy would resolve names itself, out of the policy's reach), redirects not followed."""
    return httpx.AsyncClient(
        transport=PolicyTransport(policy, verify=verify),
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
    )
