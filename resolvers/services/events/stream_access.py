"""Live streams that follow authorization: what a stream watches, and its re-check.

A stream (``GET /v1/events``, a GraphQL ``documentEvents`` subscription) or a GraphQL WebSocket
is authorized when it opens. It must stop when that authorization changes, however busy the
workspace, and it must not pay a store read per event to notice. So each one holds an
``AccessWatch``: what its authorization rests on (the API key or OAuth grant, the user's
membership of the workspace). ``AccessWatches`` indexes the process's watches; a change flags
the watches it touches and wakes them, and only those re-check, once, from the store:

- a change made in this process reaches them at once (the store modules' ``on_revoke`` and
  ``on_membership_change`` listeners);
- a change made in another process is read from ``access_changes`` by the event hub's poller
  with its events, one query per poll (``FINCAP_EVENTS_POLL_SECONDS``);
- every watch also re-checks after ``recheck`` seconds of its own (and when an OAuth access
  token expires), which bounds what a lost change record could cost.

A re-check that fails ends the stream with the error (401 for a revoked key, 403 for a removed
member or a missing scope); one whose role or scopes differ from the stream's ends it with
``AccessChanged``, so that the client opens it again under its new rights (resuming from its
last event id, it misses nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from resolvers.framework.context import Context, Credentials, Principal
from resolvers.framework.errors import AccessChanged, MissingScope
from resolvers.framework.invoke import authorize

if TYPE_CHECKING:
    from resolvers.framework.services import Services


class AccessSignal(Exception):  # a signal, not an error
    """Raised by a stream's wait when its authorization may have changed: re-check it."""


@dataclass(eq=False)
class AccessWatch:
    """What one stream's authorization rests on, and whether it changed since its last check."""

    key_id: str
    grant_id: str | None
    user_id: str
    workspace_id: str
    changed: bool = False
    _wakers: list[Callable[[], None]] = field(default_factory=list)

    def on_change(self, wake: Callable[[], None]) -> None:
        self._wakers.append(wake)

    def notify(self) -> None:
        self.changed = True
        for wake in self._wakers:
            wake()


class AccessWatches:
    """The process's open watches, by credential and by membership."""

    def __init__(self) -> None:
        self._by_key: dict[str, set[AccessWatch]] = {}
        self._by_member: dict[tuple[str, str], set[AccessWatch]] = {}

    def __len__(self) -> int:
        return len({w for watches in self._by_member.values() for w in watches})

    def watch(self, principal: Principal, workspace_id: str) -> AccessWatch:
        watch = AccessWatch(principal.key_id, principal.grant_id, principal.user_id, workspace_id)
        for key in {principal.key_id, principal.grant_id} - {None}:
            self._by_key.setdefault(str(key), set()).add(watch)
        self._by_member.setdefault((principal.user_id, workspace_id), set()).add(watch)
        return watch

    def forget(self, watch: AccessWatch) -> None:
        for key in {watch.key_id, watch.grant_id} - {None}:
            _discard(self._by_key, str(key), watch)
        _discard(self._by_member, (watch.user_id, watch.workspace_id), watch)

    def credential_ended(self, key_id: str) -> None:
        """An API key or OAuth grant was revoked (or a grant's scopes changed)."""
        for watch in list(self._by_key.get(key_id, ())):
            watch.notify()

    def membership_changed(self, user_id: str, workspace_id: str) -> None:
        for watch in list(self._by_member.get((user_id, workspace_id), ())):
            watch.notify()

    def everything_changed(self) -> None:
        """Changes may have been missed (the reader fell behind): every watch re-checks."""
        for watches in list(self._by_member.values()):
            for watch in list(watches):
                watch.notify()


def _discard(index: dict, key: object, watch: AccessWatch) -> None:  # type: ignore[type-arg]
    watches = index.get(key)
    if watches is not None:
        watches.discard(watch)
        if not watches:
            del index[key]


@dataclass(frozen=True)
class Grant:
    """What a stream was allowed when it opened: the member's role and the scopes in force."""

    role: str | None
    scopes: frozenset[str]


async def grant_now(ctx: Context, permissions: tuple[str, ...], services: Services) -> Grant:
    """The grant an authorized context holds now: an OAuth grant's scopes are those of its
    newest token (a refresh may have narrowed them); ``MissingScope`` without ``permissions``."""
    scopes = ctx.principal.scopes
    if ctx.principal.via == "oauth" and ctx.principal.grant_id is not None:
        newest = await services.store.oauth_tokens.family_scopes(ctx.principal.grant_id)
        scopes = frozenset(newest if newest is not None else ()) & scopes
    held = Grant(ctx.role, scopes)
    if not ("all" in scopes or all(p in scopes for p in permissions)):
        raise MissingScope(permissions)
    return held


async def check_again(
    credentials: Credentials,
    services: Services,
    permissions: tuple[str, ...],
    granted: Grant,
) -> None:
    """Authorize ``credentials`` again from the store (never the cache): the error when they
    no longer may, ``AccessChanged`` when their role or scopes differ from ``granted``."""
    ctx = await authorize(credentials, services, permissions, needs_workspace=True, fresh=True)
    if await grant_now(ctx, permissions, services) != granted:
        raise AccessChanged()


def next_check_in(principal: Principal, recheck: float) -> float:
    """Seconds until a stream re-checks by itself: ``recheck``, or sooner when an OAuth
    access token expires before."""
    if principal.expires_at is None:
        return recheck
    return max(0.0, min(recheck, principal.expires_at - time.time()))
