"""Stored bank transactions for the transaction graph's tests: records as statements.import
stores them, some matched to documents as matches.confirm records a match."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from persistence.money import to_cents

IMPORTED = datetime(2025, 4, 1, tzinfo=UTC)


def txn(
    id: str,
    amount: str,
    booked: date,
    *,
    currency: str = "EUR",
    counterparty: str | None = "Shell",
    reference: str | None = None,
    account: str | None = "DE00 1234",
    documents: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A stored transaction; ``documents``: matched to them (one match, by a person)."""
    midnight = datetime.combine(booked, datetime.min.time(), tzinfo=UTC)
    matches = (
        [
            {
                "documentIds": list(documents),
                "kind": "single" if len(documents) == 1 else "split",
                "score": 90.0,
                "by": "usr_test",
                "at": IMPORTED,
                "via": "confirm",
            }
        ]
        if documents
        else []
    )
    return {
        "_id": id,
        "key": f"key-{id}",
        "account": account,
        "bookingDate": midnight,
        "valueDate": midnight,
        "amount": to_cents(Decimal(amount)),
        "currency": currency,
        "counterparty": counterparty,
        "reference": reference,
        "bankTransactionId": None,
        "bank": {"counterparty": counterparty, "reference": reference},
        "category": None,
        "notes": None,
        "matched": bool(documents),
        "matches": matches,
        "batch": None,
        "source": {"format": "csv", "fileName": "s.csv", "place": "line 2", "importedAt": IMPORTED},
        "editHistory": [],
        "createdAt": IMPORTED,
        "updatedAt": IMPORTED,
    }


# Two months, two currencies, money out and in, some matched to documents doc_01 … doc_04.
TRANSACTIONS = [
    txn("txn_01", "-42.50", date(2025, 1, 3), documents=("doc_01",)),
    txn("txn_02", "-10.00", date(2025, 1, 9), counterparty="Lidl", reference="Bon 4711"),
    txn("txn_03", "1500.00", date(2025, 1, 28), counterparty="ACME Payroll"),
    txn("txn_04", "-99.99", date(2025, 2, 2), currency="USD", counterparty="Cloud Hosting AG"),
    txn("txn_05", "-20.00", date(2025, 2, 5), documents=("doc_02", "doc_03")),
    txn("txn_06", "-7.25", date(2025, 2, 14), counterparty="Taxi Hansa", documents=("doc_04",)),
    txn("txn_07", "-12.00", date(2025, 2, 20), currency="USD", documents=("doc_01",)),
    txn("txn_08", "250.00", date(2025, 2, 27), counterparty=None, reference="Refund"),
]
