"""Rules about bank transactions ("Transactions from Shell are Fuel"): the trigger
(``transaction-matched``) and the where clause over the transactions' fields that a sentence's
reading makes, with what does not fit a transaction said in warnings."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from domain.rules import TRANSACTION_RULE_ACTIONS
from engines.rules.patterns import merchant_pattern


class TransactionReading(Protocol):
    """What the parser's reader collected of a sentence (``parser._Reader``)."""

    merchants: list[str]
    senders: list[str]
    doc_types: list[str]
    conditions: list[dict[str, Any]]
    currencies: list[str]
    countries: list[str]
    cities: list[str]
    actions: list[dict[str, Any]]
    triggers: list[dict[str, Any]]
    warnings: list[str]


# A condition on a bank transaction's amount is about the money paid: transactions book debits
# as negative amounts, so "over 500" is ``amount lt -500`` (and never a credit).
_DEBIT_OPS = {"gt": "lt", "gte": "lte", "lt": "gt", "lte": "gte", "eq": "eq"}
# The conditions a rule about bank transactions keeps (the transactions' where fields).
_TRANSACTION_FIELDS = ("amount",)


def payee_condition(names: Iterable[str]) -> dict[str, Any]:
    """ "From Shell" on a bank transaction: its counterparty, or its booking text (reference)
    where the bank writes the payee only there (a card booking "SHELL 1234 LONDON", a CSV's
    description column, an MT940 :86: line) — the same pattern and aliases as a merchant."""
    pattern = merchant_pattern(names)
    return {
        "logic": "or",
        "conditions": [
            {"field": "counterparty", "op": "regex", "value": pattern},
            {"field": "reference", "op": "regex", "value": pattern},
        ],
    }


def transaction_rule(reader: TransactionReading) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The trigger and the where clause (over the transactions' fields) of a rule whose
    subject is bank transactions; what does not fit is left out with a warning, and actions
    that cannot act on matched documents are dropped with a warning."""
    triggers = {t["type"] for t in reader.triggers} - {"document-processed"}
    if triggers:
        reader.warnings.append(
            "A rule about bank transactions runs when one is matched to documents, not "
            f"{' or '.join(sorted(triggers))}."
        )
    conditions: list[dict[str, Any]] = []
    if reader.merchants:
        conditions.append(payee_condition(reader.merchants))
    currencies = list(dict.fromkeys(reader.currencies))
    if len(currencies) == 1:
        conditions.append({"field": "currency", "op": "eq", "value": currencies[0]})
    elif currencies:
        conditions.append({"field": "currency", "op": "in", "value": currencies})
    amounts = [c for c in reader.conditions if c["field"] in _TRANSACTION_FIELDS]
    for condition in amounts:
        conditions.append(
            {"field": "amount", "op": _DEBIT_OPS[condition["op"]], "value": -condition["value"]}
        )
    if amounts:
        conditions.append({"field": "amount", "op": "lt", "value": 0})
    left_out = [c["field"] for c in reader.conditions if c["field"] not in _TRANSACTION_FIELDS]
    for values, field_name in (
        (reader.senders, "fromEmail"),
        (reader.doc_types, "docType"),
        (reader.countries, "country"),
        (reader.cities, "city"),
    ):
        if values:
            left_out.append(field_name)
    if left_out:
        reader.warnings.append(
            "A rule about bank transactions reads their counterparty, amount and currency; "
            f"left out (about documents): {', '.join(dict.fromkeys(left_out))}."
        )
    refused = [a for a in reader.actions if a["type"] not in TRANSACTION_RULE_ACTIONS]
    if refused:
        reader.warnings.append(
            "A rule about bank transactions can "
            f"{', '.join(TRANSACTION_RULE_ACTIONS)} on the documents matched to them; left out: "
            f"{', '.join(dict.fromkeys(a['type'] for a in refused))}."
        )
        reader.actions = [a for a in reader.actions if a["type"] in TRANSACTION_RULE_ACTIONS]
    where = {"logic": "and", "conditions": conditions} if conditions else None
    return {"type": "transaction-matched"}, where
