"""How the outbound policy says no: one error and one text for a connection refused or failed.

Apart from ``policy.py`` so that ``http.py``, which the policy loads when a caller asks it for an
HTTP client, can raise them without importing the policy back (no loop between the two).
"""

from __future__ import annotations

import logging

log = logging.getLogger("fincap.outbound")


class Unreachable(ConnectionError):
    """A connection was refused by the policy or failed; the text never says which."""

    def __init__(self, host: str, port: int) -> None:
        super().__init__(unreachable_text(host, port))
        self.host = host
        self.port = port


def unreachable_text(host: str, port: int) -> str:
    """The one error text of every refused or failed outbound connection."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"could not connect to {shown}:{port}"


def refused(host: str, port: int, reason: str) -> Unreachable:
    """The caller's ``Unreachable``; the reason goes to the server log only."""
    log.warning(
        "outbound connection refused or failed",
        extra={"host": host, "port": port, "reason": reason},
    )
    return Unreachable(host, port)
