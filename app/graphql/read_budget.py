"""Heavy GraphQL reads count against a per-key budget (issue 35, item 8).

One GraphQL request can read thousands of objects (a page of 100 documents, each with its line
items, duplicates and activity), where a REST call reads one page. Limits per document (depth,
selections, aliases) bound one request; this bounds what a key reads over time, as GitHub's and
Shopify's GraphQL APIs do: each request costs points after it ran, by what its answer holds, a
point per ``OBJECTS_PER_POINT`` objects (at least one point), and each key (API key or OAuth
token family) has ``burst`` points refilled at ``per_minute``. A key whose budget is spent is
answered 429 with ``Retry-After`` before its request is read further; a request that takes the
budget below zero still gets its answer (its cost was not known before), and the key waits the
debt off. Every answer says its cost in the headers GitHub's API uses: ``X-RateLimit-Used`` (this
request's points), ``X-RateLimit-Remaining``, ``X-RateLimit-Limit`` and ``X-RateLimit-Resource:
graphql`` (headers, not the body's ``extensions``, so an answer's JSON is the same with or
without a budget).

The budget is per process, like the expensive calls' (``resolvers.framework.throttle``); a
request that does not authenticate is not counted (it reads nothing).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from resolvers.framework.throttle import TokenBuckets

OBJECTS_PER_POINT = 100
# A dashboard's refresh costs a few points and a script paging through 100,000 documents a
# page of 100 at a time about 2,000: the burst lets either run, the refill holds a key to about
# 100,000 objects a minute (a few seconds of the store's reading) whatever it sends.
BURST = 2_000
PER_MINUTE = 1_000


def objects_in(data: Any) -> int:
    """How many objects (JSON objects: a document, a line item, a group) an answer holds."""
    # Only containers are queued: an answer is mostly scalars, and every answer is counted.
    # Exact types: an answer is JSON-ready data, made of plain dicts and lists.
    count, pending = 0, [data]
    while pending:
        value = pending.pop()
        if type(value) is dict:
            count += 1
            pending += [v for v in value.values() if type(v) is dict or type(v) is list]
        elif type(value) is list:
            pending += [v for v in value if type(v) is dict or type(v) is list]
    return count


@dataclass(frozen=True)
class Cost:
    """What one answer cost its key, and what the key has left."""

    objects: int
    points: int
    remaining: float
    limit: float

    def headers(self) -> dict[str, str]:
        return {
            "x-ratelimit-resource": "graphql",
            "x-ratelimit-used": str(self.points),
            "x-ratelimit-remaining": str(max(0, math.floor(self.remaining))),
            "x-ratelimit-limit": f"{self.limit:g}",
        }


class ReadBudget:
    """The points each key may spend on GraphQL reads."""

    def __init__(
        self,
        burst: float = BURST,
        per_minute: float = PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.points = TokenBuckets(burst, per_minute, clock)
        self.per_minute = per_minute

    def wait_for(self, key: str) -> int | None:
        """Seconds ``key`` must wait before its next request (None: it may send it now)."""
        if self.points.available(key) > 0:
            return None
        return max(1, self.points.wait_for(key, 1))

    def refusal(self, wait: int) -> str:
        return (
            f"This API key spent its GraphQL read budget ({self.points.burst:g} points at once, "
            f"{self.per_minute:g} a minute; a point reads {OBJECTS_PER_POINT} objects); "
            f"retry in {wait} seconds"
        )

    def charge(self, key: str, data: Any) -> Cost:
        """Spend what an answer (its ``data``) cost."""
        objects = objects_in(data)
        points = max(1, math.ceil(objects / OBJECTS_PER_POINT))
        left = self.points.charge(key, points)
        return Cost(objects, points, left, self.points.burst)


# A request with no credential reads nothing, but its document is still parsed and validated on
# the event loop, and not kept (``document_cache``): 600 unique 64 KB documents sent with no key
# held a victim's searches up by ~400 ms at p95 (bench/attacks.py, M1). So what a client address
# may have parsed with no credential is a budget of its own, in KB of document text: the explorer
# with no key yet (its schema query is ~3 KB) never meets it; a flood of large unique documents
# waits after the first few.
ANONYMOUS_BURST_KB = 512
ANONYMOUS_KB_PER_MINUTE = 256


class AnonymousBudget:
    """The KB of GraphQL document text each client address may send with no credential."""

    def __init__(
        self,
        burst_kb: float = ANONYMOUS_BURST_KB,
        kb_per_minute: float = ANONYMOUS_KB_PER_MINUTE,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.kilobytes = TokenBuckets(burst_kb, kb_per_minute, clock)

    def take(self, address: str, text: str) -> int | None:
        """Spend what ``text`` costs the ``address`` (its digest, ``client_address``); the
        seconds to wait when its budget cannot pay (nothing spent), else None."""
        # A document over the size limit is refused after this (``refuse_oversized``) and
        # costs at most the whole burst.
        size = min(max(1, math.ceil(len(text.encode()) / 1024)), self.kilobytes.burst)
        if self.kilobytes.take(address, size):
            return None
        return max(1, self.kilobytes.wait_for(address, size))

    def refusal(self, wait: int) -> str:
        return (
            "Too much GraphQL sent with no credential from this address "
            f"({self.kilobytes.burst:g} KB at once, {self.kilobytes.rate * 60:g} KB a minute); "
            f"send an API key or an OAuth token, or retry in {wait} seconds"
        )
