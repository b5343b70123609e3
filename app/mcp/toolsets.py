"""Which tools a connection asked for: toolsets and read-only, from the URL or a header.

As the GitHub MCP server does, a client narrows the tools it is offered, so an assistant pays
only for what it uses: ``/mcp?toolsets=documents,files`` or the header
``X-MCP-Toolsets: documents,files`` (both may be sent; their toolsets add up), and
``?readonly=true`` or ``X-MCP-Readonly: true`` for the tools that change nothing. A toolset is a
resource of the registry (``documents``, ``files``, ``api-keys``, …; written as in tool names,
``api_keys``, it is the same; a few resources share one, ``reconcile``); ``all`` names every
one. An unknown toolset is an error naming the known ones, not a silently smaller list. Calls are
held to the selection too: a tool the connection was not offered is refused with the way to add it.

Sending none gives the default toolsets (``default`` names them, so ``default,members`` adds
one): every toolset but the ``OPT_IN`` ones. An assistant is mostly asked about documents; the
workspace's administration (people, keys, billing, mail and WhatsApp intake), bank
reconciliation and saved views are asked for by name. So the default listing stays within its
size budget as resources are added (issue 28: 40 KB, about 10k tokens), and an assistant is not
offered to invite people or mint keys unless its connection asks for that. The same rule as the
GitHub MCP server's default toolsets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.requests import HTTPConnection

from app.mcp.tools import Entry

TOOLSETS_PARAM, TOOLSETS_HEADER = "toolsets", "x-mcp-toolsets"
READONLY_PARAM, READONLY_HEADER = "readonly", "x-mcp-readonly"
EVERY, DEFAULT = "all", "default"
# Toolsets a connection gets only by naming them (or ``all``); see the module's docstring.
# Saved views are the dashboard's sidebar: an assistant searches with documents.search itself.
OPT_IN = frozenset(
    {"members", "api-keys", "billing", "mailboxes", "whatsapp", "reconcile", "views"}
)
TRUE = frozenset({"1", "true", "yes", "on"})
FALSE = frozenset({"", "0", "false", "no", "off"})


class BadSelection(ValueError):
    """A toolset or read-only value the server does not know; the message says what it knows."""


@dataclass(frozen=True)
class Selection:
    """The tools a connection is offered: some toolsets (None: all), maybe reads only."""

    toolsets: frozenset[str] | None = None
    read_only: bool = False
    by_default: bool = False  # the toolsets are the default ones: the connection named none

    def admits(self, entry: Entry) -> bool:
        if entry.spec is None:  # the face's own tools (workspace_get_context) are always there
            return True
        if self.read_only and not entry.read_only:
            return False
        return self.toolsets is None or entry.toolset in self.toolsets

    def described(self, known: Sequence[str]) -> dict[str, list[str]]:
        """For workspace_get_context: the toolsets offered and those a connection may add."""
        offered = set(known) if self.toolsets is None else self.toolsets & set(known)
        return {"toolsets": sorted(offered), "moreToolsets": sorted(set(known) - offered)}

    def refusal(self, entry: Entry) -> str:
        """Why ``entry`` is not on this connection, and how to get it."""
        if self.read_only and not entry.read_only:
            return (
                f"Tool {entry.name} changes data, and this connection is read-only "
                "(readonly=true / X-MCP-Readonly); connect without it to use the tool"
            )
        if self.by_default:
            return (
                f"Tool {entry.name} is in the toolset '{entry.toolset}', which the default "
                f"listing leaves out; connect with ?toolsets={DEFAULT},{entry.toolset} "
                f"(or the header X-MCP-Toolsets) to use it"
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
    unknown = sorted(names - set(known) - {EVERY, DEFAULT})
    if unknown:
        raise BadSelection(
            f"Unknown toolset{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
            f" in ?toolsets= / X-MCP-Toolsets; the toolsets are {', '.join(known)} "
            f"({DEFAULT}: all but {', '.join(sorted(OPT_IN))}; {EVERY}: every one)"
        )
    read_only = False
    for value in _values(conn, READONLY_PARAM, READONLY_HEADER):
        flag = value.strip().lower()
        if flag not in TRUE | FALSE:
            raise BadSelection(f"readonly / X-MCP-Readonly takes true or false, not {value!r}")
        read_only = read_only or flag in TRUE
    if EVERY in names:
        return Selection(None, read_only)
    if not names or DEFAULT in names:
        names = (names - {DEFAULT}) | default_toolsets(known)
    return Selection(frozenset(names), read_only, by_default=names == default_toolsets(known))


def default_toolsets(known: Sequence[str]) -> set[str]:
    """The toolsets a connection that names none is offered."""
    return set(known) - OPT_IN


__all__ = [
    "DEFAULT",
    "EVERY",
    "OPT_IN",
    "BadSelection",
    "Selection",
    "default_toolsets",
    "selection_of",
]
