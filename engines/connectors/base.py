"""The one small interface every accounting connector implements, and the values it trades in.

A connector knows one provider's protocol: its OAuth 2.0 authorization-code flow, how to find
the tenants (organisations, companies) a grant reaches, how a bill is written in its API, and
how to read, void or delete it again. It holds no state and touches no database: the resolvers
hand it tokens and a ``Bill`` and store what it returns. HTTP goes through an ``httpx`` client
made by ``client()`` under the outbound policy (``engines.outbound``), so tests point the base
URLs at local fake servers and admit them with the policy's allow-list.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime as dt
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, ClassVar, Generic, Literal, Protocol, TypeVar
from urllib.parse import urlencode

import httpx

from engines.connectors.errors import (
    ConnectorUnreachable,
    GrantRevoked,
    InvalidAnswer,
    error_for_status,
)
from engines.outbound import OutboundPolicy

ClientFactory = Callable[[], contextlib.AbstractAsyncContextManager[httpx.AsyncClient]]
# Saves delivery progress (remote ids) as soon as a step succeeds, so a retry resumes there.
SaveProgress = Callable[[dict[str, Any]], Awaitable[None]]
BillKind = Literal["bill", "purchase"]


class SharedClient:
    """One ``httpx`` client reused by every call of the connectors that share this object.

    Making a client costs an SSL context (measured: 0.2-0.9 s on a busy 2-core machine) and
    a fresh connection each time; reusing one keeps connections to the provider alive. A client
    belongs to the event loop it was made on, so another loop (tests run one per test) gets its
    own. ``aclose()`` at shutdown. Every connection goes through ``policy``.
    """

    def __init__(self, policy: OutboundPolicy) -> None:
        self._policy = policy
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @contextlib.asynccontextmanager
    async def __call__(self) -> AsyncIterator[httpx.AsyncClient]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop or self._client.is_closed:
            self._client = self._policy.http_client(timeout=httpx.Timeout(30.0, connect=10.0))
            self._loop = loop
        yield self._client

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None


@dataclass(frozen=True)
class TokenSet:
    """An OAuth grant: the access token, its refresh token and when the access token expires."""

    access_token: str
    refresh_token: str
    expires_at: float  # epoch seconds
    scope: str = ""

    @classmethod
    def from_response(cls, body: Mapping[str, Any], now: float | None = None) -> TokenSet:
        try:
            return cls(
                access_token=str(body["access_token"]),
                refresh_token=str(body["refresh_token"]),
                expires_at=(now or time.time()) + float(body.get("expires_in", 1800)),
                scope=str(body.get("scope", "")),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InvalidAnswer(f"the token response lacks {exc}") from None


@dataclass(frozen=True)
class RemoteTenant:
    """An organisation (Xero) or company (QuickBooks realm) the grant reaches."""

    id: str
    name: str
    connection_id: str | None = None  # Xero's connection id, to disconnect one tenant


@dataclass(frozen=True)
class BillLine:
    description: str
    quantity: Decimal
    unit_amount: Decimal
    amount: Decimal
    account_code: str
    tax_code: str | None = None
    tax_amount: Decimal | None = None


@dataclass(frozen=True)
class Attachment:
    file_name: str
    mime_type: str
    size: int
    sha256: str


@dataclass(frozen=True)
class Bill:
    """A provider-neutral purchase: what a document becomes in the books."""

    kind: BillKind  # an invoice to pay later (bill) or a receipt already paid (purchase)
    vendor: str
    date: dt.date
    due_date: dt.date
    currency: str
    reference: str
    lines: tuple[BillLine, ...]
    total: Decimal
    tax_total: Decimal | None
    note: str
    payment_account: str | None = None  # the account a purchase was paid from
    paid_by_card: bool = False
    attachment: Attachment | None = None


@dataclass(frozen=True)
class PlannedRequest:
    """One request the delivery will send: method, path under the API root, JSON body."""

    step: str  # vendor, bill, attachment
    method: str
    path: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "method": self.method,
            "path": self.path,
            "headers": self.headers,
            "body": self.body,
            "note": self.note,
        }


@dataclass(frozen=True)
class Plan:
    """The exact requests a delivery sends, and what the caller should know first."""

    requests: tuple[PlannedRequest, ...]
    warnings: tuple[str, ...]
    vendor_id: str | None


class AccountingConnector(Protocol):
    """An accounting product fincap exports bills to."""

    id: str
    name: str

    def configured(self) -> bool:
        """Whether the server has the client id and secret to connect at all."""
        ...

    def authorize_url(self, state: str, redirect_uri: str) -> str:
        """Where the user's browser goes to grant access."""
        ...

    def request_url(self, tenant_id: str, path: str) -> str:
        """The absolute URL of a planned request's path."""
        ...

    async def exchange_code(self, code: str, redirect_uri: str) -> TokenSet: ...

    async def refresh(self, refresh_token: str) -> TokenSet: ...

    async def tenants(self, tokens: TokenSet, callback: Mapping[str, str]) -> list[RemoteTenant]:
        """The tenants the new grant reaches (``callback``: the redirect's query parameters)."""
        ...

    async def disconnect(self, tokens: TokenSet, tenants: list[RemoteTenant]) -> None: ...

    async def plan(self, access_token: str, tenant_id: str, bill: Bill) -> Plan:
        """The exact requests that deliver ``bill`` (looks the vendor up; sends nothing)."""
        ...

    async def deliver(
        self,
        access_token: str,
        tenant_id: str,
        plan: Plan,
        original: bytes | None,
        key: str,
        progress: dict[str, Any],
        save: SaveProgress,
    ) -> dict[str, Any]:
        """Send the plan; idempotent under ``key`` and resumable from ``progress``. Returns the
        remote ids (``invoiceId``, ``attachmentIds``, ``vendorId``, ``url``, ``status``)."""
        ...

    async def describe(
        self, access_token: str, tenant_id: str, remote: dict[str, Any]
    ) -> dict[str, Any]:
        """The remote bill as the provider has it now, and its attachments."""
        ...

    async def remove(
        self, access_token: str, tenant_id: str, remote: dict[str, Any]
    ) -> dict[str, Any]:
        """Void or delete the remote bill; what was done."""
        ...


class AccountingConnectorClass(Protocol):
    """A connector's class, as its declaration names it: the class of its app settings, and
    a constructor from those settings and the shared HTTP client."""

    settings_type: type[OAuthApp]

    def __call__(self, settings: Any, client: ClientFactory, /) -> AccountingConnector: ...


@dataclass(frozen=True)
class OAuthApp:
    """An app registered at a provider: its OAuth 2.0 client and the endpoints it talks to
    (each connector's declaration gives the endpoints their defaults)."""

    client_id: str | None
    client_secret: str | None
    authorize_url: str
    token_url: str
    api_url: str

    def __post_init__(self) -> None:
        # Paths are appended to the API root: ``https://api.example/`` must not give ``//``.
        object.__setattr__(self, "api_url", self.api_url.rstrip("/"))


AppSettings = TypeVar("AppSettings", bound=OAuthApp)


class OAuthConnector(Generic[AppSettings]):
    """The OAuth 2.0 authorization-code flow every accounting connector shares: the authorize
    URL, the code exchange and the refresh (client authenticated with HTTP Basic). A
    connector adds its ``scope`` and what its API does differently, and names the class of its
    app settings (``settings_type``: built from its declaration's settings)."""

    scope: ClassVar[str]
    settings_type: ClassVar[type[OAuthApp]]

    def __init__(self, settings: AppSettings, client: ClientFactory) -> None:
        self.settings = settings
        self._client = client

    def configured(self) -> bool:
        return bool(self.settings.client_id and self.settings.client_secret)

    def _auth(self) -> str:
        return basic_auth(self.settings.client_id or "", self.settings.client_secret or "")

    def authorize_url(self, state: str, redirect_uri: str) -> str:
        query = urlencode(
            {
                "response_type": "code",
                "client_id": self.settings.client_id or "",
                "redirect_uri": redirect_uri,
                "scope": self.scope,
                "state": state,
            }
        )
        return f"{self.settings.authorize_url}?{query}"

    async def exchange_code(self, code: str, redirect_uri: str) -> TokenSet:
        form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
        return await token_request(self._client, self.settings.token_url, self._auth(), form)

    async def refresh(self, refresh_token: str) -> TokenSet:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return await token_request(self._client, self.settings.token_url, self._auth(), form)

    @staticmethod
    def _bearer(access_token: str) -> dict[str, str]:
        """The headers of an API call made with the grant's access token."""
        return {"Authorization": f"Bearer {access_token}", "Accept": "application/json"}


def basic_auth(client_id: str, client_secret: str) -> str:
    raw = f"{client_id}:{client_secret}".encode()
    return "Basic " + base64.b64encode(raw).decode("ascii")


def string_literal(text: str, quote: str) -> str:
    """``text`` as a string literal of a provider's query language: in ``quote`` characters,
    backslashes and ``quote`` characters escaped with a backslash."""
    return quote + text.replace("\\", "\\\\").replace(quote, "\\" + quote) + quote


def money(value: Decimal) -> float:
    """A JSON number for an amount (two places; the text is exact)."""
    return float(value.quantize(Decimal("0.01")))


def raise_for(response: httpx.Response, what: str) -> None:
    """Map a provider's failed answer to the error of its kind (``error_for_status``)."""
    if response.is_success:
        return
    detail = response.text[:300].replace("\n", " ")
    status = response.status_code
    raise error_for_status(status, f"{what}: the provider answered {status}: {detail}")


async def token_request(
    client_factory: ClientFactory, url: str, auth: str, form: dict[str, str]
) -> TokenSet:
    """POST an OAuth token request (client authenticated with HTTP Basic, RFC 6749 §2.3.1)."""
    try:
        async with client_factory() as client:
            response = await client.post(
                url, data=form, headers={"Authorization": auth, "Accept": "application/json"}
            )
    except httpx.HTTPError as exc:
        # The policy's text ("could not connect to host:port") whatever went wrong.
        raise ConnectorUnreachable(f"token request: {exc}") from None
    if response.status_code == 400 and "invalid_grant" in response.text:
        raise GrantRevoked("the provider refused the grant (invalid_grant); connect again")
    raise_for(response, "token request")
    return TokenSet.from_response(response.json())


async def send(
    client: httpx.AsyncClient, method: str, url: str, what: str, **options: Any
) -> httpx.Response:
    """One API request; a network failure is ``ConnectorUnreachable``, a failed answer the
    error of its kind (``raise_for``)."""
    try:
        response = await client.request(method, url, **options)
    except httpx.HTTPError as exc:
        raise ConnectorUnreachable(f"{what}: {exc}") from None
    raise_for(response, what)
    return response
