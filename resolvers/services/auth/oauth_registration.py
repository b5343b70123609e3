"""Dynamic client registration (RFC 7591) within bounds: it is open to anyone, so what anyone
can make the server store is limited.

- The request body is at most ``MAX_REGISTRATION_BYTES``, read before anything is parsed.
- ``client_name`` is at most ``MAX_CLIENT_NAME`` characters, at most ``MAX_REDIRECT_URIS``
  redirect URIs of ``MAX_URI_LENGTH`` characters each, any other text at most ``MAX_TEXT``
  characters and any other list at most ``MAX_LIST`` items.
- Redirect URIs: ``https``; ``http`` only on a loopback host; or a private-use scheme in
  reverse-domain form (RFC 8252 §7.1, ``com.example.app:/callback``). ``javascript:``,
  ``data:``, ``file:`` and every other scheme are refused, as are fragments.
- One address (an IPv6 /64) registers at most ``REGISTRATIONS_PER_ADDRESS`` clients an hour
  (429 with ``Retry-After``), counted over an index of (address, time); an address refused is
  remembered by the process until its wait is over (``HeldAddresses``), so a flood of refused
  registrations costs no database read each.
- A client no one consents to within ``UNUSED_CLIENT_TTL`` is removed (a TTL index); at most
  ``MAX_UNUSED_CLIENTS`` may be waiting at once, whoever registered them.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from ipaddress import ip_address
from typing import Any

from pydantic import AnyUrl

from persistence.ids import utcnow
from persistence.store import Store
from resolvers.framework.services import AddressHolds

MAX_REGISTRATION_BYTES = 16 * 1024
MAX_CLIENT_NAME = 120
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000
MAX_TEXT = 2000
MAX_LIST = 10
REGISTRATIONS_PER_ADDRESS = 20
REGISTRATION_WINDOW = timedelta(hours=1)
UNUSED_CLIENT_TTL = timedelta(hours=24)
MAX_UNUSED_CLIENTS = 10_000
FULL_RETRY_S = 600  # when too many clients are waiting, whoever registered them

_PRIVATE_USE_SCHEME = re.compile(r"[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+")


class RegistrationRefused(ValueError):
    """Metadata outside the bounds: ``field`` and ``reason`` for ``invalid_client_metadata``."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class RegistrationThrottled(Exception):
    """Too many registrations: try again in ``retry_after`` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


def check_metadata(body: Any) -> None:
    """``RegistrationRefused`` for metadata over the bounds (the SDK validates the rest)."""
    if not isinstance(body, dict):
        return
    name = body.get("client_name")
    if isinstance(name, str) and len(name) > MAX_CLIENT_NAME:
        raise RegistrationRefused("client_name", f"at most {MAX_CLIENT_NAME} characters")
    uris = body.get("redirect_uris")
    if isinstance(uris, list):
        if len(uris) > MAX_REDIRECT_URIS:
            raise RegistrationRefused("redirect_uris", f"at most {MAX_REDIRECT_URIS} URIs")
        for index, uri in enumerate(uris):
            if isinstance(uri, str) and len(uri) > MAX_URI_LENGTH:
                raise RegistrationRefused(
                    f"redirect_uris[{index}]", f"at most {MAX_URI_LENGTH} characters"
                )
    for field, value in body.items():
        if isinstance(value, str) and len(value) > MAX_TEXT:
            raise RegistrationRefused(str(field), f"at most {MAX_TEXT} characters")
        if isinstance(value, list) and len(value) > MAX_LIST:
            raise RegistrationRefused(str(field), f"at most {MAX_LIST} items")


def loopback_host(host: str | None) -> bool:
    """``localhost``, an address in 127.0.0.0/8, or ``[::1]`` (RFC 8252 §7.3)."""
    name = (host or "").strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ip_address(name).is_loopback
    except ValueError:
        return False


def redirect_uri_problem(uri: AnyUrl) -> str | None:
    """Why ``uri`` cannot be a redirect URI, or None."""
    scheme = uri.scheme.lower()
    if uri.fragment:
        return "a redirect URI must not have a fragment"
    if scheme == "https":
        return None if uri.host else "an https redirect URI needs a host"
    if scheme == "http":
        if loopback_host(uri.host):
            return None
        return "use https (plain http only on a loopback host: localhost, 127.0.0.1, [::1])"
    if _PRIVATE_USE_SCHEME.fullmatch(scheme):
        return None  # RFC 8252 §7.1: an app's own scheme, named after a domain it controls
    return (
        f"the scheme '{scheme}:' is not allowed; use https, http on a loopback host, or a "
        "private-use scheme in reverse-domain form (com.example.app:/callback)"
    )


class HeldAddresses:
    """The addresses this process refused lately, until when (so a refused flood is answered
    without asking the store again). At most ``limit`` are remembered."""

    def __init__(self, clock: Callable[[], float] = time.monotonic, limit: int = 10_000) -> None:
        self.clock = clock
        self.limit = limit
        self._until: dict[str, float] = {}

    def wait(self, address: str) -> int | None:
        """Seconds ``address`` must still wait, or None."""
        until = self._until.get(address)
        if until is None:
            return None
        left = until - self.clock()
        if left <= 0:
            del self._until[address]
            return None
        return max(1, math.ceil(left))

    def hold(self, address: str, seconds: int) -> None:
        if len(self._until) >= self.limit:
            now = self.clock()
            self._until = {a: u for a, u in self._until.items() if u > now}
        if len(self._until) < self.limit:
            self._until[address] = self.clock() + seconds


THROTTLED = f"at most {REGISTRATIONS_PER_ADDRESS} registrations an hour from one address"


async def admit_registration(store: Store, address: str, held: AddressHolds) -> None:
    """``RegistrationThrottled`` when ``address`` registered too many clients in the window,
    or too many clients are waiting for their first use."""
    if (wait_s := held.wait(address)) is not None:
        raise RegistrationThrottled(THROTTLED, wait_s)
    now = utcnow()
    recent = await store.oauth_clients.registered_since(
        address, now - REGISTRATION_WINDOW, REGISTRATIONS_PER_ADDRESS
    )
    if len(recent) >= REGISTRATIONS_PER_ADDRESS:
        wait = max(1, math.ceil((recent[0] + REGISTRATION_WINDOW - now).total_seconds()))
        held.hold(address, wait)
        raise RegistrationThrottled(THROTTLED, wait)
    if await store.oauth_clients.unused_count(MAX_UNUSED_CLIENTS) >= MAX_UNUSED_CLIENTS:
        raise RegistrationThrottled(
            "too many registered clients are waiting for their first use", FULL_RETRY_S
        )


def unused_until() -> datetime:
    """When a client registered now is removed unless someone consents to it first."""
    return utcnow() + UNUSED_CLIENT_TTL
