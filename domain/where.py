"""The typed filter clause of documents.search and documents.count.

The shape is checked here; fields, operators and values are checked against the capability's
field whitelist by ``persistence/where.py``, which reports the condition index in its errors.

A condition is either a test ``{field, op, value}`` or a nested group ``{logic, conditions}``
(an extension beyond the spec). One model with optional members, rather than a union, keeps the
shape expressible in every face: GraphQL input types cannot be unions.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

WhereOp = Literal["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "regex", "exists"]
WhereLogic = Literal["and", "or"]


class WhereCondition(BaseModel):
    """A test of one field ``{field, op, value}``, or a nested group ``{logic, conditions}``."""

    model_config = ConfigDict(extra="forbid")

    field: str | None = Field(
        default=None, min_length=1, max_length=100, description="A filterable field name"
    )
    op: WhereOp | None = None
    value: Any = Field(
        default=None,
        description="Compared value: array for in/nin, boolean for exists, "
        "plain pattern for regex (case-insensitive, no inline flags)",
    )
    logic: WhereLogic | None = Field(default=None, description="Nested group only: and / or")
    conditions: list[WhereCondition] | None = Field(
        default=None, min_length=1, max_length=50, description="Nested group only"
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
    """``{logic, conditions}``: conditions combined with and (default) or or."""

    model_config = ConfigDict(extra="forbid")

    logic: WhereLogic = "and"
    conditions: list[WhereCondition] = Field(min_length=1, max_length=50)
