"""The CLI's HTTP calls to a fincap server, and the exit code of each kind of failure.

Every capability command goes through ``Client.call`` to ``POST /v1/capabilities/{slug}``, the
same route scripts use, so the CLI works against any fincap deployment.
"""

from __future__ import annotations

from typing import Any

import httpx

from app.cli.config import Target

# Exit codes (documented in docs/api/cli.md).
EXIT_OK = 0
EXIT_FAILED_ITEMS = 1  # a batch finished, but some of its items failed (files upload)
EXIT_USAGE = 2  # bad options or a request the server rejected as invalid (400, 413, 422)
EXIT_AUTH = 3  # no or invalid key, or not allowed here (401, 403)
EXIT_NOT_FOUND = 4  # unknown capability or resource (404)
EXIT_SERVER = 5  # the server failed or could not be reached

DEFAULT_TIMEOUT_S = 60.0


class CallFailed(Exception):
    """A call that did not succeed: the message to print and the exit code to end with."""

    def __init__(
        self, message: str, exit_code: int, status: int | None = None, reason: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.status = status
        # The server's ``error.reason`` (``workspace_required``, …): what the CLI branches on,
        # never the message text. None when the answer carried none (not a fincap server).
        self.reason = reason
        self.envelope: dict[str, Any] | None = None


def exit_code_of(status: int) -> int:
    if status in (401, 403):
        return EXIT_AUTH
    if status == 404:
        return EXIT_NOT_FOUND
    if 400 <= status < 500 and status != 429:
        return EXIT_USAGE
    return EXIT_SERVER


class Client:
    """An HTTP client bound to one target (host, key, workspace)."""

    def __init__(self, target: Target, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.target = target
        self._http = httpx.Client(base_url=target.host, timeout=timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def headers(self, *, authenticated: bool = True) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": "fincap-cli"}
        if authenticated and self.target.api_key:
            headers["Authorization"] = f"Bearer {self.target.api_key}"
        if self.target.org_id:
            headers["X-Service-Org-Id"] = self.target.org_id
        return headers

    def request(
        self, method: str, path: str, *, authenticated: bool = True, **kwargs: Any
    ) -> httpx.Response:
        try:
            return self._http.request(
                method, path, headers=self.headers(authenticated=authenticated), **kwargs
            )
        except httpx.TimeoutException:
            raise CallFailed(
                f"{self.target.host} did not answer in time ({method} {path})", EXIT_SERVER
            ) from None
        except httpx.HTTPError as exc:
            raise CallFailed(
                f"cannot reach {self.target.host}: {exc}. Is `fincap serve` running there? "
                "Set the address with --host or FINCAP_HOST.",
                EXIT_SERVER,
            ) from None

    def envelope(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        """The JSON envelope of a call; ``CallFailed`` for an error status or a non-JSON answer."""
        response = self.request(method, path, **kwargs)
        try:
            body = response.json()
        except ValueError:
            raise CallFailed(
                f"{method} {path}: HTTP {response.status_code} with a body that is not JSON",
                exit_code_of(response.status_code) if response.status_code >= 400 else EXIT_SERVER,
                response.status_code,
            ) from None
        if response.status_code >= 400 or not isinstance(body, dict) or not body.get("success"):
            message, reason = _error_of(body)
            retry_after = response.headers.get("retry-after", "")
            if message and retry_after.isdigit():
                # 429, 503 (the server's database away), 507 (its disk full): say when.
                message = f"{message} (the server says: retry in {retry_after} s)"
            if response.status_code == 401:
                message = self.refused_key(message)
            failed = CallFailed(
                message or f"HTTP {response.status_code}",
                exit_code_of(response.status_code),
                response.status_code,
                reason,
            )
            failed.envelope = body if isinstance(body, dict) else None
            raise failed
        return body

    def refused_key(self, message: str | None) -> str:
        """A 401's message with what the CLI knows and the server does not say: which key
        was refused and where it came from, or that none was sent and how to set one."""
        said = message or "authentication required"
        if not self.target.api_key:
            return f"{said}: no API key was sent (run `fincap auth login`, or set FINCAP_API_KEY)"
        source = self.target.sources.get("apiKey", "config")
        origin = "FINCAP_API_KEY" if source == "environment" else source
        return (
            f"{said}: the API key {self.target.masked_key} (from {origin}) was not accepted — "
            "unknown, revoked or expired; make a new one on the dashboard's API keys page and "
            "save it with `fincap auth login`"
        )

    def call(self, slug: str, body: dict[str, Any]) -> dict[str, Any]:
        """``POST /v1/capabilities/{slug}``: the whole success envelope."""
        return self.envelope("POST", f"/v1/capabilities/{slug}", json=body)

    def result(self, slug: str, body: dict[str, Any]) -> Any:
        """The ``data.result`` of a capability call."""
        return self.call(slug, body)["data"]["result"]

    def discovery(self) -> list[dict[str, Any]]:
        """The server's capability list (``GET /v1/capabilities``, no key needed)."""
        listing = self.envelope("GET", "/v1/capabilities", authenticated=False)
        capabilities = listing.get("capabilities")
        return capabilities if isinstance(capabilities, list) else []


def _error_of(body: Any) -> tuple[str | None, str | None]:
    """The failure envelope's ``errorMessage`` and ``reason`` (None where absent)."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, None
    message, reason = error.get("errorMessage"), error.get("reason")
    return (
        message if isinstance(message, str) else None,
        reason if isinstance(reason, str) else None,
    )
