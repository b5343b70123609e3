"""The official MCP Python client against fincap on a socket: it meets 401 on tools/call,
discovers the authorization server from WWW-Authenticate, registers itself, runs PKCE through
the sign-in and consent pages (driven like a person here), then lists and calls tools."""

from __future__ import annotations

from typing import Any
from urllib.parse import urljoin

import httpx
import httpx2
import pytest
from mcp.client.auth import OAuthClientProvider
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from mcp.shared.exceptions import MCPError

from tests.mcp import oauth_client as oc
from tests.mcp.live import EMAIL, PASSWORD, Live


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """Opens the authorization URL, signs in and consents; hands the redirect to the client."""

    def __init__(self, base: str, workspace: str) -> None:
        self.base, self.workspace = base, workspace
        self.redirect: dict[str, list[str]] = {}
        self.pages: list[str] = []

    async def open(self, authorization_url: str) -> None:
        async with httpx.AsyncClient(base_url=self.base) as browser:
            started = await browser.get(authorization_url)
            assert started.status_code == 302, started.text
            page = await browser.get(urljoin(self.base, started.headers["location"]))
            self.pages.append(page.text)
            consent = await oc.submit_sign_in(browser, page.text, EMAIL, PASSWORD)
            assert consent.status_code == 200, consent.text
            self.pages.append(consent.text)
            self.redirect = await oc.consent(browser, consent.text, self.workspace)

    async def callback(self) -> AuthorizationCodeResult:
        return AuthorizationCodeResult(
            code=self.redirect["code"][0], state=self.redirect["state"][0]
        )


def signing_in(
    live: Live, person: Person, storage: MemoryStorage, client_name: str,
    scope: str = "read_documents",
) -> OAuthClientProvider:  # fmt: skip
    """The SDK's OAuth for ``/mcp``: a public client that registers itself as ``client_name``,
    asks for ``scope`` and lets ``person`` sign in and consent."""
    return OAuthClientProvider(
        server_url=f"{live.base}/mcp",
        client_metadata=OAuthClientMetadata(
            client_name=client_name,
            redirect_uris=[oc.REDIRECT_URI],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            scope=scope,
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.callback,
    )


def structured(result: Any) -> Any:
    assert result.is_error is False, result
    return result.structured_content


async def test_official_client_authorizes_lists_and_calls(live: Live) -> None:
    person = Person(live.base, live.org_id)
    storage = MemoryStorage()
    auth = signing_in(live, person, storage, "Official SDK client")
    async with (
        httpx2.AsyncClient(auth=auth, timeout=30) as http,
        streamable_http_client(f"{live.base}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert {"documents_search", "documents_bulk_edit", "workspace_get_context"} <= set(tools)
        assert person.pages == []  # listing needed no token

        found = structured(await session.call_tool("documents_search", {"limit": 2}))
        assert found == {"documents": [], "nextCursor": None}
        assert "Official SDK client" in person.pages[0]  # the sign-in page names the client
        assert storage.tokens is not None and storage.tokens.access_token.startswith("fat_")

        context = structured(await session.call_tool("workspace_get_context", {}))
        assert context["workspace"]["id"] == live.org_id
        # The 401 named the scope documents_search needs; the client asked for just that.
        assert context["scopes"] == ["read_documents"]

        failed = await session.call_tool("documents_get", {"id": "doc_unknown"})
        assert failed.is_error is True
        assert "not found" in failed.content[0].text.lower()

        with pytest.raises(MCPError) as lacking:
            await session.call_tool(
                "currency_convert", {"amount": 1, "fromCurrency": "EUR", "toCurrency": "USD"}
            )
        assert "insufficient_scope" in str(lacking.value)
        assert "read_currency" in str(lacking.value)

        with pytest.raises(MCPError) as unknown:
            await session.call_tool("documents_explode", {})
        assert unknown.value.code == -32602
    assert person.redirect["state"]  # the client's state came back with the code
