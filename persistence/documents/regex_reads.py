"""Regex conditions matched in fincap's process, with RE2, where the store would use ``re``.

The embedded store (SecantusDB) evaluates ``$regex`` with Python's backtracking ``re`` on every
document the rest of a filter leaves, in one interpreter shared by all its request threads:
while one workspace's regex scan runs, another workspace's read waits for that interpreter.
The safe subset (``persistence.safe_regex``) bounds one document's cost, not the scan's, and
taking turns per workspace (``scan_turns``) left four concurrent regex counts of one workspace
holding another's search up by +75 to +173 ms at p95 (issue 35, attack M3).

So on the embedded store a read whose where-clause has a ``regex`` runs in two steps:

1. the store reads, by every condition but the regex ones (the workspace, the archive and
   export filters, words, names, the keyset position, and the where-clause's top-level
   conditions without a regex), only the ids and the fields the rest of the clause tests;
   fincap evaluates that rest on them (``matching.predicate``: MongoDB's semantics, RE2's
   linear-time matching, about 8 µs on a 1,000-character summary where ``re`` takes 240 µs);
2. the read itself (a page, a count, totals, groups) runs with those conditions replaced by
   "the id is one of these" (``ids_filter``), which the store checks with one lookup per
   document. A count or a list of candidate ids needs no second step.

The store then does plain index and scan work. MongoDB runs ``$regex`` in C++ threads that
share no interpreter and honours ``maxTimeMS`` within a scan, so there the regex is sent as it
is. The first step runs within the read's time limit (``QUERY_TIME_LIMIT_MS``), checked between
batches; past it the read fails with ``QueryTimeout`` naming the fields the regexes test.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from motor.motor_asyncio import AsyncIOMotorCollection
from pymongo.errors import ExecutionTimeout

from persistence.documents.matching import Predicate, UnsupportedFilter, predicate
from persistence.documents.query import DocumentQuery, match_stages
from persistence.errors import QueryTimeout
from persistence.where import QUERY_TIME_LIMIT_MS, compile_where

# Rows evaluated between two yields to the event loop: RE2 holds the interpreter while it
# matches (~8 µs a 1,000-character field), so a large workspace is matched in slices of a few
# milliseconds and other requests run between them.
BATCH = 500


@dataclass(frozen=True)
class RegexRead:
    """What a regex-filtered read runs: ``query`` (its regex conditions replaced by the ids
    that satisfy them, when fincap matched them) and those ids in the store's order (None when
    the store evaluates the regex itself)."""

    query: DocumentQuery
    ids: list[str] | None = None


def has_regex_operator(selector: Any) -> bool:
    """Whether a compiled filter tests ``$regex`` anywhere."""
    if isinstance(selector, Mapping):
        return any(key == "$regex" or has_regex_operator(v) for key, v in selector.items())
    if isinstance(selector, list):
        return any(has_regex_operator(item) for item in selector)
    return False


def conjuncts(selector: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``selector`` as the conditions that must all hold (a top-level ``$and`` opened)."""
    parts: list[dict[str, Any]] = []
    for key, value in selector.items():
        if key == "$and":
            for part in value:
                parts.extend(conjuncts(part))
        else:
            parts.append({key: value})
    return parts


def read_paths(selector: Mapping[str, Any]) -> set[str]:
    """The stored paths a compiled filter tests."""
    paths: set[str] = set()
    for key, value in selector.items():
        if key in ("$and", "$or", "$nor"):
            for part in value:
                paths |= read_paths(part)
        else:
            paths.add(key)
    return paths


def regex_fields(selector: Mapping[str, Any]) -> tuple[str, ...]:
    """The stored paths a compiled filter tests with ``$regex``, sorted."""
    paths: set[str] = set()
    for key, value in selector.items():
        if key in ("$and", "$or", "$nor"):
            for part in value:
                paths.update(regex_fields(part))
        elif isinstance(value, Mapping) and "$regex" in value:
            paths.add(key)
    return tuple(sorted(paths))


def ids_filter(ids: list[str]) -> dict[str, Any]:
    """A filter the embedded store checks with one dictionary lookup per document: "the id is
    one of ``ids``". (Its ``$in`` compares each document with every listed value: 1,000 ids
    over 2,000 documents took 0.9 s, this 59 ms against 38 ms for no filter at all.)"""
    member = {"$getField": {"field": "$_id", "input": {"$literal": dict.fromkeys(ids, True)}}}
    return {"$expr": {"$eq": [member, True]}}


def _plain_id(value: Any) -> bool:
    """Whether ``value`` can be a key of ``ids_filter``'s object."""
    return isinstance(value, str) and "." not in value and not value.startswith("$")


async def matched_here(
    docs: AsyncIOMotorCollection,
    workspace_id: str,
    query: DocumentQuery,
    options: Mapping[str, Any],
) -> RegexRead | None:
    """``query`` with its regex conditions matched here (``RegexRead.ids`` the documents of
    ``query``); None when the clause holds something ``matching`` does not read (the store
    then evaluates it)."""
    compiled = compile_where(query.where, dict(query.where_fields))
    parts = conjuncts(compiled)
    kept = [part for part in parts if not has_regex_operator(part)]
    local = [part for part in parts if has_regex_operator(part)]
    try:
        test = predicate({"$and": local})
    except UnsupportedFilter:
        return None
    fields = sorted(read_paths({"$and": local}))
    rest = replace(query, where=None)
    deadline = time.monotonic() + QUERY_TIME_LIMIT_MS / 1000
    pipeline = [
        *match_stages(workspace_id, query.archived, *kept, *rest.parts()),
        {"$project": {"_id": 1, **dict.fromkeys(fields, 1)}},
    ]
    cursor = docs.aggregate(pipeline, maxTimeMS=QUERY_TIME_LIMIT_MS, batchSize=BATCH, **options)
    ids: list[str] = []
    too_long = f"regex read past its {QUERY_TIME_LIMIT_MS // 1000} s time limit"
    try:
        while rows := await cursor.to_list(BATCH):
            found = _matching(test, rows)
            if found is None:
                return None
            ids.extend(found)
            if time.monotonic() > deadline:
                raise QueryTimeout(too_long, regex_fields(compiled))
            await asyncio.sleep(0)  # the event loop's other requests between slices
    except ExecutionTimeout:
        raise QueryTimeout(too_long, regex_fields(compiled)) from None
    finally:
        await cursor.close()
    return RegexRead(replace(query, compiled=(*kept, ids_filter(ids))), ids)


def _matching(test: Predicate, rows: list[Mapping[str, Any]]) -> list[str] | None:
    """The ids of ``rows`` that pass ``test``; None when one cannot be read here (an array
    on a path, an id that is not a plain string)."""
    try:
        found = [row["_id"] for row in rows if test(row)]
    except UnsupportedFilter:
        return None
    return found if all(_plain_id(value) for value in found) else None
