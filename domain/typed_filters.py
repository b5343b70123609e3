"""GraphQL's typed filters, declared once per field type and translated to the where-clause.

A typed filter is the GraphQL face's spelling of a where-clause: one input field per filterable
field (``amount: {gte: "10"}``), each with the operators its type takes, and ``and``/``or``/
``not`` to combine them. Nothing here is written field by field: the inputs are generated from
the fields a capability declares (``domain.documents.SEARCH_FILTERS``) and the operators of
their type (``FILTER_OPS``); the translation yields the very ``WhereClause`` REST takes, which
the same compiler checks (limits, value coercion, regex safety) and the same store evaluates.

``contains`` and ``startsWith`` are the regex operator written for people: the text escaped
(and anchored for ``startsWith``), so like ``regex`` they ignore case.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from domain.where import FieldType, Filterable, WhereClause, WhereOp

# What an operator's value is: one value of the field, a list of them, true/false, or text.
ValueShape = Literal["value", "list", "boolean", "text"]


@dataclass(frozen=True)
class FilterOp:
    """One operator of a typed filter: its input name, the where-clause operator it becomes,
    the shape of its value, how a value is rewritten for it, and what it means."""

    name: str
    op: WhereOp
    shape: ValueShape
    meaning: str
    rewrite: Callable[[str], str] | None = None


EQ = FilterOp("eq", "eq", "value", "Equal to the value")
NE = FilterOp("ne", "ne", "value", "Not equal (documents without the field match)")
IN = FilterOp("in", "in", "list", "One of the values")
NIN = FilterOp("nin", "nin", "list", "None of the values (documents without the field match)")
GT = FilterOp("gt", "gt", "value", "Greater than the value")
GTE = FilterOp("gte", "gte", "value", "Greater than or equal to the value")
LT = FilterOp("lt", "lt", "value", "Less than the value")
LTE = FilterOp("lte", "lte", "value", "Less than or equal to the value")
EXISTS = FilterOp("exists", "exists", "boolean", "The field is set (true) or not (false)")
CONTAINS = FilterOp(
    "contains", "regex", "text", "Contains the text, ignoring case", rewrite=re.escape
)
STARTS_WITH = FilterOp(
    "startsWith",
    "regex",
    "text",
    "Starts with the text, ignoring case",
    rewrite=lambda text: "^" + re.escape(text),
)
# A list of tags: the document holds the tag (eq), one of them (in), each of them (all).
HAS = FilterOp("eq", "eq", "value", "The tag is on the document")
LACKS = FilterOp("ne", "ne", "value", "The tag is not on the document")
HAS_ANY = FilterOp("in", "in", "list", "At least one of the tags is on the document")
HAS_NONE = FilterOp("nin", "nin", "list", "None of the tags is on the document")
HAS_ALL = FilterOp("all", "all", "list", "Every one of the tags is on the document")
TAGGED = FilterOp("exists", "exists", "boolean", "The document has any tag (true) or none (false)")
REGEX = FilterOp(
    "regex", "regex", "text", "Matches the pattern, ignoring case (RE2 syntax, no inline flags)"
)

# The operators of each field type, in the order the filter inputs list them.
FILTER_OPS: dict[FieldType, tuple[FilterOp, ...]] = {
    "string": (EQ, NE, IN, NIN, CONTAINS, STARTS_WITH, REGEX, EXISTS),
    "enum": (EQ, NE, IN, NIN, EXISTS),
    "boolean": (EQ, NE, EXISTS),
    "number": (EQ, NE, GT, GTE, LT, LTE, IN, NIN, EXISTS),
    "money": (EQ, NE, GT, GTE, LT, LTE, IN, NIN, EXISTS),
    "date": (EQ, NE, GT, GTE, LT, LTE, IN, NIN, EXISTS),
    "tags": (HAS, LACKS, HAS_ANY, HAS_NONE, HAS_ALL, TAGGED),
}
# The combinators of a filter: every item holds (and), one does (or), the filter does not (not).
AND, OR, NOT = "and", "or", "not"


class FilterError(ValueError):
    """A typed filter that has no where-clause (an empty ``or`` list, an empty ``not``)."""

    def __init__(self, location: str, reason: str) -> None:
        super().__init__(f"{location}: {reason}")
        self.location = location
        self.reason = reason


@dataclass(frozen=True)
class TranslatedFilter:
    """A typed filter as a where-clause, and for each condition of it (``where.conditions[0]
    .conditions[1]``) the place in the filter it came from (``filter.or[1].amount.gt``), so a
    compiler error can name what the caller wrote."""

    where: WhereClause | None
    origins: Mapping[str, str]

    def locate(self, location: str) -> str:
        """``location`` of the where-clause (a compiler's error) as the filter's own path."""
        best = max((key for key in self.origins if _within(location, key)), key=len, default=None)
        if best is None:
            return location.replace("where", "filter", 1)
        return self.origins[best] + location[len(best) :].removeprefix(".value")


def _within(location: str, key: str) -> bool:
    return location == key or location.startswith((key + ".", key + "["))


def field_tree(fields: Mapping[str, Filterable]) -> dict[str, Any]:
    """Dotted field names as a tree: ``expenseLocation.primary.city`` under
    ``{"expenseLocation": {"primary": {"city": spec}}}``; a leaf is its ``Filterable``."""
    tree: dict[str, Any] = {}
    for name, spec in fields.items():
        *parents, leaf = name.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = spec
    return tree


def translate(
    value: Mapping[str, Any] | None, fields: Mapping[str, Filterable], location: str = "filter"
) -> TranslatedFilter:
    """The where-clause of a typed filter (plain data: input names, enum values as the REST
    words, dates and decimals as Python values); ``None`` for no filter or an empty one."""
    if not value:
        return TranslatedFilter(None, {})
    origins: dict[str, str] = {}
    conditions = _conditions(value, field_tree(fields), location)
    if not conditions:
        return TranslatedFilter(None, {})
    numbered = [_number(c, f"where.conditions[{i}]", origins) for i, c in enumerate(conditions)]
    return TranslatedFilter(WhereClause.model_validate({"conditions": numbered}), origins)


# A condition while translating: the where-clause's dict and where in the filter it came from.
_Condition = tuple[dict[str, Any], str]


def _number(condition: _Condition, at: str, origins: dict[str, str]) -> dict[str, Any]:
    body, origin = condition
    origins[at] = origin
    if "conditions" in body:
        body = {
            **body,
            "conditions": [
                _number(c, f"{at}.conditions[{i}]", origins)
                for i, c in enumerate(body["conditions"])
            ],
        }
    return body


def _conditions(value: Mapping[str, Any], tree: Mapping[str, Any], at: str) -> list[_Condition]:
    """The conditions of one filter object, to be combined with and."""
    found: list[_Condition] = []
    for key, item in value.items():
        here = f"{at}.{key}"
        if item is None:
            continue  # an explicit null is an absent operand, as GraphQL clients send them
        if key in (AND, OR):
            if not item:
                raise FilterError(here, f"{key} takes at least one filter")
            members = [
                _one(_conditions(part, tree, f"{here}[{i}]"), f"{here}[{i}]")
                for i, part in enumerate(item)
            ]
            if key == AND:
                found.extend(members)
            else:
                found.append(({"logic": "or", "conditions": members}, here))
        elif key == NOT:
            found.append(
                ({"logic": "nor", "conditions": [_one(_conditions(item, tree, here), here)]}, here)
            )
        elif isinstance(tree.get(key), Filterable):
            found.extend(_field_conditions(key, tree[key], item, here))
        elif isinstance(tree.get(key), Mapping):
            found.extend(_nested(key, tree[key], item, here))
        else:
            raise FilterError(here, f"'{key}' is not a filterable field")
    return found


def _nested(
    prefix: str, tree: Mapping[str, Any], value: Mapping[str, Any], at: str
) -> list[_Condition]:
    """The conditions on the fields under a dotted prefix (``expenseLocation.primary``)."""
    found: list[_Condition] = []
    for key, item in value.items():
        here = f"{at}.{key}"
        spec = tree.get(key)
        if item is None:
            continue
        if isinstance(spec, Filterable):
            found.extend(_field_conditions(f"{prefix}.{key}", spec, item, here))
        elif isinstance(spec, Mapping):
            found.extend(_nested(f"{prefix}.{key}", spec, item, here))
        else:
            raise FilterError(here, f"'{key}' is not a filterable field")
    return found


def _one(conditions: list[_Condition], at: str) -> _Condition:
    """Conditions that must all hold, as one condition (a group when there are several)."""
    if not conditions:
        raise FilterError(at, "an empty filter selects everything; leave it out")
    if len(conditions) == 1:
        return conditions[0]
    return {"logic": "and", "conditions": conditions}, at


def _field_conditions(
    field: str, spec: Filterable, value: Mapping[str, Any], at: str
) -> list[_Condition]:
    ops = {op.name: op for op in FILTER_OPS[spec.type]}
    found: list[_Condition] = []
    for name, operand in value.items():
        if operand is None:
            continue
        op = ops.get(name)
        if op is None:
            raise FilterError(f"{at}.{name}", f"{spec.type} fields take {', '.join(ops)}")
        found.append(
            ({"field": field, "op": op.op, "value": _operand(op, operand)}, f"{at}.{name}")
        )
    return found


def _operand(op: FilterOp, operand: Any) -> Any:
    """A typed value as the where-clause writes it (JSON: the REST body carries the same)."""
    if op.shape == "list":
        return [plain(item) for item in operand]
    if op.rewrite is not None:
        return op.rewrite(str(operand))
    return plain(operand)


def plain(value: Any) -> Any:
    """A typed scalar as JSON writes it: decimals and dates as text."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value
