"""A short-lived, per-process memory of who a credential is and where its user is a member.

Every capability call needs the caller (API key or OAuth access token → principal) and the
caller's role in the workspace: two indexed reads that cost more than the rest of a small call.
This cache keeps both for ``ttl`` seconds (``FINCAP_AUTH_CACHE_SECONDS``, 30 by default; 0 turns
it off). Only successful lookups are kept, so unknown keys always reach the store and cannot fill
the cache.

Revocation takes effect at once in the process that revokes: the store's ``api_keys`` and
``oauth_tokens`` tell every listener (``Services`` registers this cache's ``forget_credential``),
so no revoking code path can forget it; other processes follow within ``ttl``. Membership
changes are told the same way (``Workspaces.on_membership_change`` → ``forget_member``). An
OAuth access token is never kept past its own expiry.

With several API processes the cache is a bound, not a hole: ``invoke()`` never uses it for a
capability that writes or deletes (it reads the credential and the membership from the store
and refreshes the cache), so a revoked key, a removed member or a lowered role is refused for
every change at once on every process; only reads may go on, on another process, for at most
``ttl`` seconds.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from resolvers.framework.context import Principal

MAX_ENTRIES = 10_000


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


@dataclass
class AuthCache:
    """Principals by credential digest and roles by (user, workspace), each for ``ttl`` s."""

    ttl: float = 30.0
    clock: Callable[[], float] = time.monotonic
    max_entries: int = MAX_ENTRIES
    _principals: dict[str, tuple[float, Principal]] = field(default_factory=dict)
    _roles: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    # user id -> (until, the one workspace they belong to, or "" for none or several)
    _sole: dict[str, tuple[float, str]] = field(default_factory=dict)

    @property
    def enabled(self) -> bool:
        return self.ttl > 0

    # Credentials ---------------------------------------------------------------------------

    def principal(self, secret: str) -> Principal | None:
        """The cached principal of this secret, if still fresh."""
        if not self.enabled:
            return None
        entry = self._principals.get(_digest(secret))
        if entry is None:
            return None
        until, principal = entry
        if until <= self.clock() or (
            principal.expires_at is not None and principal.expires_at <= time.time()
        ):
            self._principals.pop(_digest(secret), None)
            return None
        return principal

    def remember_principal(self, secret: str, principal: Principal) -> None:
        if self.enabled:
            self._bounded(self._principals)
            self._principals[_digest(secret)] = (self.clock() + self.ttl, principal)

    def forget_credential(self, key_id: str) -> None:
        """An API key or a token family (``Principal.key_id``) was revoked; a family also
        ends the API keys made through it (``Principal.grant_id``)."""
        stale = [
            d
            for d, (_, p) in self._principals.items()
            if p.key_id == key_id or p.grant_id == key_id
        ]
        for digest in stale:
            del self._principals[digest]

    # Memberships ---------------------------------------------------------------------------

    def role(self, user_id: str, workspace_id: str) -> str | None:
        if not self.enabled:
            return None
        entry = self._roles.get((user_id, workspace_id))
        if entry is None or entry[0] <= self.clock():
            self._roles.pop((user_id, workspace_id), None)
            return None
        return entry[1]

    def remember_role(self, user_id: str, workspace_id: str, role: str) -> None:
        if self.enabled:
            self._bounded(self._roles)
            self._roles[(user_id, workspace_id)] = (self.clock() + self.ttl, role)

    def sole_workspace(self, user_id: str) -> str | None:
        """The one workspace the user belongs to ("" when none or several), if known; None
        when not known."""
        if not self.enabled:
            return None
        entry = self._sole.get(user_id)
        if entry is None or entry[0] <= self.clock():
            self._sole.pop(user_id, None)
            return None
        return entry[1]

    def remember_sole_workspace(self, user_id: str, workspace_id: str) -> None:
        if self.enabled:
            self._bounded(self._sole)
            self._sole[user_id] = (self.clock() + self.ttl, workspace_id)

    def forget_member(self, user_id: str, workspace_id: str) -> None:
        """A membership was added, removed or its role changed (a user who joins a second
        workspace no longer acts in their only one without naming it)."""
        self._roles.pop((user_id, workspace_id), None)
        self._sole.pop(user_id, None)

    def forget_change(self, change: Mapping[str, Any]) -> None:
        """Another process's change (``persistence.access_changes``), read by the event hub
        while this process has live streams or sockets."""
        if "keyId" in change:
            self.forget_credential(change["keyId"])
        else:
            self.forget_member(change["userId"], change["workspaceId"])

    def _bounded(self, entries: dict[Any, Any]) -> None:
        # Oldest first (insertion order): a full cache drops the entry written longest ago.
        while len(entries) >= self.max_entries:
            entries.pop(next(iter(entries)))
