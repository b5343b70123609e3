"""The where-clause compiler: a typed clause in, a MongoDB filter out.

Rules: fields come from a per-capability whitelist and each has a type;
each operator is checked against that type; values are coerced (ISO dates, numbers, money in
cents, within the range storage holds); ``regex`` is a plain, length-bounded pattern compiled
first and matched case-insensitively, from a subset that cannot backtrack catastrophically
(``persistence/safe_regex.py``); ``in``/``nin``/``all`` take arrays; ``exists`` takes a
boolean (null counts as missing; a tag list counts when it holds a tag); ``ne``/``nin`` keep
documents that miss the field, as MongoDB does. The caller adds the workspace and archive
filters outside the compiled clause.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal, InvalidOperation
from typing import Any

import re2

from domain.where import OPS_BY_TYPE, FieldType, WhereClause, WhereCondition
from persistence.money import to_cents
from persistence.safe_regex import UnsafePattern, check_pattern

MAX_REGEX_LENGTH = 200
MAX_LIST_VALUES = 100
MAX_DEPTH = 4
MAX_CONDITIONS = 100
# Money is stored as int64 cents; the schema allows 13 integer digits (schema/money.py).
MAX_MONEY = Decimal(10) ** 13
QUERY_TIME_LIMIT_MS = 15000
# Aggregations over a whole workspace (documents.count) read every matching document by design.
AGGREGATE_TIME_LIMIT_MS = 60000

# Inline flags such as (?i) or (?s:…) would let a pattern change how it is matched.
# Every pattern must also be one RE2 reads: where fincap matches itself, it matches with RE2.
_RE2_CHECK = re2.Options()
_RE2_CHECK.case_sensitive = False
_RE2_CHECK.log_errors = False
INLINE_FLAGS = re.compile(r"\(\?[aiLmsux-]+[:)]")


@dataclass(frozen=True)
class FieldSpec:
    """A filterable field: its type, where it is stored, and its allowed values for enums."""

    type: FieldType
    path: str | None = None
    values: frozenset[str] = frozenset()
    upper: bool = False  # currency codes compare upper-cased


class WhereError(ValueError):
    """A condition that cannot be compiled; ``location`` names it (``where.conditions[2]``)."""

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"{location}: {reason}")
        self.location = location
        self.reason = reason


def compile_where(
    clause: WhereClause | None, fields: dict[str, FieldSpec], location: str = "where"
) -> dict[str, Any]:
    """The MongoDB filter for ``clause`` (``{}`` when there is none)."""
    if clause is None:
        return {}
    counter = [0]
    return _compile_clause(clause, fields, location, depth=1, counter=counter)


def _compile_clause(
    clause: WhereClause | WhereCondition,
    fields: dict[str, FieldSpec],
    location: str,
    depth: int,
    counter: list[int],
) -> dict[str, Any]:
    if depth > MAX_DEPTH:
        raise WhereError(location, f"clauses nest at most {MAX_DEPTH} levels deep")
    parts = []
    for index, condition in enumerate(clause.conditions or []):
        here = f"{location}.conditions[{index}]"
        if condition.is_group:
            parts.append(_compile_clause(condition, fields, here, depth + 1, counter))
        else:
            counter[0] += 1
            if counter[0] > MAX_CONDITIONS:
                raise WhereError(location, f"at most {MAX_CONDITIONS} conditions in all")
            parts.append(_compile_condition(condition, fields, here))
    if clause.logic == "nor":
        return {"$nor": parts}  # none holds, one part or many
    if len(parts) == 1:
        return parts[0]
    return {"$or" if clause.logic == "or" else "$and": parts}


def _compile_condition(
    condition: WhereCondition, fields: dict[str, FieldSpec], location: str
) -> dict[str, Any]:
    spec = fields.get(condition.field or "")
    if spec is None:
        allowed = ", ".join(sorted(fields))
        raise WhereError(
            location, f"field '{condition.field}' cannot be filtered here (allowed: {allowed})"
        )
    op, value = condition.op, condition.value
    if op not in OPS_BY_TYPE[spec.type]:
        raise WhereError(
            location,
            f"op '{op}' does not apply to {spec.type} field '{condition.field}' "
            f"({spec.type} fields take {', '.join(OPS_BY_TYPE[spec.type])})",
        )
    path = spec.path or str(condition.field)

    if op == "exists":
        if not isinstance(value, bool):
            raise WhereError(location, "exists takes true or false")
        if spec.type == "tags":
            # A list without a tag ([], as removing the last one leaves it) is untagged too.
            tagged = {path: {"$exists": True, "$ne": []}}
            return tagged if value else {"$nor": [tagged]}
        # A null value counts as missing: extraction stores null for fields it could not read.
        return {path: {"$ne": None}} if value else {path: None}
    if op == "regex":
        return {path: {"$regex": _checked_pattern(value, location), "$options": "i"}}
    if op in ("in", "nin", "all"):
        if not isinstance(value, list) or not value:
            raise WhereError(location, f"{op} takes a non-empty array")
        if len(value) > MAX_LIST_VALUES:
            raise WhereError(location, f"{op} takes at most {MAX_LIST_VALUES} values")
        coerced = [_coerce(spec, item, f"{location}.value[{i}]") for i, item in enumerate(value)]
        return {path: {f"${op}": coerced}}
    coerced_value = _coerce(spec, value, f"{location}.value")
    if op == "eq":
        return {path: coerced_value}
    return {path: {f"${op}": coerced_value}}


def _checked_pattern(value: Any, location: str) -> str:
    if not isinstance(value, str) or not value:
        raise WhereError(location, "regex takes a non-empty string pattern")
    if len(value) > MAX_REGEX_LENGTH:
        raise WhereError(location, f"regex patterns are at most {MAX_REGEX_LENGTH} characters")
    if INLINE_FLAGS.search(value):
        raise WhereError(
            location, "regex patterns take no inline flags; matching is already case-insensitive"
        )
    try:
        re.compile(value)
    except re.error as exc:
        raise WhereError(location, f"invalid regex: {exc}") from None
    try:
        check_pattern(value)
    except UnsafePattern as exc:
        raise WhereError(location, f"regex not accepted: {exc}") from None
    try:
        re2.compile(value, _RE2_CHECK)
    except re2.error as exc:
        raise WhereError(location, f"regex not accepted by RE2: {exc}") from None
    return value


def _coerce(spec: FieldSpec, value: Any, location: str) -> Any:
    if value is None:
        raise WhereError(location, "null is not a value here; use op 'exists'")
    if spec.type in ("string", "enum", "tags"):
        if not isinstance(value, str):
            raise WhereError(location, f"expected a string, got {type(value).__name__}")
        if spec.upper:
            value = value.upper()
        if spec.type == "enum" and value not in spec.values:
            raise WhereError(location, f"'{value}' is not one of: {', '.join(sorted(spec.values))}")
        return value
    if spec.type == "boolean":
        if not isinstance(value, bool):
            raise WhereError(location, f"expected true or false, got {value!r}")
        return value
    if spec.type in ("number", "money"):
        number = _decimal(value, location)
        if spec.type == "number":
            return float(number)
        # Stored money is int64 cents; a larger bound is out of range, not a 500 (and quantize
        # would raise InvalidOperation beyond 28 digits).
        if abs(number) >= MAX_MONEY:
            raise WhereError(location, f"money values are below {MAX_MONEY:,} in magnitude")
        if number != number.quantize(Decimal("0.01")):
            raise WhereError(location, "money values have at most 2 decimal places")
        return to_cents(number)
    return _datetime(value, location)


def _decimal(value: Any, location: str) -> Decimal:
    # bool is an int in Python; true is not a number in JSON.
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise WhereError(location, f"expected a number, got {value!r}")
    try:
        number = Decimal(str(value).strip())
    except InvalidOperation:
        raise WhereError(location, f"expected a number, got {value!r}") from None
    if not number.is_finite():
        raise WhereError(location, "expected a finite number")
    return number


def _datetime(value: Any, location: str) -> datetime:
    if not isinstance(value, str):
        raise WhereError(location, f"expected an ISO date (YYYY-MM-DD), got {value!r}")
    text = value.strip()
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), tzinfo=UTC)
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise WhereError(location, f"expected an ISO date (YYYY-MM-DD), got {value!r}") from None
    try:
        return parsed.astimezone(UTC) if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    except OverflowError:  # 0001-01-01T00:00+05:00 is in year 0 in UTC
        raise WhereError(location, "the date is outside years 1 to 9999 in UTC") from None
