"""The where-clause compiler: each op × field type, coercion, limits, and a property test that
compares mongomock and SecantusDB with an independent evaluator."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any, get_args

import mongomock
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.documents import DocType
from domain.where import WhereClause
from persistence.documents.fields import COUNT_FIELDS, SEARCH_FIELDS
from persistence.documents.query import match_stages
from persistence.documents.records import to_record
from persistence.where import WhereError, compile_where
from tests.documents.where_oracle import matches
from tests.hypothesis_profiles import examples


def compile_(clause: dict[str, Any], fields: dict[str, Any] = SEARCH_FIELDS) -> dict[str, Any]:
    return compile_where(WhereClause.model_validate(clause), fields)


def one(field: str, op: str, value: Any = None) -> dict[str, Any]:
    return compile_({"conditions": [{"field": field, "op": op, "value": value}]})


# --- each op × field type ------------------------------------------------------------------


def test_string_ops() -> None:
    assert one("merchant", "eq", "Shell") == {"merchant": "Shell"}
    assert one("merchant", "ne", "Shell") == {"merchant": {"$ne": "Shell"}}
    assert one("merchant", "in", ["A", "B"]) == {"merchant": {"$in": ["A", "B"]}}
    assert one("merchant", "nin", ["A"]) == {"merchant": {"$nin": ["A"]}}
    assert one("merchant", "regex", "^sta") == {"merchant": {"$regex": "^sta", "$options": "i"}}
    assert one("merchant", "exists", True) == {"merchant": {"$ne": None}}
    assert one("merchant", "exists", False) == {"merchant": None}
    for op in ("gt", "gte", "lt", "lte"):
        with pytest.raises(
            WhereError, match=f"op '{op}' does not apply to string field 'merchant'"
        ):
            one("merchant", op, "M")


def test_money_ops_coerce_to_cents() -> None:
    assert one("amount", "gt", 12.5) == {"amount": {"$gt": 1250}}
    assert one("amount", "lte", "7") == {"amount": {"$lte": 700}}
    assert one("taxAmount", "in", [1, 2.05]) == {"taxAmount": {"$in": [100, 205]}}
    assert one("subtotal", "eq", 0.1) == {"subtotal": 10}
    with pytest.raises(WhereError, match="at most 2 decimal places"):
        one("amount", "eq", 1.234)
    with pytest.raises(WhereError, match="expected a number"):
        one("amount", "gt", True)
    with pytest.raises(WhereError, match="expected a number"):
        one("amount", "gt", "lots")
    # The refusal says which operators would do (an assistant fixes its call from it).
    with pytest.raises(
        WhereError,
        match=re.escape(
            "op 'regex' does not apply to money field 'amount' "
            "(money fields take eq, ne, gt, gte, lt, lte, in, nin, exists)"
        ),
    ):
        one("amount", "regex", "1")


def test_date_ops_coerce_iso_strings() -> None:
    midnight = datetime(2024, 3, 1, tzinfo=UTC)
    assert one("docDate", "gte", "2024-03-01") == {"docDate": {"$gte": midnight}}
    assert one("docDate", "lt", "2024-03-01T10:00:00Z") == {
        "docDate": {"$lt": datetime(2024, 3, 1, 10, tzinfo=UTC)}
    }
    assert one("docDate", "in", ["2024-03-01"]) == {"docDate": {"$in": [midnight]}}
    with pytest.raises(WhereError, match="expected an ISO date"):
        one("docDate", "gt", "March 1st")
    with pytest.raises(WhereError, match="expected an ISO date"):
        one("docDate", "gt", 20240301)


def test_boolean_and_enum_ops() -> None:
    assert one("isRecurring", "eq", True) == {"isRecurring": True}
    assert one("isRecurring", "ne", False) == {"isRecurring": {"$ne": False}}
    with pytest.raises(WhereError, match="expected true or false"):
        one("isRecurring", "eq", "yes")
    with pytest.raises(WhereError, match="op 'in' does not apply to boolean"):
        one("isRecurring", "in", [True])
    assert one("docType", "in", ["invoice", "receipt"]) == {
        "docType": {"$in": ["invoice", "receipt"]}
    }
    with pytest.raises(
        WhereError, match="'memo' is not one of: credit-note, invoice, other, receipt, refund"
    ):
        one("docType", "eq", "memo")
    with pytest.raises(WhereError, match="op 'regex' does not apply to enum"):
        one("docType", "regex", "inv")


def test_nested_paths_ids_and_currency_case() -> None:
    assert one("expenseLocation.primary.city", "eq", "Berlin") == {
        "expenseLocation.primary.city": "Berlin"
    }
    assert one("expenseLocation.primary.countryCode", "eq", "de") == {
        "expenseLocation.primary.countryCode": "DE"
    }
    assert one("id", "eq", "doc_1") == {"_id": "doc_1"}
    assert one("currency", "in", ["eur", "usd"]) == {"currency": {"$in": ["EUR", "USD"]}}


def test_regex_rules() -> None:
    with pytest.raises(WhereError, match="no inline flags"):
        one("merchant", "regex", "(?i)shell")
    with pytest.raises(WhereError, match="no inline flags"):
        one("merchant", "regex", "(?s:a.b)")
    with pytest.raises(WhereError, match="invalid regex"):
        one("merchant", "regex", "([a-z")
    with pytest.raises(WhereError, match="at most 200 characters"):
        one("merchant", "regex", "a" * 201)
    with pytest.raises(WhereError, match="non-empty string"):
        one("merchant", "regex", 5)
    assert one("merchant", "regex", "(?:shell|aral)") == {
        "merchant": {"$regex": "(?:shell|aral)", "$options": "i"}
    }


def test_values_and_arrays() -> None:
    with pytest.raises(WhereError, match="in takes a non-empty array"):
        one("merchant", "in", "Shell")
    with pytest.raises(WhereError, match="in takes a non-empty array"):
        one("merchant", "in", [])
    with pytest.raises(WhereError, match="at most 100 values"):
        one("merchant", "in", [str(i) for i in range(101)])
    with pytest.raises(WhereError, match="exists takes true or false"):
        one("merchant", "exists", "yes")
    with pytest.raises(WhereError, match="null is not a value here"):
        one("merchant", "eq", None)


def test_errors_name_the_condition_index() -> None:
    clause = {
        "conditions": [
            {"field": "merchant", "op": "eq", "value": "A"},
            {
                "logic": "or",
                "conditions": [
                    {"field": "amount", "op": "gt", "value": 1},
                    {"field": "amount", "op": "gt", "value": "x"},
                ],
            },
        ]
    }
    with pytest.raises(WhereError) as error:
        compile_(clause)
    assert str(error.value) == "where.conditions[1].conditions[1].value: expected a number, got 'x'"


def test_count_whitelist_is_narrower() -> None:
    assert "expenseLocation.primary.city" not in COUNT_FIELDS
    with pytest.raises(
        WhereError, match=re.escape("field 'expenseLocation.primary.city' cannot be filtered here")
    ):
        compile_(
            {"conditions": [{"field": "expenseLocation.primary.city", "op": "eq", "value": "X"}]},
            COUNT_FIELDS,
        )
    with pytest.raises(WhereError, match="field 'id' cannot be filtered here"):
        compile_({"conditions": [{"field": "id", "op": "eq", "value": "doc_1"}]}, COUNT_FIELDS)


def test_logic_and_nesting() -> None:
    clause = {
        "logic": "or",
        "conditions": [
            {"field": "merchant", "op": "eq", "value": "A"},
            {
                "conditions": [
                    {"field": "amount", "op": "gt", "value": 1},
                    {"field": "currency", "op": "eq", "value": "EUR"},
                ]
            },
        ],
    }
    assert compile_(clause) == {
        "$or": [
            {"merchant": "A"},
            {"$and": [{"amount": {"$gt": 100}}, {"currency": "EUR"}]},
        ]
    }
    deep: dict[str, Any] = {"field": "merchant", "op": "eq", "value": "A"}
    for _ in range(4):
        deep = {"conditions": [deep]}
    with pytest.raises(WhereError, match="nest at most 4 levels"):
        compile_({"conditions": [deep]})


def test_workspace_and_archive_filters_stay_outside() -> None:
    user = one("merchant", "eq", "A")
    assert match_stages("org_1", "exclude", user) == [
        {"$match": {"workspaceId": "org_1", "archived": False}},
        {"$match": {"merchant": "A"}},
    ]
    either = compile_({"logic": "or", "conditions": [
        {"field": "merchant", "op": "eq", "value": "A"},
        {"field": "merchant", "op": "eq", "value": "B"},
    ]})  # fmt: skip
    assert match_stages("org_1", "only", either, {"category": "Meals"}) == [
        {"$match": {"workspaceId": "org_1", "archived": True}},
        {"$match": {"$and": [either, {"category": "Meals"}]}},
    ]
    # Even a clause that mentions workspaceId cannot widen the scope: it is not a field.
    with pytest.raises(WhereError, match="field 'workspaceId' cannot be filtered"):
        one("workspaceId", "eq", "org_2")


# --- property test: mongomock and SecantusDB agree with the oracle ----------------------------

MERCHANTS = ["Shell", "shell", "Starbucks", "REWE", "Café Müller", "A.C Shop"]
CITIES = ["Berlin", "Paris", "berlin"]
PATTERNS = ["^sh", "ll$", "star", "a.c", "é", "^(re|sh)", "^$", "m\u00fcller"]
DATES = [date(2024, 1, d) for d in (1, 2, 15, 31)]
AMOUNTS = [Decimal("0.00"), Decimal("0.01"), Decimal("9.99"), Decimal("10.00"), Decimal("12.50")]


def maybe(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value, an explicit null, or (signalled by a sentinel) a missing field."""
    return st.one_of(strategy, st.none(), st.just("__missing__"))


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    fields = {
        "merchant": draw(maybe(st.sampled_from(MERCHANTS))),
        "amount": draw(maybe(st.sampled_from(AMOUNTS))),
        "currency": draw(maybe(st.sampled_from(["EUR", "USD"]))),
        "docDate": draw(maybe(st.sampled_from(DATES))),
        "docType": draw(maybe(st.sampled_from(get_args(DocType)))),
        "isRecurring": draw(maybe(st.booleans())),
    }
    document = {k: v for k, v in fields.items() if v != "__missing__"}
    city = draw(maybe(st.sampled_from(CITIES)))
    if city != "__missing__":
        document["expenseLocation"] = {"primary": {"city": city}}
    return document


FIELD_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "merchant": st.sampled_from(MERCHANTS),
    "amount": st.sampled_from([*AMOUNTS, Decimal("5")]).map(float),
    "currency": st.sampled_from(["EUR", "usd", "GBP"]),
    "docDate": st.sampled_from(DATES).map(date.isoformat),
    "docType": st.sampled_from(get_args(DocType)),
    "isRecurring": st.booleans(),
    "expenseLocation.primary.city": st.sampled_from(CITIES),
}
OPS = {
    "merchant": ["eq", "ne", "in", "nin", "regex", "exists"],
    "expenseLocation.primary.city": ["eq", "ne", "in", "nin", "regex", "exists"],
    "currency": ["eq", "ne", "in", "nin", "regex", "exists"],
    "docType": ["eq", "ne", "in", "nin", "exists"],
    "isRecurring": ["eq", "ne", "exists"],
    "amount": ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"],
    "docDate": ["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists"],
}


@st.composite
def conditions(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    if depth < 2 and draw(st.integers(0, 4)) == 0:
        return {
            "logic": draw(st.sampled_from(["and", "or", "nor"])),
            "conditions": draw(st.lists(conditions(depth + 1), min_size=1, max_size=3)),
        }
    field = draw(st.sampled_from(sorted(OPS)))
    op = draw(st.sampled_from(OPS[field]))
    if op == "exists":
        value: Any = draw(st.booleans())
    elif op == "regex":
        value = draw(st.sampled_from(PATTERNS))
    elif op in ("in", "nin"):
        value = draw(st.lists(FIELD_VALUES[field], min_size=1, max_size=3))
    else:
        value = draw(FIELD_VALUES[field])
    return {"field": field, "op": op, "value": value}


clauses = st.builds(
    lambda logic, conds: {"logic": logic, "conditions": conds},
    st.sampled_from(["and", "or", "nor"]),
    st.lists(conditions(), min_size=1, max_size=4),
)


def check_store(
    collection: Any, docs: list[dict[str, Any]], clause_list: list[dict[str, Any]]
) -> None:
    collection.delete_many({})
    stored = [
        {**to_record(doc), "_id": f"d{i}", "workspaceId": "org_a"} for i, doc in enumerate(docs)
    ]
    # A document of another workspace that matches everything must never come back.
    collection.insert_many(
        [*stored, {**stored[0], "_id": "foreign", "workspaceId": "org_b"}]
        if stored
        else [{"_id": "foreign", "workspaceId": "org_b"}]
    )
    for clause in clause_list:
        compiled = compile_(clause)
        pipeline = [*match_stages("org_a", "include", compiled), {"$project": {"_id": 1}}]
        found = {d["_id"] for d in collection.aggregate(pipeline)}
        expected = {f"d{i}" for i, doc in enumerate(docs) if matches(doc, clause)}
        assert found == expected, (clause, compiled)


PROPERTY = settings(
    max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@PROPERTY
@given(
    docs=st.lists(documents(), max_size=25), clause_list=st.lists(clauses, min_size=1, max_size=4)
)
def test_property_mongomock_agrees_with_oracle(
    docs: list[dict[str, Any]], clause_list: list[dict[str, Any]]
) -> None:
    collection = mongomock.MongoClient(tz_aware=True)["p"]["documents"]
    check_store(collection, docs, clause_list)


@pytest.mark.wire
@PROPERTY
@given(
    docs=st.lists(documents(), max_size=25), clause_list=st.lists(clauses, min_size=1, max_size=4)
)
def test_property_secantus_agrees_with_oracle(
    secantus_collection: Any, docs: list[dict[str, Any]], clause_list: list[dict[str, Any]]
) -> None:
    check_store(secantus_collection, docs, clause_list)
