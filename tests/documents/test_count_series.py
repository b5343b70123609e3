"""documents.count's fillGaps: every bucket of a range, the empty ones with count 0."""

from __future__ import annotations

from datetime import date
from typing import Any

import httpx
import pytest

from persistence.documents.buckets import bucket_count, bucket_keys, key_day
from persistence.store import Store
from tests.conftest import Tenant
from tests.documents.conftest import call, doc, result


def between(first: str, before: str) -> dict[str, Any]:
    return {
        "conditions": [
            {"field": "docDate", "op": "gte", "value": first},
            {"field": "docDate", "op": "lt", "value": before},
        ]
    }


def series(answer: dict[str, Any]) -> list[tuple[Any, int]]:
    return [(group["key"], group["count"]) for group in answer["groups"]]


NOV_TO_FEB = ["2024-11", "2024-12", "2025-01", "2025-02"]


@pytest.mark.parametrize(
    ("group_by", "first", "last", "keys"),
    [
        # ISO weeks: the Monday 2024-12-30 starts 2025's first week.
        ("week", date(2024, 12, 25), date(2025, 1, 6), ["2024-W52", "2025-W01", "2025-W02"]),
        ("month", date(2024, 11, 30), date(2025, 2, 1), [*NOV_TO_FEB]),
        ("day", date(2024, 2, 28), date(2024, 3, 1), ["2024-02-28", "2024-02-29", "2024-03-01"]),
        ("year", date(2023, 6, 1), date(2024, 1, 1), ["2023", "2024"]),
        ("month", date(2024, 3, 1), date(2024, 2, 1), []),
    ],
)
def test_bucket_keys(group_by: str, first: date, last: date, keys: list[str]) -> None:
    assert list(bucket_keys(group_by, first, last)) == keys
    assert bucket_count(group_by, first, last) == len(keys)
    for key in keys:
        assert key_day(group_by, key) <= last  # a key names its bucket's first day
        assert list(bucket_keys(group_by, key_day(group_by, key), key_day(group_by, key))) == [key]


async def test_months_of_the_where_range_with_zeros(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    body = {"groupBy": "month", "fillGaps": True, "where": between("2023-10-01", "2024-05-01")}
    answer = result(await call(client, seeded, "documents.count", body))
    assert series(answer) == [
        ("2023-10", 0),
        ("2023-11", 0),
        ("2023-12", 1),
        ("2024-01", 2),
        ("2024-02", 2),
        ("2024-03", 0),
        ("2024-04", 0),
    ]
    empty = answer["groups"][0]
    assert empty["totals"] == [] and empty["preferredTotal"]["amount"] == 0
    # Without the option the same call lists only the months that have documents.
    holes = result(await call(client, seeded, "documents.count", {**body, "fillGaps": False}))
    assert series(holes) == [("2023-12", 1), ("2024-01", 2), ("2024-02", 2)]


async def test_an_open_range_runs_from_the_first_to_the_last_document(
    client: httpx.AsyncClient, seeded: Tenant
) -> None:
    # 2023-12-31 (a Sunday, ISO week 2023-W52) to 2024-02-03 (2024-W05); undated last.
    answer = result(
        await call(client, seeded, "documents.count", {"groupBy": "week", "fillGaps": True})
    )
    assert series(answer) == [
        ("2023-W52", 1),
        ("2024-W01", 1),
        ("2024-W02", 0),
        ("2024-W03", 1),
        ("2024-W04", 0),
        ("2024-W05", 2),
        (None, 1),
    ]
    # One bound given: the other end is the data's.
    since = {"conditions": [{"field": "docDate", "op": "gt", "value": "2024-01-31"}]}
    days = result(
        await call(
            client, seeded, "documents.count", {"groupBy": "day", "fillGaps": True, "where": since}
        )
    )
    assert series(days) == [("2024-02-01", 0), ("2024-02-02", 0), ("2024-02-03", 2)]


async def test_no_documents_and_an_open_range_is_no_buckets(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    answer = result(
        await call(client, alice, "documents.count", {"groupBy": "month", "fillGaps": True})
    )
    assert answer["count"] == 0 and answer["groups"] == []


async def test_more_than_400_buckets_is_a_400_naming_the_field(
    client: httpx.AsyncClient, store: Store, alice: Tenant
) -> None:
    wide = {"groupBy": "day", "fillGaps": True, "where": between("2023-01-01", "2024-03-01")}
    refused = await call(client, alice, "documents.count", wide)
    assert refused.status_code == 400
    message = refused.json()["error"]["errorMessage"]
    assert "fillGaps" in message and "425 days" in message and "400" in message
    # The same range in months fits.
    months = result(await call(client, alice, "documents.count", {**wide, "groupBy": "month"}))
    assert len(months["groups"]) == 14
    # An open range too wide by its data is refused the same way.
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("old", docDate=date(2020, 1, 1)), doc("new", docDate=date(2024, 1, 1))],
    )
    by_data = await call(client, alice, "documents.count", {"groupBy": "day", "fillGaps": True})
    assert by_data.status_code == 400
    assert "1462 days" in by_data.json()["error"]["errorMessage"]
    by_week = {"groupBy": "week", "fillGaps": True}
    weeks = result(await call(client, alice, "documents.count", by_week))
    assert len(weeks["groups"]) == 210 and sum(g["count"] for g in weeks["groups"]) == 2


@pytest.mark.parametrize("group_by", [None, "category"])
async def test_fill_gaps_needs_a_time_grouping(
    client: httpx.AsyncClient, seeded: Tenant, group_by: str | None
) -> None:
    body: dict[str, Any] = {"fillGaps": True, **({"groupBy": group_by} if group_by else {})}
    refused = await call(client, seeded, "documents.count", body)
    assert refused.status_code == 400
    assert "fillGaps: needs groupBy" in refused.json()["error"]["errorMessage"]
    not_a_bool = await call(client, seeded, "documents.count", {"groupBy": "day", "fillGaps": 1})
    assert not_a_bool.status_code == 400
