"""What this process knows of its store's health, without asking it: the driver's monitor.

The driver checks its server in the background (every ``heartbeat`` of ``persistence.client``,
more often while calls wait for it) and tells a ``ServerListener`` when the server's type
changes: ``Unknown`` means unreachable. ``StoreHealth`` keeps the last word, and the embedded
store's supervisor (``persistence.embedded_supervisor``) adds its own: restarting after a crash
or a fatal storage error. ``/healthz`` shows it; ``/readyz`` still asks the store itself.

Listener methods run on the driver's monitor threads: they only assign attributes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

from pymongo import monitoring
from pymongo.server_type import SERVER_TYPE

from persistence.ids import utcnow

State = Literal["unknown", "up", "down", "restarting"]


@dataclass
class StoreHealth:
    """The store's state as last seen: ``up``, ``down`` (unreachable), ``restarting`` (the
    embedded store is being started again by this process) or ``unknown`` (never reached)."""

    state: State = "unknown"
    since: datetime = field(default_factory=utcnow)
    # Why it is down or restarting, in words a client may read (no host, no driver text).
    reason: str = ""
    # Restarts of the embedded store made by this process, and the last one's reason.
    restarts: int = 0
    last_restart: str = ""

    def __post_init__(self) -> None:
        self.listener = _Listener(self)

    def set(self, state: State, reason: str = "") -> None:
        if state != self.state:
            self.state, self.since = state, utcnow()
        self.reason = reason

    def restarting(self, reason: str) -> None:
        """The embedded store is being restarted by this process because of ``reason``."""
        self.restarts += 1
        self.last_restart = reason
        self.set("restarting", reason)

    def snapshot(self) -> dict[str, object]:
        """The store's part of ``/healthz``."""
        shown: dict[str, object] = {"state": self.state, "since": self.since.isoformat()}
        if self.reason:
            shown["reason"] = self.reason
        if self.restarts:
            shown["restarts"] = self.restarts
            shown["lastRestart"] = self.last_restart
        return shown


class _Listener(monitoring.ServerListener):
    """The driver's server-description changes, as ``up`` / ``down``."""

    def __init__(self, health: StoreHealth) -> None:
        self.health = health

    def opened(self, event: monitoring.ServerOpeningEvent) -> None:
        pass

    def description_changed(self, event: monitoring.ServerDescriptionChangedEvent) -> None:
        reachable = event.new_description.server_type != SERVER_TYPE.Unknown
        if reachable:
            self.health.set("up")
        elif event.new_description.error is not None and self.health.state != "restarting":
            # Not on the first Unknown the driver reports before its first check.
            self.health.set("down", "the database does not answer")

    def closed(self, event: monitoring.ServerClosedEvent) -> None:
        pass
