"""A failed call tells an assistant how to fix it: the known names, the operators a field's
type takes, the format a value must have (the same messages as REST)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.conftest import Tenant
from tests.mcp.test_mcp_keys import call


def condition(field: str, op: str, value: Any) -> dict[str, Any]:
    return {"where": {"conditions": [{"field": field, "op": op, "value": value}]}}


@pytest.mark.parametrize(
    ("arguments", "fix"),
    [
        ({"limitt": 3}, "limitt: unknown property (known: query, limit, sortBy"),
        (condition("vendor", "eq", "x"), "field 'vendor' cannot be filtered here (allowed: amount"),
        (condition("amount", "regex", "1"), "money fields take eq, ne, gt, gte, lt, lte, in"),
        (condition("docDate", "gte", "01/10/2026"), "expected an ISO date (YYYY-MM-DD)"),
        ({"sortBy": "price"}, "sortBy: Input should be 'docDate', 'amount'"),
    ],
)
async def test_a_refused_call_says_how_to_fix_it(
    http: httpx.AsyncClient, alice: Tenant, arguments: dict[str, Any], fix: str
) -> None:
    failed = await call(http, "documents_search", arguments,
                        Authorization=f"Bearer {alice.api_key}")  # fmt: skip
    result = failed["result"]
    assert result["isError"] is True
    assert fix in result["content"][0]["text"]
