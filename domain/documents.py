"""The value types of a document: its kinds, states and the filters over them.

The contract (``schema.documents``) uses them in its models, storage
(``persistence.documents.fields``, ``persistence.documents.query``) to check and compile
filters: one declaration for both.
"""

from __future__ import annotations

from typing import Literal

DocType = Literal["receipt", "invoice", "other"]
DocumentSource = Literal["upload", "email", "whatsapp", "inbound-email"]
ProcessingStatus = Literal["queued", "processing", "processed", "skipped", "failed", "warning"]
PaymentStatus = Literal["paid", "unpaid", "partially-paid", "refunded"]
RecurringType = Literal["weekly", "monthly", "quarterly", "yearly"]
ExportStatus = Literal["exported", "not-exported"]
LocationKind = Literal["in-store", "online", "travel"]
ArchiveFilter = Literal["exclude", "only", "include"]
ExportFilter = Literal["all", "exported", "not-exported"]
CurrencyCode = str  # ISO 4217, validated where it is written

# documents.count's groupBy: the dimensions totals can be grouped by.
CountGroupBy = Literal[
    "merchant",
    "category",
    "docType",
    "currency",
    "paymentMethod",
    "entityId",
    "day",
    "month",
    "year",
    "date",
]
