"""An OAuth client as an MCP client application runs it, driving the pages like a person.

Used by the flow tests (ASGI), the socket tests (official MCP client) and the bench.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import secrets
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlparse

import httpx

REDIRECT_URI = "http://127.0.0.1:33418/callback"


def pkce_pair() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
    return verifier, challenge.decode()


def hidden_field(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no hidden field {name} in the page"
    return html.unescape(found.group(1))


@dataclass
class Registered:
    client_id: str
    body: dict[str, Any]


async def register(http: httpx.AsyncClient, **metadata: Any) -> Registered:
    body = {
        "client_name": "Test Assistant",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    response = await http.post("/v1/oauth/register", json=body)
    assert response.status_code == 201, response.text
    registered = response.json()
    return Registered(registered["client_id"], registered)


async def start(
    http: httpx.AsyncClient,
    client_id: str,
    scope: str | None,
    state: str = "st-1",
    **extra: str,
) -> tuple[httpx.Response, str]:
    """GET the authorization endpoint (``extra``: more parameters, e.g. ``resource``); the
    response and the PKCE verifier."""
    verifier, challenge = pkce_pair()
    params = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT_URI,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": state,
    }
    if scope is not None:
        params["scope"] = scope
    params.update(extra)
    return await http.get(f"/v1/oauth/authorize?{urlencode(params)}"), verifier


async def sign_in_page(http: httpx.AsyncClient, authorize_response: httpx.Response) -> str:
    assert authorize_response.status_code == 302, authorize_response.text
    page = await http.get(authorize_response.headers["location"])
    assert page.status_code == 200, page.text
    return page.text


async def submit_sign_in(
    http: httpx.AsyncClient, page: str, email: str, password: str
) -> httpx.Response:
    return await http.post(
        "/v1/oauth/sign-in",
        data={
            "request": hidden_field(page, "request"),
            "csrf": hidden_field(page, "csrf"),
            "email": email,
            "password": password,
        },
    )


async def consent(
    http: httpx.AsyncClient, page: str, workspace: str, decision: str = "allow"
) -> dict[str, list[str]]:
    """Submit the consent form; the query of the redirect back to the client."""
    response = await http.post(
        "/v1/oauth/consent",
        data={
            "request": hidden_field(page, "request"),
            "csrf": hidden_field(page, "csrf"),
            "workspace": workspace,
            "decision": decision,
        },
    )
    assert response.status_code == 303, response.text
    location = response.headers["location"]
    assert location.startswith(REDIRECT_URI), location
    return parse_qs(urlparse(location).query)


async def exchange(
    http: httpx.AsyncClient,
    client_id: str,
    code: str,
    verifier: str,
    redirect_uri: str = REDIRECT_URI,
    **extra: str,
) -> httpx.Response:
    return await http.post(
        "/v1/oauth/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            **extra,
        },
    )


async def refresh(http: httpx.AsyncClient, client_id: str, token: str) -> httpx.Response:
    return await http.post(
        "/v1/oauth/token",
        data={"grant_type": "refresh_token", "refresh_token": token, "client_id": client_id},
    )


async def whole_flow(
    http: httpx.AsyncClient,
    email: str,
    password: str,
    workspace: str,
    scope: str | None = "read_documents write_documents",
    **extra: str,
) -> dict[str, Any]:
    """Registration → authorization (``extra`` parameters, e.g. ``resource``) → sign-in →
    consent → token; the token response."""
    client = await register(http)
    started, verifier = await start(http, client.client_id, scope, **extra)
    page = await sign_in_page(http, started)
    consent_page = await submit_sign_in(http, page, email, password)
    assert consent_page.status_code == 200, consent_page.text
    query = await consent(http, consent_page.text, workspace)
    tokens = await exchange(http, client.client_id, query["code"][0], verifier)
    assert tokens.status_code == 200, tokens.text
    return {**tokens.json(), "client_id": client.client_id}
