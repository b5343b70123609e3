"""The wire shape of a stored bank transaction (transactions.*, matches.*)."""

from __future__ import annotations

from typing import Any

from pydantic_core import to_jsonable_python

from persistence.money import from_cents
from schema.transactions import Transaction


def transaction_view(record: dict[str, Any]) -> Transaction:
    """The wire shape of a stored transaction."""
    batch = record.get("batch")
    bank = record.get("bank") or {}
    return Transaction.model_validate(
        {
            "id": record["_id"],
            "account": record.get("account"),
            "bookingDate": record["bookingDate"].date(),
            "valueDate": record["valueDate"].date() if record.get("valueDate") else None,
            "amount": from_cents(record["amount"]),
            "currency": record["currency"],
            "counterparty": record.get("counterparty"),
            "reference": record.get("reference"),
            "bankTransactionId": record.get("bankTransactionId"),
            "category": record.get("category"),
            "notes": record.get("notes"),
            "matched": bool(record.get("matched")),
            # Free-form JSON on every face: their times as ISO 8601 text (GraphQL's JSON scalar
            # cannot carry a datetime; REST wrote the same text already).
            "matches": to_jsonable_python(record.get("matches") or []),
            "rejectedDocumentIds": record.get("rejected") or [],
            "matchHistory": to_jsonable_python(record.get("matchHistory") or []),
            "batch": (
                {"reference": batch.get("reference"), "amount": from_cents(batch["amount"])}
                if batch
                else None
            ),
            "source": {
                key: record["source"][key] for key in ("format", "fileName", "place", "importedAt")
            },
            "bankCounterparty": bank.get("counterparty"),
            "bankReference": bank.get("reference"),
            "editHistory": record.get("editHistory") or [],
        }
    )
