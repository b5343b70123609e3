"""The documents' filters evaluated in memory, as MongoDB evaluates them.

A ranked search with a where-clause ranks the documents the clause selects. Reading their ids
from the embedded store means it reads, decodes and tests every document of the workspace
(1.2 s at 10k, refused at 100k); the process's search index already holds each document's
filterable fields (``FILTER_PATHS``, kept fresh like its text), so the compiled filter is
evaluated on those instead.

``matches`` understands what ``persistence.where.compile_where`` and ``DocumentQuery.parts``
produce, with MongoDB's rules: a missing field equals null; ``$ne``/``$nin`` keep documents
that miss the field; an array field matches when one element does; comparisons hold only
within a type (numbers with numbers, dates with dates, strings with strings; a boolean is no
number); ``$regex`` tests strings only. Anything else raises ``UnsupportedFilter``, and the
caller asks the database. A property test keeps it equal to the store on random clauses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from typing import Any

import re2
from bson import Decimal128

from persistence.documents.fields import SEARCH_FIELDS

# The stored paths a where-clause (``SEARCH_FIELDS``), the export filter and the name filters
# read; a search index keeps them for each document.
FILTER_PATHS = tuple(
    sorted({spec.path or name for name, spec in SEARCH_FIELDS.items()} | {"exportStatus"})
)
_MISSING = object()


class UnsupportedFilter(ValueError):
    """A filter this evaluator does not read; the database evaluates it."""


Test = Callable[[list[Any]], bool]
Predicate = Callable[[Mapping[str, Any]], bool]


def matches(selector: Mapping[str, Any], record: Mapping[str, Any]) -> bool:
    """Whether ``record`` (a stored document, or the fields of it a filter reads) satisfies
    ``selector`` (a MongoDB filter of the shapes ``compile_where`` emits)."""
    return predicate(selector)(record)


def predicate(selector: Mapping[str, Any]) -> Predicate:
    """``selector`` made a function of a record, compiled once for many records; raises
    ``UnsupportedFilter`` for what it does not read."""
    parts: list[Predicate] = []
    for key, condition in selector.items():
        if key in ("$and", "$or", "$nor"):
            parts.append(_logical(key, [predicate(part) for part in condition]))
        elif key.startswith("$"):
            raise UnsupportedFilter(key)
        else:
            parts.append(_field(key, _field_test(condition)))
    if len(parts) == 1:
        return parts[0]
    return lambda record: all(part(record) for part in parts)


def _logical(key: str, inner: list[Predicate]) -> Predicate:
    if key == "$and":
        return lambda record: all(test(record) for test in inner)
    if key == "$nor":
        return lambda record: not any(test(record) for test in inner)
    return lambda record: any(test(record) for test in inner)


def _field(path: str, test: Test) -> Predicate:
    parts = path.split(".")
    if len(parts) == 1:  # most fields: one lookup, no walk
        return lambda record: test(_leaf(record.get(path, _MISSING)))
    return lambda record: test(_values(record, parts))


def _values(record: Mapping[str, Any], parts: list[str]) -> list[Any]:
    """The values a path reaches (``_MISSING`` when it is absent)."""
    node: Any = record
    for part in parts:
        if isinstance(node, list):
            raise UnsupportedFilter(".".join(parts))  # an array inside the path: the database's
        node = node.get(part, _MISSING) if isinstance(node, Mapping) else _MISSING
        if node is _MISSING:
            break
    return _leaf(node)


def _leaf(node: Any) -> list[Any]:
    """A value as MongoDB compares it: itself and, for an array, each of its elements too."""
    if isinstance(node, list):
        return [*node, node]
    return [node]


def _field_test(condition: Any) -> Test:
    if isinstance(condition, Mapping) and any(str(key).startswith("$") for key in condition):
        tests = [
            _operator(op, argument, condition)
            for op, argument in condition.items()
            if op != "$options"  # read with $regex
        ]
        return lambda values: all(test(values) for test in tests)
    return _equality(condition)


def _equality(wanted: Any) -> Test:
    if wanted is None or isinstance(wanted, list | dict) or _comparable(wanted) is None:
        return lambda values: any(_equal(value, wanted) for value in values)
    want = _comparable(wanted)

    def equal(values: list[Any]) -> bool:
        for value in values:
            if value is not None and value is not _MISSING and _comparable(value) == want:
                return True
        return False

    return equal


def _operator(op: str, argument: Any, condition: Mapping[str, Any]) -> Test:
    if op == "$eq":
        return _equality(argument)
    if op == "$ne":
        equal = _equality(argument)
        return lambda values: not equal(values)
    if op in ("$in", "$nin"):
        items = list(argument)
        if op == "$in":
            return lambda values: any(_equal(v, item) for v in values for item in items)
        return lambda values: not any(_equal(v, item) for v in values for item in items)
    if op == "$all":
        every = list(argument)
        return lambda values: all(any(_equal(v, item) for v in values) for item in every)
    if op == "$exists":
        wanted = bool(argument)
        return lambda values: any(value is not _MISSING for value in values) == wanted
    if op == "$regex":
        pattern = _pattern(str(argument), str(condition.get("$options", "")))
        return lambda values: any(isinstance(v, str) and pattern.search(v) for v in values)
    compare = _COMPARISONS.get(op)
    if compare is None:
        raise UnsupportedFilter(op)
    bound = _comparable(argument)
    if bound is None:
        raise UnsupportedFilter(f"{op} on {type(argument).__name__}")
    bracket, limit = bound

    def within(values: list[Any]) -> bool:
        for value in values:
            have = _comparable(value)
            if have is not None and have[0] == bracket and compare(have[1], limit):
                return True
        return False

    return within


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": lambda a, b: a > b,
    "$gte": lambda a, b: a >= b,
    "$lt": lambda a, b: a < b,
    "$lte": lambda a, b: a <= b,
}


def _comparable(value: Any) -> tuple[str, Any] | None:
    """(type bracket, value comparable within it), None for what no filter compares. Python
    compares int, float and Decimal exactly with each other, as MongoDB compares numbers."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int | float | Decimal):
        return ("number", value)
    if isinstance(value, Decimal128):
        return ("number", value.to_decimal())
    if isinstance(value, datetime):
        naive = value.astimezone(UTC).replace(tzinfo=None) if value.tzinfo else value
        return ("date", naive)
    if isinstance(value, str):
        return ("string", value)
    return None


def _equal(value: Any, wanted: Any) -> bool:
    if wanted is None:
        return value is None or value is _MISSING
    if value is None or value is _MISSING:
        return False
    if isinstance(wanted, list | dict):
        return bool(value == wanted)
    have, want = _comparable(value), _comparable(wanted)
    if have is None or want is None:
        return type(value) is type(wanted) and bool(value == wanted)
    return have == want


@lru_cache(maxsize=256)
def _pattern(pattern: str, options: str) -> Any:
    """``pattern`` compiled with RE2 (google-re2): matching time linear in the text, whatever
    the pattern, where Python's ``re`` backtracks (``(a+)+$`` on 30 "a" took minutes)."""
    compiled = RE2_OPTIONS.get(options)
    if compiled is None:
        raise UnsupportedFilter(f"$options {options}")
    try:
        return re2.compile(pattern, compiled)
    except re2.error as exc:  # a pattern RE2 does not read: the database evaluates it
        raise UnsupportedFilter(f"$regex {exc}") from None


def _re2_options(case_sensitive: bool) -> Any:
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False  # refusals are exceptions, not lines on stderr
    return options


RE2_OPTIONS = {"": _re2_options(True), "i": _re2_options(False)}
