"""Which tools a connection asked for: toolsets and read-only, from the URL or a header.

As the GitHub MCP server does, a client narrows the tools it is offered, so an assistant pays
only for what it uses: ``/mcp?toolsets=documents,files`` or the header
``X-MCP-Toolsets: documents,files`` (both may be sent; their toolsets add up), and
``?readonly=true`` or ``X-MCP-Readonly: true`` for the tools that change nothing. A toolset is a
resource of the registry (``documents``, ``files``, ``api-keys``, …; written as in tool names,
``api_keys``, it is the same); ``all`` names every one, and so does sending none. An unknown
toolset is an error naming the known ones, not a silently smaller list. Calls are held to the
selection too: a tool the connection was not offered is refused with the way to add it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.requests import HTTPConnection

from app.mcp.tools import Entry

TOOLSETS_PARAM, TOOLSETS_HEADER = "toolsets", "x-mcp-toolsets"
READONLY_PARAM, READONLY_HEADER = "readonly", "x-mcp-readonly"
EVERY = "all"
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"", "0", "false", "no", "off"})


class BadSelection(ValueError):
    """A toolset or read-only value the server does not know; the message says what it knows."""


@dataclass(frozen=True)
class Selection:
    """The tools a connection is offered: some toolsets (None: all), maybe reads only."""

    toolsets: frozenset[str] | None = None
    read_only: bool = False

    def admits(self, entry: Entry) -> bool:
        if entry.spec is None:  # the face's own tools (workspace_get_context) are always there
            return True
        if self.read_only and not entry.read_only:
            return False
        return self.toolsets is None or entry.toolset in self.toolsets

    def refusal(self, entry: Entry) -> str:
        """Why ``entry`` is not on this connection, and how to get it."""
        if self.read_only and not entry.read_only:
            return (
                f"Tool {entry.name} changes data, and this connection is read-only "
                "(readonly=true / X-MCP-Readonly); connect without it to use the tool"
            )
        chosen = ", ".join(sorted(self.toolsets or ()))
        return (
            f"Tool {entry.name} is in the toolset '{entry.toolset}', which this connection did "
            f"not select (toolsets: {chosen}); add it to ?toolsets= or X-MCP-Toolsets"
        )


def _values(conn: HTTPConnection, param: str, header: str) -> list[str]:
    return [*conn.query_params.getlist(param), *conn.headers.getlist(header)]


def selection_of(conn: HTTPConnection, known: Sequence[str]) -> Selection:
    """The selection the request asks for, or ``BadSelection``."""
    names = {
        name.strip().lower().replace("_", "-")
        for value in _values(conn, TOOLSETS_PARAM, TOOLSETS_HEADER)
        for name in value.split(",")
        if name.strip()
    }
    unknown = sorted(names - set(known) - {EVERY})
    if unknown:
        raise BadSelection(
            f"Unknown toolset{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
            f" in ?toolsets= / X-MCP-Toolsets; the toolsets are {', '.join(known)} "
            f"(or {EVERY}, the default)"
        )
    read_only = False
    for value in _values(conn, READONLY_PARAM, READONLY_HEADER):
        flag = value.strip().lower()
        if flag not in TRUE | FALSE:
            raise BadSelection(f"readonly / X-MCP-Readonly takes true or false, not {value!r}")
        read_only = read_only or flag in TRUE
    toolsets = None if not names or EVERY in names else frozenset(names)
    return Selection(toolsets, read_only)


__all__ = ["BadSelection", "Selection", "selection_of"]
