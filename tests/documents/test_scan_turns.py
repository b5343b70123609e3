"""Reads filtered by a regex take turns per workspace (attack M3 of issue 35: four concurrent
regex counts of one workspace held another workspace's search up on the embedded store)."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable
from typing import Any

from domain.where import WhereClause, WhereCondition
from persistence.documents.query import DocumentQuery
from persistence.documents.scan_turns import has_regex
from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import doc

GUARD_S = 60  # a bound against hanging, not a measure: every wait is on an event

REGEX = WhereClause(conditions=[WhereCondition(field="merchant", op="regex", value="^sh")])
PLAIN = WhereClause(conditions=[WhereCondition(field="merchant", op="eq", value="Shell")])


def test_a_regex_is_found_at_any_depth() -> None:
    nested = WhereClause(
        logic="or",
        conditions=[
            WhereCondition(field="amount", op="gt", value="1"),
            WhereCondition(
                logic="nor",
                conditions=[WhereCondition(field="merchant", op="regex", value="x")],
            ),
        ],
    )
    assert has_regex(nested) and has_regex(REGEX)
    assert not has_regex(PLAIN) and not has_regex(None)


async def test_regex_reads_take_turns_per_workspace(
    store: Store, alice: Tenant, bob: Tenant
) -> None:
    for tenant in (alice, bob):
        await store.documents.writes.insert_many(
            tenant.org_id, [doc(f"doc_{tenant.org_id}_{n}", merchant="Shell") for n in range(3)]
        )
    label: contextvars.ContextVar[str] = contextvars.ContextVar("label")
    entered: list[str] = []
    arrived = asyncio.Event()
    release = asyncio.Event()
    run = store.documents.collection.run

    async def held(awaitable: Awaitable[Any]) -> Any:
        """The store call of each read waits here until the test releases them."""
        entered.append(label.get())
        arrived.set()
        await release.wait()
        return await run(awaitable)

    store.documents.collection.run = held  # type: ignore[method-assign]

    async def count(name: str, tenant: Tenant, where: WhereClause) -> int:
        label.set(name)
        return await store.documents.reads.count(tenant.org_id, DocumentQuery(where=where))

    async def until(seen: set[str]) -> None:
        while not seen <= set(entered):
            arrived.clear()
            await asyncio.wait_for(arrived.wait(), GUARD_S)

    first = asyncio.create_task(count("alice-1", alice, REGEX))
    await until({"alice-1"})
    second = asyncio.create_task(count("alice-2", alice, REGEX))
    # Started after alice's second regex read, these reach the store while it waits: another
    # workspace's regex read and alice's own read without a regex.
    others = [
        asyncio.create_task(count("bob", bob, REGEX)),
        asyncio.create_task(count("alice-plain", alice, PLAIN)),
    ]
    await until({"bob", "alice-plain"})
    assert "alice-2" not in entered  # its turn comes after alice-1's
    release.set()
    assert await asyncio.wait_for(asyncio.gather(first, second, *others), GUARD_S) == [3] * 4
    assert entered.index("alice-2") > entered.index("alice-1")
    # The turns are forgotten when nobody waits (no lock kept per workspace ever seen).
    assert store.documents.collection._scan_turns._locks == {}
