"""Attack M3 (issue 35): a regex that passes the checks must not run past its time budget where
fincap matches it itself. The in-memory matcher (ranked search evaluates a where-clause on the
search index's fields) used Python's backtracking ``re``: it now uses RE2, whose matching time
is linear in the text whatever the pattern. A catastrophic pattern is given to it directly
(the where compiler would refuse it first): with ``re`` it runs for minutes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Awaitable
from typing import Any

import httpx
import pytest

from persistence.documents.matching import matches
from persistence.errors import QueryTimeout
from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call

REGEX_COUNT = {"where": {"conditions": [{"field": "summary", "op": "regex", "value": "caf"}]}}

# Run in a child process: Python's ``re`` holds the GIL while it backtracks, so a thread of
# this process could not even time out.
CATASTROPHIC = """
from persistence.documents.matching import matches
selector = {"summary": {"$regex": "(a+)+$", "$options": "i"}}
print(matches(selector, {"summary": "a" * 30 + "!"}))
"""


def test_the_in_memory_matcher_is_linear_whatever_the_pattern() -> None:
    # A hang guard, not a speed bound: RE2 answers in microseconds, re in hours.
    done = subprocess.run(
        [sys.executable, "-c", CATASTROPHIC], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "False", done.stderr  # no match: "!" is in the way of "$"


def test_the_in_memory_matcher_is_case_insensitive_like_the_store() -> None:
    assert matches({"merchant": {"$regex": "^STAR", "$options": "i"}}, {"merchant": "Starbucks"})
    assert not matches({"merchant": {"$regex": "^bucks", "$options": "i"}}, {"merchant": "Star"})


async def test_a_regex_matched_here_past_its_time_limit_is_a_400_naming_the_field(
    client: httpx.AsyncClient, store: Store, seeded: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The embedded store's face: fincap matches the regex and checks its budget between
    batches (a budget of 0 is spent at the first)."""
    store.documents.collection.regex_here = True
    monkeypatch.setattr("persistence.documents.regex_reads.QUERY_TIME_LIMIT_MS", 0)
    response = await call(client, seeded, "documents.count", REGEX_COUNT)
    assert response.status_code == 400, response.text
    message = response.json()["error"]["errorMessage"]
    assert message.startswith("The query exceeded its time limit (a regex on summary)"), message


async def test_a_store_regex_past_its_max_time_is_a_400_naming_the_field(
    client: httpx.AsyncClient, store: Store, seeded: Tenant
) -> None:
    """MongoDB's face: the store matches the regex and stops it at ``maxTimeMS``."""
    store.documents.collection.regex_here = False

    async def timed_out(awaitable: Awaitable[Any]) -> Any:
        if hasattr(awaitable, "close"):
            awaitable.close()  # never awaited: no warning
        raise QueryTimeout("query exceeded its time limit")

    store.documents.collection.run = timed_out  # type: ignore[method-assign]
    response = await call(client, seeded, "documents.count", REGEX_COUNT)
    assert response.status_code == 400, response.text
    message = response.json()["error"]["errorMessage"]
    assert message.startswith("The query exceeded its time limit (a regex on summary)"), message
