"""An independent, pure-Python reading of the where-clause semantics, for property tests.

It works on API-level values (Decimal money, date/datetime) and on the clause as the user
wrote it, never on the compiled MongoDB filter, so it can catch compiler mistakes.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

MISSING = object()


def lookup(document: dict[str, Any], path: str) -> Any:
    node: Any = document
    for part in ("_id" if path == "id" else path).split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def _normalise(field: str, value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if field in ("amount", "taxAmount", "subtotal") and isinstance(
        value, int | float | str | Decimal
    ):
        return Decimal(str(value))
    if field == "docDate" and isinstance(value, str):
        return datetime.combine(date.fromisoformat(value), time(), tzinfo=UTC)
    if field == "docDate" and isinstance(value, date) and not isinstance(value, datetime):
        return datetime.combine(value, time(), tzinfo=UTC)
    if field in (
        "currency",
        "preferredCurrency",
        "expenseLocation.primary.countryCode",
    ) and isinstance(value, str):
        return value.upper()
    return value


def matches(document: dict[str, Any], clause: dict[str, Any]) -> bool:
    results = [
        matches(document, c) if "conditions" in c else condition_matches(document, c)
        for c in clause["conditions"]
    ]
    if clause.get("logic") == "nor":
        return not any(results)
    return any(results) if clause.get("logic") == "or" else all(results)


def condition_matches(document: dict[str, Any], condition: dict[str, Any]) -> bool:
    field, op, value = condition["field"], condition["op"], condition.get("value")
    raw = lookup(document, field)
    present = raw is not MISSING and raw is not None
    actual = _normalise(field, raw) if present else None
    if op == "exists":
        return present == value
    if op == "regex":
        return (
            present
            and isinstance(actual, str)
            and re.search(value, actual, re.IGNORECASE) is not None
        )
    if op in ("in", "nin"):
        wanted = [_normalise(field, v) for v in value]
        inside = present and actual in wanted
        return inside if op == "in" else not inside
    expected = _normalise(field, value)
    if op == "eq":
        return present and actual == expected
    if op == "ne":
        return not (present and actual == expected)
    if not present:
        return False
    return {
        "gt": actual > expected,
        "gte": actual >= expected,
        "lt": actual < expected,
        "lte": actual <= expected,
    }[op]
