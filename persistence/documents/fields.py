"""Which document fields each capability may filter on, and their types."""

from __future__ import annotations

from typing import get_args

from domain.documents import DocType, LocationKind, PaymentStatus, RecurringType
from persistence.where import FieldSpec

_STRING = FieldSpec("string")
_MONEY = FieldSpec("money")
_CURRENCY = FieldSpec("string", upper=True)


def _enum(literal: object) -> FieldSpec:
    return FieldSpec("enum", values=frozenset(get_args(literal)))


COUNT_FIELDS: dict[str, FieldSpec] = {
    "amount": _MONEY,
    "docDate": FieldSpec("date"),
    "merchant": _STRING,
    "category": _STRING,
    "docType": _enum(DocType),
    "invoiceId": _STRING,
    "receiptId": _STRING,
    "preferredCurrency": _CURRENCY,
    "currency": _CURRENCY,
    "paymentMethod": _STRING,
    "paymentMethodEnding": _STRING,
    "fromEmail": _STRING,
    "toEmail": _STRING,
    "summary": _STRING,
    "taxAmount": _MONEY,
    "subtotal": _MONEY,
    "isRecurring": FieldSpec("boolean"),
    "recurringType": _enum(RecurringType),
}

SEARCH_FIELDS: dict[str, FieldSpec] = {
    **COUNT_FIELDS,
    "id": FieldSpec("string", path="_id"),
    "paymentStatus": _enum(PaymentStatus),
    "entityId": _STRING,
    # The original a document duplicates (exists: true lists the possible duplicates).
    "duplicateOf": _STRING,
    "expenseLocation.primary.countryCode": FieldSpec("string", upper=True),
    "expenseLocation.primary.country": _STRING,
    "expenseLocation.primary.city": _STRING,
    "expenseLocation.primary.stateOrProvince": _STRING,
    "expenseLocation.primary.kind": _enum(LocationKind),
}
