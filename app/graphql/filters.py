"""GraphQL input types generated from the filterable fields' declarations.

``DocumentFilter`` has one input field per field ``domain.documents.SEARCH_FILTERS`` declares
(dotted names nest: ``expenseLocation: {primary: {city: …}}``), typed by the field's type —
``StringFilter``, ``DecimalFilter`` (money, numbers), ``DateFilter``, ``BooleanFilter``, one
``<Enum>Filter`` per declared enum with the enum's values spelled as GraphQL spells them
(``PARTIALLY_PAID``) — plus ``and``, ``or`` and ``not``. Each type's operators are
``domain.typed_filters.FILTER_OPS``. A field declared tomorrow appears here by itself; a
misspelt field or a value of the wrong type is a validation error before anything runs.
``DocumentOrderBy`` is generated the same way from the sortable fields (``SortField``).

Values arrive as plain data (``to_arguments``): input names, enum members as the REST words;
``domain.typed_filters.translate`` turns them into the where-clause REST takes.
"""

from __future__ import annotations

import enum
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any, Optional

import strawberry
from strawberry.types.unset import UNSET

from app.graphql.builder import WIRE_NAMES_ATTR, _LazyModelType
from domain.typed_filters import AND, FILTER_OPS, NOT, OR, FilterOp, field_tree
from domain.where import FieldType, Filterable

# The GraphQL scalar each field type's values are written in.
SCALAR_OF: dict[FieldType, Any] = {
    "string": str,
    "enum": str,  # replaced by the field's own enum
    "boolean": bool,
    "number": Decimal,
    "money": Decimal,
    "date": date,
    "tags": str,
}
# The filter input each field type shares (an enum field gets its own, named for its enum).
FILTER_NAME: dict[FieldType, str] = {
    "string": "StringFilter",
    "boolean": "BooleanFilter",
    "number": "DecimalFilter",
    "money": "DecimalFilter",
    "date": "DateFilter",
    "tags": "TagsFilter",
}
FILTER_DESCRIPTION: dict[str, str] = {
    "StringFilter": "Tests of a text field; eq, ne, in and nin compare exactly (currency and "
    "country codes upper-cased first), contains, startsWith and regex ignore case",
    "BooleanFilter": "Tests of a true/false field",
    "DecimalFilter": "Tests of an amount or number (Decimal: text, or a JSON number; money "
    "takes at most 2 decimal places)",
    "DateFilter": "Tests of a date (YYYY-MM-DD)",
    "TagsFilter": "Tests of a document's tags (names compare exactly)",
}
Meaning = typing.Callable[[tuple[str, ...], str], str | None]


def graphql_constant(value: str) -> str:
    """A value as GraphQL enum values are conventionally spelled: ``partially-paid`` →
    ``PARTIALLY_PAID``, ``docDate`` → ``DOC_DATE``."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", value)
    return re.sub(r"[^0-9A-Za-z]+", "_", spaced).strip("_").upper()


def constant_enum(name: str, values: tuple[str, ...], description: str, meaning: Meaning) -> Any:
    """A GraphQL enum of ``values`` in UPPER_CASE; each member's value is the REST word."""
    members = {graphql_constant(value): value for value in values}
    if len(members) != len(values):
        raise ValueError(f"{name}: two values share one GraphQL spelling: {values}")
    python_enum = enum.Enum(name, members)  # type: ignore[misc]
    converted = strawberry.enum(python_enum, name=name, description=description)
    definition = converted.__strawberry_definition__  # type: ignore[attr-defined]
    for member in definition.values:
        member.description = meaning(values, member.value)
    return converted


def _input(
    name: str,
    description: str,
    fields: Mapping[str, tuple[Any, str | None]],
    required: frozenset[str] = frozenset(),
) -> type:
    """A strawberry input named ``name`` with ``fields`` (input name → (type, description)),
    optional but for ``required``; ``to_arguments`` reads it back as plain data with those
    names (an omitted field is left out)."""
    annotations: dict[str, Any] = {}
    namespace: dict[str, Any] = {}
    wire_names: dict[str, str] = {}
    for wire, (annotation, text) in fields.items():
        python_name = wire + "_" if wire in ("in", "not", "and", "or") else wire
        wire_names[python_name] = wire
        needed = wire in required
        annotations[python_name] = annotation if needed else Optional[annotation]  # noqa: UP045
        namespace[python_name] = strawberry.field(
            name=wire if wire != python_name else None,
            description=text,
            **({} if needed else {"default": UNSET}),
        )
    namespace["__annotations__"] = annotations
    cls = strawberry.input(type(name, (), namespace), name=name, description=description)
    setattr(cls, WIRE_NAMES_ATTR, wire_names)
    return cls


def _operand_type(op: FilterOp, scalar: Any) -> Any:
    if op.shape == "list":
        return list[scalar]  # type: ignore[valid-type]
    if op.shape == "boolean":
        return bool
    if op.shape == "text":
        return str
    return scalar


@dataclass
class FilterTypes:
    """The generated inputs of one listing: its filter and its ordering."""

    filter: type
    order_by: type
    sort_field: Any
    direction: Any


# The per-field filter inputs (``StringFilter``, ``DateFilter``, ``<Enum>Filter``) every listing
# shares: one GraphQL type of each name however many listings are generated.
_FIELD_FILTERS: dict[str, type] = {}


class _Generator:
    def __init__(self, meaning: Meaning, noun: str) -> None:
        self.meaning = meaning
        self.noun = noun
        self.filters = _FIELD_FILTERS
        self.selves: dict[str, type] = {}

    def field_filter(self, spec: Filterable) -> type:
        if spec.type == "enum":
            if not spec.name:
                raise ValueError("an enum filter field needs its vocabulary's name")
            name = f"{spec.name}Filter"
            scalar: Any = None
        else:
            name = FILTER_NAME[spec.type]
            scalar = SCALAR_OF[spec.type]
        if name in self.filters:
            return self.filters[name]
        if spec.type == "enum":
            scalar = constant_enum(
                str(spec.name), spec.values, f"Values of {spec.name}", self.meaning
            )
        ops = {op.name: (_operand_type(op, scalar), op.meaning) for op in FILTER_OPS[spec.type]}
        description = FILTER_DESCRIPTION.get(name, f"Tests of a {spec.name} field")
        self.filters[name] = _input(name, description, ops)
        return self.filters[name]

    def tree(
        self,
        name: str,
        tree: Mapping[str, Any],
        described: Mapping[str, str],
        combinators: bool,
    ) -> type:
        fields: dict[str, tuple[Any, str | None]] = {}
        for key, node in tree.items():
            if isinstance(node, Filterable):
                fields[key] = (self.field_filter(node), described.get(key))
            else:
                below = {
                    sub.removeprefix(key + "."): text
                    for sub, text in described.items()
                    if sub.startswith(key + ".")
                }
                inner = self.tree(name + key[:1].upper() + key[1:], node, below, False)
                fields[key] = (inner, described.get(key))
        if combinators:
            # The filter nests itself; strawberry resolves the reference once it exists.
            self_type: Any = _LazyModelType(name, self.selves, name)  # type: ignore[arg-type]
            fields[AND] = (list[self_type], "Every filter holds")  # type: ignore[valid-type]
            fields[OR] = (list[self_type], "At least one filter holds")  # type: ignore[valid-type]
            fields[NOT] = (self_type, "The filter does not hold")
        text = (
            f"Which {self.noun}: each field's tests hold together (and); or, and and not "
            "combine whole filters"
            if combinators
            else f"Tests of the fields under {name}"
        )
        built = _input(name, text, fields)
        if combinators:
            self.selves[name] = built
        return built


SORT_DIRECTIONS = ("ASC", "DESC")


def listing_inputs(
    resource: str,
    fields: Mapping[str, Filterable],
    sortable: tuple[str, ...],
    described: Mapping[str, str],
    meaning: Meaning,
) -> FilterTypes:
    """``<Resource>Filter`` from ``fields`` and ``<Resource>OrderBy`` from ``sortable``
    (``described``: each field's description, from the resource's model)."""
    generator = _Generator(meaning, f"{resource.lower()}s")
    filter_type = generator.tree(f"{resource}Filter", field_tree(fields), described, True)
    sort_field = constant_enum(
        f"{resource}SortField",
        sortable,
        f"The fields {resource.lower()}s can be ordered by (ties broken by id)",
        lambda values, value: described.get(value),
    )
    direction = DIRECTION
    order_by = _input(
        f"{resource}OrderBy",
        "One ordering key",
        {
            "field": (sort_field, "The field to order by"),
            "direction": (direction, "ASC: smallest first; DESC (default): largest first"),
        },
        required=frozenset({"field"}),
    )
    return FilterTypes(filter_type, order_by, sort_field, direction)


class _Direction(enum.Enum):
    ASC = strawberry.enum_value("ASC", description="Smallest, earliest or A first")
    DESC = strawberry.enum_value("DESC", description="Largest, latest or Z first")


DIRECTION = strawberry.enum(_Direction, name="SortDirection", description="Ordering direction")
