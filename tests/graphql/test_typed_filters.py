"""Typed filters: generated from the declarations, translated to the where-clause REST takes."""

from __future__ import annotations

import typing
from datetime import date
from decimal import Decimal

import pytest
from graphql import GraphQLEnumType, GraphQLInputObjectType, get_named_type

from app.graphql.face import service_schema
from app.graphql.filters import graphql_constant
from domain.documents import SEARCH_FILTERS
from domain.typed_filters import FILTER_OPS, FilterError, translate
from domain.where import Filterable
from persistence.documents.fields import SEARCH_FIELDS
from persistence.where import WhereError, compile_where
from resolvers import build_registry
from schema.documents import SortField


@pytest.fixture(scope="module")
def schema() -> typing.Any:
    return service_schema(build_registry())._schema


def _leaves(input_type: GraphQLInputObjectType, prefix: str = "") -> dict[str, str]:
    """The declared field each leaf of a generated filter tests, with its filter's name."""
    found: dict[str, str] = {}
    for name, field in input_type.fields.items():
        if name in ("and", "or", "not"):
            continue
        inner = get_named_type(field.type)
        assert isinstance(inner, GraphQLInputObjectType)
        if inner.name.endswith("Filter"):
            found[prefix + name] = inner.name
        else:
            found.update(_leaves(inner, f"{prefix}{name}."))
    return found


def test_document_filter_has_exactly_the_declared_fields(schema: typing.Any) -> None:
    generated = _leaves(schema.type_map["DocumentFilter"])
    assert set(generated) == set(SEARCH_FILTERS)
    for name, spec in SEARCH_FILTERS.items():
        expected = {
            "string": "StringFilter",
            "money": "DecimalFilter",
            "number": "DecimalFilter",
            "date": "DateFilter",
            "boolean": "BooleanFilter",
            "enum": f"{spec.name}Filter",
            "tags": "TagsFilter",
        }[spec.type]
        assert generated[name] == expected, name


def test_each_filter_takes_its_types_operators(schema: typing.Any) -> None:
    for type_name, kind in [
        ("StringFilter", "string"),
        ("DecimalFilter", "money"),
        ("DateFilter", "date"),
        ("BooleanFilter", "boolean"),
        ("PaymentStatusFilter", "enum"),
        ("TagsFilter", "tags"),
    ]:
        fields = schema.type_map[type_name].fields
        assert list(fields) == [op.name for op in FILTER_OPS[kind]]  # type: ignore[index]
    assert set(schema.type_map["StringFilter"].fields) == {
        "eq", "ne", "in", "nin", "contains", "startsWith", "regex", "exists"
    }  # fmt: skip


def test_enum_filters_take_the_enums_values_in_graphql_spelling(schema: typing.Any) -> None:
    for spec in SEARCH_FILTERS.values():
        if spec.type != "enum":
            continue
        enum_type = schema.type_map[str(spec.name)]
        assert isinstance(enum_type, GraphQLEnumType)
        assert {name: value.value for name, value in enum_type.values.items()} == {
            graphql_constant(value): value for value in spec.values
        }
    assert "PARTIALLY_PAID" in schema.type_map["PaymentStatus"].values
    sort = schema.type_map["DocumentSortField"]
    assert set(sort.values) == {graphql_constant(v) for v in typing.get_args(SortField)}
    assert "DOC_DATE" in sort.values and set(schema.type_map["SortDirection"].values) == {
        "ASC",
        "DESC",
    }


def test_a_new_declared_field_appears_by_itself() -> None:
    from app.graphql.filters import listing_inputs

    fields = {**SEARCH_FILTERS, "mileage": Filterable("number")}
    inputs = listing_inputs("Probe", fields, ("docDate",), {}, lambda values, value: None)
    definition = inputs.filter.__strawberry_definition__  # type: ignore[attr-defined]
    names = {field.graphql_name or field.python_name for field in definition.fields}
    assert "mileage" in names and "amount" in names


def test_translation_is_the_rest_where_clause() -> None:
    translated = translate(
        {
            "amount": {"gte": Decimal("10"), "lt": Decimal("99.5")},
            "merchant": {"contains": "a.b"},
            "or": [{"category": {"eq": "Travel"}}, {"docDate": {"gte": date(2024, 1, 1)}}],
            "not": {"paymentStatus": {"in": ["paid", "partially-paid"]}},
            "expenseLocation": {"primary": {"city": {"startsWith": "Par"}}},
        },
        SEARCH_FILTERS,
    )
    assert translated.where is not None
    assert translated.where.model_dump(exclude_none=True) == {
        "logic": "and",
        "conditions": [
            {"field": "amount", "op": "gte", "value": "10"},
            {"field": "amount", "op": "lt", "value": "99.5"},
            {"field": "merchant", "op": "regex", "value": r"a\.b"},
            {
                "logic": "or",
                "conditions": [
                    {"field": "category", "op": "eq", "value": "Travel"},
                    {"field": "docDate", "op": "gte", "value": "2024-01-01"},
                ],
            },
            {
                "logic": "nor",
                "conditions": [
                    {"field": "paymentStatus", "op": "in", "value": ["paid", "partially-paid"]}
                ],
            },
            {"field": "expenseLocation.primary.city", "op": "regex", "value": "^Par"},
        ],
    }
    compiled = compile_where(translated.where, SEARCH_FIELDS)
    assert {"$nor": [{"paymentStatus": {"$in": ["paid", "partially-paid"]}}]} in compiled["$and"]


def test_compiler_errors_name_the_filters_path() -> None:
    translated = translate(
        {"or": [{"merchant": {"eq": "x"}}, {"amount": {"gt": Decimal("1.234")}}]},
        SEARCH_FILTERS,
    )
    with pytest.raises(WhereError) as caught:
        compile_where(translated.where, SEARCH_FIELDS)
    assert translated.locate(caught.value.location) == "filter.or[1].amount.gt"
    translated = translate({"merchant": {"regex": "(a+)+$"}}, SEARCH_FILTERS)
    with pytest.raises(WhereError) as caught:
        compile_where(translated.where, SEARCH_FIELDS)
    assert translated.locate(caught.value.location) == "filter.merchant.regex"


def test_empty_combinators_are_refused() -> None:
    with pytest.raises(FilterError, match=r"filter.or: or takes at least one filter"):
        translate({"or": []}, SEARCH_FILTERS)
    with pytest.raises(FilterError, match=r"filter.not: an empty filter"):
        translate({"not": {}}, SEARCH_FILTERS)
    assert translate({}, SEARCH_FILTERS).where is None
    assert translate({"amount": {}}, SEARCH_FILTERS).where is None
