"""Opaque pagination cursors, bound to the query that produced them.

A cursor is URL-safe base64 of a small JSON object: the last row's sort value and id (keyset
pagination in filter mode) or an offset (search mode), and a fingerprint of the query so a
cursor cannot be replayed against a different one. The workspace is not in the cursor: every
read is scoped by the caller's workspace anyway.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import datetime
from typing import Any

from resolvers.errors import BadRequest


def fingerprint(query: dict[str, Any]) -> str:
    canonical = json.dumps(query, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def _encode_value(value: Any) -> Any:
    if isinstance(value, datetime):
        return {"$d": value.isoformat()}
    return value


def _decode_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$d"}:
        return datetime.fromisoformat(value["$d"])
    return value


def encode(state: dict[str, Any], query_print: str) -> str:
    payload = {**{k: _encode_value(v) for k, v in state.items()}, "q": query_print}
    raw = json.dumps(payload, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode(cursor: str, query_print: str) -> dict[str, Any]:
    """The state stored in ``cursor``; 400 when it is malformed or from another query."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError("not an object")
        state = {k: _decode_value(v) for k, v in payload.items()}
    except (ValueError, TypeError):
        raise BadRequest("cursor: not a cursor returned by this capability") from None
    if state.pop("q", None) != query_print:
        raise BadRequest("cursor: belongs to a different query; repeat the same parameters")
    return state
