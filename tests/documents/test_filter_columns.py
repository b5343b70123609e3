"""The search index's filter fields by column (``resolvers.services.documents.filter_columns``): a
filter evaluated once per distinct combination of the fields it reads selects exactly the rows a
test of every row's fields selects, through rewrites and a snapshot's encode/decode."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from persistence.documents.matching import predicate
from resolvers.services.documents import filter_columns
from resolvers.services.documents.filter_columns import FilterColumns, filter_fields

SELECTORS: list[dict[str, Any]] = [
    {"currency": "EUR"},
    {"currency": {"$ne": "EUR"}},
    {"$and": [{"currency": "EUR"}, {"category": "Meals"}]},
    {"$or": [{"merchant": "Shell"}, {"category": {"$in": ["Meals", "Fuel"]}}]},
    {"$nor": [{"category": "Meals"}], "tags": "travel"},
    {"expenseLocation.primary.country": "DE"},
    {"category": {"$exists": False}},
]


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    record: dict[str, Any] = {
        "_id": f"doc_{i}",
        "currency": rng.choice(["EUR", "USD", None]),
        "merchant": rng.choice(["Shell", "REWE", "Aral"]),
        "tags": rng.choice([["travel"], ["travel", "q3"], []]),
        "expenseLocation": {"primary": {"country": rng.choice(["DE", "MY"]), "city": None}},
    }
    if rng.random() < 0.8:
        record["category"] = rng.choice(["Meals", "Fuel", "Travel"])
    return record


@pytest.mark.parametrize("one_key", [filter_columns.ONE_KEY, 1])
def test_select_matches_a_test_of_every_row(one_key: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(filter_columns, "ONE_KEY", one_key)  # 1: the records' np.unique
    rng = random.Random(5)
    columns = FilterColumns()
    kept: list[dict[str, Any]] = []
    for step in range(400):
        row = rng.randrange(len(kept) + 1)
        record = _record(rng, row)
        columns.set(row, record)
        if row == len(kept):
            kept.append({})
        kept[row] = filter_fields(record)
        if step % 50 == 49:
            values, codes = columns.encode()
            columns = FilterColumns.decode(values, codes, len(kept))
    assert columns.rows() == kept
    rows = np.arange(len(kept), dtype=np.int64)[::2]
    for selector in SELECTORS:
        test = predicate(selector)
        expected = [row for row in rows.tolist() if test(kept[row])]
        assert columns.select(rows, selector).tolist() == expected, selector
