"""Opaque pagination cursors, signed by the server and bound to the query that produced them.

A cursor is a token of the keyring (``sign("cursor", …)``): a small JSON object — the last row's
sort value and id (keyset pagination in filter mode) or an offset (search mode), and a
fingerprint of the query so a cursor cannot be replayed against a different one — with an HMAC
tag. A cursor the server did not make, or one altered by a byte, is a 400: its values reach the
MongoDB filter, so they must never be the client's. As a second line, the decoded values must be
plain scalars of the expected kinds (no ``{"$where": …}`` can come back even with a leaked key).
The workspace is not in the cursor: every read is scoped by the caller's workspace anyway.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from engines.keyring import InvalidToken, Keyring
from resolvers.framework.errors import BadRequest

PURPOSE = "cursor"
NOT_A_CURSOR = "cursor: not a cursor returned by this capability"
SCALARS = (str, int, float, bool, type(None))


def fingerprint(query: dict[str, Any]) -> str:
    canonical = json.dumps(query, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode(state: dict[str, Any], query_print: str, keyring: Keyring) -> str:
    """A signed cursor for ``state`` (``{"v": sort value, "id": last id}`` or ``{"o": offset}``)."""
    payload = {**{k: _encode_value(v) for k, v in state.items()}, "q": query_print}
    return keyring.sign(PURPOSE, json.dumps(payload, separators=(",", ":")).encode())


def decode(cursor: str, query_print: str, keyring: Keyring) -> dict[str, Any]:
    """The state in ``cursor``; 400 when it is not the server's, malformed or of another query."""
    try:
        payload = json.loads(keyring.verify(PURPOSE, cursor))
    except (InvalidToken, ValueError):
        raise BadRequest(NOT_A_CURSOR) from None
    if not isinstance(payload, dict) or not set(payload) <= {"v", "id", "o", "q"}:
        raise BadRequest(NOT_A_CURSOR)
    if payload.pop("q", None) != query_print:
        raise BadRequest("cursor: belongs to a different query; repeat the same parameters")
    return {key: _decoded(key, value) for key, value in payload.items()}


def _encode_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$d": value.isoformat()}
    return value


def _decoded(key: str, value: Any) -> Any:
    """A cursor value checked against what ``encode`` can have written for ``key``."""
    if key == "o" and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if key == "id" and isinstance(value, str):
        return value
    if key == "v":
        if isinstance(value, SCALARS):
            return value
        if isinstance(value, dict) and set(value) == {"$d"} and isinstance(value["$d"], str):
            try:
                return datetime.fromisoformat(value["$d"])
            except ValueError:
                pass
    raise BadRequest(NOT_A_CURSOR)


def keyset_after(cursor: str | None, query_print: str, keyring: Keyring) -> tuple[Any, str] | None:
    """The (sort value, id) a keyset page starts after: None for the first page."""
    if cursor is None:
        return None
    state = decode(cursor, query_print, keyring)
    if "v" not in state or "id" not in state:
        raise BadRequest(NOT_A_CURSOR)
    return state["v"], state["id"]


def keyset_next(
    rows: list[dict[str, Any]], limit: int, sort_key: str, query_print: str, keyring: Keyring
) -> tuple[list[dict[str, Any]], str | None]:
    """A page read with ``limit + 1`` rows: the page and the cursor after its last row (None
    when nothing follows)."""
    if len(rows) <= limit:
        return rows, None
    page = rows[:limit]
    last = page[-1]
    return page, encode({"v": last[sort_key], "id": last["_id"]}, query_print, keyring)
