"""JSON request bodies as every face reads them: parsed, and bounded in nesting depth.

``json.loads`` recurses per nesting level, so 100,000 ``[`` raise ``RecursionError`` (a 500 if
nobody catches it), and a body a little under the interpreter's limit parses but makes later
recursive code (argument conversion, logging, fingerprints) fail instead. No capability input nests
deeper than a dozen levels, so bodies deeper than ``MAX_DEPTH`` are refused outright.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

MAX_DEPTH = 64


class MalformedJson(ValueError):
    """The body is not JSON, or nests deeper than ``MAX_DEPTH``; the message says which.

    ``detail`` is what is wrong, without the faces' common opening ("Malformed JSON body"), for
    a face whose protocol names the failure its own way (MCP's JSON-RPC "Parse error")."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"Malformed JSON body: {detail}")
        self.detail = detail


def parse_json(raw: bytes | str) -> Any:
    """The JSON value of ``raw``; ``MalformedJson`` when it is not JSON or nests too deep."""
    try:
        value = json.loads(raw)
    except RecursionError:
        raise MalformedJson(_too_deep()) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedJson(str(exc)) from None
    # A body with fewer brackets than the limit cannot nest deeper: most bodies skip the scan.
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and nesting_depth(data) > MAX_DEPTH:
        raise MalformedJson(_too_deep())
    return value


def _too_deep() -> str:
    return f"arrays and objects nest more than {MAX_DEPTH} levels deep"


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in the valid JSON text ``data``.

    Done with bytes operations and one numpy pass (a Python walk of a parsed 9 MB body of
    three million empty arrays takes a second, this a few dozen milliseconds): escaped
    backslashes and quotes are dropped, so every quote left opens or closes a string; the text
    between strings keeps its brackets, whose running count is the depth.
    """
    plain = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    outside_strings = b"".join(plain.split(b'"')[0::2])
    brackets = np.frombuffer(outside_strings.translate(None, _NOT_BRACKETS), dtype=np.uint8)
    if brackets.size == 0:
        return 0
    opens = (brackets == ord("[")) | (brackets == ord("{"))
    return int(np.cumsum(opens.astype(np.int32) * 2 - 1, dtype=np.int32).max())


_NOT_BRACKETS = bytes(range(256)).translate(None, b"[]{}")
