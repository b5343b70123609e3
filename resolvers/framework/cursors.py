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
from persistence.documents import KEY_ROW, KEY_VALUE
from resolvers.framework.errors import BadRequest

PURPOSE = "cursor"
NOT_A_CURSOR_WHY = "not a cursor returned by this capability"
SCALARS = (str, int, float, bool, type(None))
# A keyset cursor holds a page key as the repository writes it (``KEY_VALUE``: the last row's
# sort value, ``KEY_ROW``: its id; ``persistence.documents.pages``); a ranked page's cursor
# holds how many ranked documents came before the next page (``OFFSET``: ranking happens
# above persistence, so its key is named here).
OFFSET = "o"
QUERY = "q"


def refused_cursor(why: str) -> BadRequest:
    """The 400 of a refused cursor, ``cursor: <why>``, naming the input ``cursor`` (a face
    that calls it otherwise renames it: ``BadRequest.renamed``)."""
    return BadRequest.naming([("cursor", why)], opening="")


def not_a_cursor() -> BadRequest:
    """The 400 of a cursor the server did not make for this query:
    ``cursor: not a cursor returned by this capability``."""
    return refused_cursor(NOT_A_CURSOR_WHY)


def fingerprint(query: dict[str, Any]) -> str:
    canonical = json.dumps(query, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def encode(state: dict[str, Any], query_print: str, keyring: Keyring) -> str:
    """A signed cursor for ``state`` (a page key, ``KEY_VALUE`` and ``KEY_ROW``, or a ranked
    page's ``OFFSET``)."""
    payload = {**{k: _encode_value(v) for k, v in state.items()}, QUERY: query_print}
    return keyring.sign(PURPOSE, json.dumps(payload, separators=(",", ":")).encode())


def decode(cursor: str, query_print: str, keyring: Keyring) -> dict[str, Any]:
    """The state in ``cursor``; 400 when it is not the server's, malformed or of another query."""
    try:
        payload = json.loads(keyring.verify(PURPOSE, cursor))
    except (InvalidToken, ValueError):
        raise not_a_cursor() from None
    if not isinstance(payload, dict) or not set(payload) <= {KEY_VALUE, KEY_ROW, OFFSET, QUERY}:
        raise not_a_cursor()
    if payload.pop(QUERY, None) != query_print:
        raise refused_cursor("belongs to a different query; repeat the same parameters")
    return {key: _decoded(key, value) for key, value in payload.items()}


def _encode_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$d": value.isoformat()}
    return value


def _decoded(key: str, value: Any) -> Any:
    """A cursor value checked against what ``encode`` can have written for ``key``."""
    if key == OFFSET and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if key == KEY_ROW and isinstance(value, str):
        return value
    if key == KEY_VALUE:
        if isinstance(value, SCALARS):
            return value
        if isinstance(value, dict) and set(value) == {"$d"} and isinstance(value["$d"], str):
            try:
                return datetime.fromisoformat(value["$d"])
            except ValueError:
                pass
    raise not_a_cursor()


def encode_offset(offset: int, query_print: str, keyring: Keyring) -> str:
    """A ranked page's cursor: the next page starts ``offset`` documents into the ranking."""
    return encode({OFFSET: offset}, query_print, keyring)


def offset_of(state: dict[str, Any], default: int | None = 0) -> int:
    """The ranking offset a decoded cursor holds; ``default`` when it holds none (None: a 400,
    the cursor must be a ranked page's)."""
    offset = state.get(OFFSET, default)
    if not isinstance(offset, int) or offset < 0:
        raise not_a_cursor()
    return offset


def encode_key(value: Any, row_id: str, query_print: str, keyring: Keyring) -> str:
    """A keyset cursor: the next page starts after the row ``row_id`` whose sort value is
    ``value``."""
    return encode({KEY_VALUE: value, KEY_ROW: row_id}, query_print, keyring)


def key_of(state: dict[str, Any]) -> tuple[Any, str]:
    """The (sort value, row id) a decoded keyset cursor holds; a 400 when it holds none."""
    if KEY_VALUE not in state or KEY_ROW not in state:
        raise not_a_cursor()
    return state[KEY_VALUE], state[KEY_ROW]


def keyset_after(cursor: str | None, query_print: str, keyring: Keyring) -> tuple[Any, str] | None:
    """The (sort value, id) a keyset page starts after: None for the first page."""
    if cursor is None:
        return None
    return key_of(decode(cursor, query_print, keyring))


def keyset_next(
    rows: list[dict[str, Any]], limit: int, sort_key: str, query_print: str, keyring: Keyring
) -> tuple[list[dict[str, Any]], str | None]:
    """A page read with ``limit + 1`` rows: the page and the cursor after its last row (None
    when nothing follows)."""
    if len(rows) <= limit:
        return rows, None
    page = rows[:limit]
    last = page[-1]
    return page, encode_key(last[sort_key], last["_id"], query_print, keyring)
