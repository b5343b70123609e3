"""The typed filter clause of documents.search and documents.count.

The shape is checked here; fields, operators and values are checked against the capability's
field whitelist by ``persistence/where.py``, which reports the condition index in its errors.

A condition is either a test ``{field, op, value}`` or a nested group ``{logic, conditions}``
(an extension beyond the spec). One model with optional members, rather than a union, keeps the
shape expressible in every face: GraphQL input types cannot be unions.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from domain.vocabulary import vocabulary

WhereOp = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "all", "regex", "exists"]
WhereLogic = Literal["and", "or", "nor"]
# ``tags``: a list of names; a condition tests whether the list holds them (eq: the tag is on
# the document, in: one of them is, all: every one is, nin: none is, exists: any tag at all).
FieldType = Literal["string", "enum", "boolean", "number", "money", "date", "tags"]

# Which operators each type of field takes (the compiler checks them; descriptions list them).
OPS_BY_TYPE: dict[FieldType, tuple[WhereOp, ...]] = {
    "string": ("eq", "ne", "in", "nin", "regex", "exists"),
    "enum": ("eq", "ne", "in", "nin", "exists"),
    "boolean": ("eq", "ne", "exists"),
    "number": ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"),
    "money": ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"),
    "date": ("eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"),
    "tags": ("eq", "ne", "in", "nin", "all", "exists"),
}
# How each type's values are written, for people and assistants composing a clause.
VALUES_BY_TYPE: dict[FieldType, str] = {
    "money": "decimal, 2 places",
    "number": "number",
    "date": "YYYY-MM-DD",
    "string": "eq exact, regex any case",
    "enum": "",
    "boolean": "true|false",
    "tags": "tag names; eq has it, all has each",
}


@dataclass(frozen=True)
class Filterable:
    """A field a where clause may test: its type, its values (enums), whether values are
    upper-cased before comparing (currency and country codes), and for an enum the name of
    its vocabulary (GraphQL's ``<name>`` enum and ``<name>Filter`` input)."""

    type: FieldType
    values: tuple[str, ...] = ()
    upper: bool = False
    name: str | None = None


def _grouped(names: list[str]) -> list[str]:
    """``a.b.x, a.b.y`` → ``a.b.{x,y}``: dotted names that share a parent, written once."""
    leaves: dict[str, list[str]] = {}
    for name in names:
        parent, _, leaf = name.rpartition(".")
        leaves.setdefault(parent or name, []).append(leaf if parent else "")
    return [
        key
        if parts == [""]
        else f"{key}.{parts[0]}"
        if len(parts) == 1
        else f"{key}.{{{','.join(parts)}}}"
        for key, parts in leaves.items()
    ]


def _ops(types: list[FieldType]) -> str:
    """``eq ne exists on all; in nin regex on string; …``: the operators every type listed
    takes, written once, then the others with the types that take them."""
    common = [op for op in OPS_BY_TYPE[types[0]] if all(op in OPS_BY_TYPE[t] for t in types)]
    by_ops: dict[tuple[WhereOp, ...], list[str]] = {}
    for kind in types:
        extra = tuple(op for op in OPS_BY_TYPE[kind] if op not in common)
        if extra:
            by_ops.setdefault(extra, []).append(kind)
    return "; ".join(
        [f"{' '.join(common)} on all"]
        + [f"{' '.join(ops)} on {'/'.join(kinds)}" for ops, kinds in by_ops.items()]
    )


def describe_where(fields: Mapping[str, Filterable], example: Mapping[str, Any]) -> str:
    """The description of a capability's ``where`` input: every field it accepts, grouped by
    type with how values are written, the operators each type takes, and one worked example
    (``example``, a whole clause)."""
    by_type: dict[FieldType, list[str]] = {}
    for name, spec in fields.items():
        shown = f"{name} ({'|'.join(spec.values)})" if spec.values else name
        by_type.setdefault(spec.type, []).append(shown)
    groups = "; ".join(
        f"{kind}{f' ({VALUES_BY_TYPE[kind]})' if VALUES_BY_TYPE[kind] else ''}: "
        + ", ".join(_grouped(names))
        for kind, names in by_type.items()
    )
    upper = [name for name, spec in fields.items() if spec.upper]
    return (
        f"Fields by type: {groups}. Ops: {_ops(list(by_type))}. Upper-cased: "
        f"{', '.join(_grouped(upper))}. Example: {json.dumps(example, separators=(',', ':'))}"
    )


def describe_narrower_where(
    fields: Mapping[str, Filterable],
    wider: Mapping[str, Filterable],
    wider_name: str,
    example: Mapping[str, Any],
) -> str:
    """The description of a ``where`` that takes a subset of another capability's fields
    (documents.count's of documents.search's): the fields it leaves out, and an example.
    Said once, not listed again: every reader of one listing pays for each byte."""
    left_out = [name for name in wider if name not in fields]
    return (
        f"The fields, types and ops of {wider_name}'s where, except "
        f"{', '.join(_grouped(left_out))}. Example: {json.dumps(example, separators=(',', ':'))}"
    )


class WhereCondition(BaseModel):
    """A test of one field ``{field, op, value}``, or a nested group ``{logic, conditions}``."""

    model_config = ConfigDict(extra="forbid")

    field: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="A field the where description lists",
    )
    op: WhereOp | None = Field(default=None, description="An operator the field's type takes")
    value: Any = Field(
        default=None,
        description="Array for in/nin/all, true|false for exists; regex: no inline flags",
    )
    logic: WhereLogic | None = Field(default=None, description="Nested group: and|or|nor")
    conditions: list[WhereCondition] | None = Field(
        default=None, min_length=1, max_length=50, description="Nested group: its conditions"
    )

    @model_validator(mode="after")
    def _one_shape(self) -> WhereCondition:
        if self.conditions is not None:
            if self.field is not None or self.op is not None:
                raise ValueError("a condition is either {field, op, value} or {logic, conditions}")
        elif self.field is None or self.op is None:
            raise ValueError("a condition needs field and op (or conditions for a nested group)")
        elif self.logic is not None:
            raise ValueError("logic belongs to a nested group with conditions")
        return self

    @property
    def is_group(self) -> bool:
        return self.conditions is not None


class WhereClause(BaseModel):
    """``{logic, conditions}``: conditions combined with and (default), or, or nor (none holds)."""

    model_config = ConfigDict(extra="forbid")

    logic: WhereLogic = Field(default="and", description="How the conditions combine")
    conditions: list[WhereCondition] = Field(
        min_length=1, max_length=50, description="Conditions or nested groups"
    )


# What each value means (the GraphQL enum values' descriptions read it).
WHERE_LOGIC = vocabulary(
    WhereLogic,
    {
        "and": "Every condition must hold",
        "or": "At least one condition must hold",
        "nor": "No condition may hold (a negation)",
    },
)

WHERE_OPS = vocabulary(
    WhereOp,
    {
        "eq": "Equal to value",
        "ne": "Not equal to value (documents without the field match)",
        "gt": "Greater than value",
        "gte": "Greater than or equal to value",
        "lt": "Less than value",
        "lte": "Less than or equal to value",
        "in": "One of the values (an array)",
        "nin": "None of the values (an array; documents without the field match)",
        "all": "A tag list holds every one of the values (an array)",
        "regex": "Matches the pattern, ignoring case",
        "exists": "The field is set (value true) or not (false)",
    },
)
