"""The sign-in and consent forms' protection: a CSRF cookie whose value a signed token in the
form must name (with the pending request it was made for), the signed-in user as a
short-lived signed cookie scoped to ``/v1/oauth``, and pages that are never framed nor
cached."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
from typing import Any
from urllib.parse import urlparse

from starlette.requests import Request
from starlette.responses import HTMLResponse

from app.http.security_headers import page_headers
from app.oauth.metadata import OAUTH
from engines.keyring import InvalidToken, Keyring

SESSION_COOKIE = "fincap_oauth_session"


CSRF_COOKIE = "fincap_oauth_csrf"
SESSION_SECONDS = 30 * 60
MAX_FORM_FIELD = 8192


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def csrf_token(keyring: Keyring, cookie: str, sealed_request: str) -> str:
    return keyring.sign("oauth-form", f"{cookie}|{_digest(sealed_request)}".encode())


def csrf_ok(keyring: Keyring, request: Request, token: str, sealed_request: str) -> bool:
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie:
        return False
    try:
        payload = keyring.verify("oauth-form", token).decode()
    except (InvalidToken, UnicodeDecodeError):
        return False
    return secrets.compare_digest(payload, f"{cookie}|{_digest(sealed_request)}")


def session_user(keyring: Keyring, request: Request) -> str | None:
    try:
        payload = json.loads(keyring.verify("oauth-session", request.cookies[SESSION_COOKIE]))
    except (KeyError, InvalidToken, ValueError):
        return None
    if not isinstance(payload, dict) or payload.get("exp", 0) < time.time():
        return None
    user = payload.get("user")
    return user if isinstance(user, str) else None


def cookie_options(request: Request) -> dict[str, Any]:
    return {
        "path": OAUTH,
        "httponly": True,
        "samesite": "lax",
        "secure": request.url.scheme == "https",
    }


def html(text: str, status: int = 200, redirect_to: str | None = None) -> HTMLResponse:
    """A page that is never framed (clickjacking of the consent button) nor cached.

    ``redirect_to``: the client's redirect URI, when a form on the page ends there. Browsers
    apply CSP ``form-action`` to the redirect after a submission too, so its origin is allowed.
    """
    targets = "'self'"
    if redirect_to:
        parsed = urlparse(redirect_to)
        targets += f" {parsed.scheme}://{parsed.netloc}"
    csp = (
        f"default-src 'none'; style-src 'unsafe-inline'; form-action {targets}; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    return HTMLResponse(
        text, status_code=status, headers={**page_headers(csp), "Cache-Control": "no-store"}
    )


async def form_fields(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value[:MAX_FORM_FIELD] for key, value in form.items() if isinstance(value, str)}
