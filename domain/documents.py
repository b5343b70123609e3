"""The value types of a document: its kinds, states and the filters over them.

The contract (``schema.documents``) uses them in its models, storage
(``persistence.documents.fields``, ``persistence.documents.query``) to check and compile
filters: one declaration for both.
"""

from __future__ import annotations

from typing import Literal, get_args

from domain.doc_types import DocType
from domain.vocabulary import vocabulary
from domain.where import Filterable

# How a document (and the incoming item it came in) arrived.
DocumentSource = Literal["upload", "email", "whatsapp", "inbound-email"]
SOURCES = vocabulary(
    DocumentSource,
    {
        "upload": "Uploaded (files.upload: the dashboard, the API, the command line)",
        "email": "Read from a connected mailbox",
        "inbound-email": "Mailed to the workspace's inbound address",
        "whatsapp": "Sent from a registered number over WhatsApp",
    },
)
# activity.search and its items list the same sources in the order they always have.
ActivitySource = Literal["email", "whatsapp", "upload", "inbound-email"]
SOURCES.spelled(ActivitySource)

# Where reading a document (or an incoming item) stands, or how it ended.
ProcessingStatus = Literal["queued", "processing", "processed", "skipped", "failed", "warning"]
STATUSES = vocabulary(
    ProcessingStatus,
    {
        "queued": "Stored; waiting for a worker",
        "processing": "Being read",
        "processed": "Read and saved as a document",
        "skipped": "Not a receipt or invoice (the reasoning says why); nothing saved",
        "failed": "Could not be read (the reasoning says why)",
        "warning": "Saved, with something to check (the reasoning says what)",
    },
)
ActivityStatus = Literal["queued", "processed", "skipped", "failed", "processing", "warning"]
STATUSES.spelled(ActivityStatus)
# Its named parts. Not finished: still waiting or being read (no one's original yet).
UNFINISHED: tuple[ProcessingStatus, ...] = STATUSES.subset(Literal["queued", "processing"])
# Read and saved as a document: what is billed, and what a later copy may be a duplicate of.
SAVED: tuple[ProcessingStatus, ...] = STATUSES.subset(Literal["processed", "warning"])
# Read, and nothing kept: never the original of another document.
NothingSaved = Literal["skipped", "failed"]
NOTHING_SAVED: tuple[NothingSaved, ...] = STATUSES.subset(NothingSaved)
# Reading ended, one way or another.
TERMINAL: frozenset[ProcessingStatus] = frozenset((*SAVED, *NOTHING_SAVED))
# Ended with something a person should look at.
NEEDS_A_LOOK: tuple[ProcessingStatus, ...] = STATUSES.subset(Literal["warning", "failed"])
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
    "week",
    "month",
    "year",
    "date",
]

# documentsAggregate's group keys (GraphQL): several at once. documents.count's dimensions
# (date is day's older name, left out) and the payment status.
AggregateKey = Literal[
    "year",
    "month",
    "week",
    "day",
    "category",
    "merchant",
    "currency",
    "docType",
    "paymentStatus",
    "paymentMethod",
    "entityId",
    # A document counts in the group of each of its tags (so the groups may add up to more
    # than the total), an untagged one in the group without a tag.
    "tag",
]


_TEXT = Filterable("string")
_MONEY = Filterable("money")
_CODE = Filterable("string", upper=True)


def _choice(literal: object, name: str) -> Filterable:
    """An enum field; ``name`` names its vocabulary (GraphQL's enum and its filter input)."""
    return Filterable("enum", values=get_args(literal), name=name)


# The fields a where clause may test, per capability (spec §4.4: documents.count has the
# narrower set). persistence/documents/fields.py compiles conditions against these.
COUNT_FILTERS: dict[str, Filterable] = {
    "amount": _MONEY,
    "docDate": Filterable("date"),
    "merchant": _TEXT,
    # Beyond the spec's list: the registered company printed on the document and its tax id
    # (VAT, GST, USt-IdNr.), beside the merchant people know (the brand).
    "merchantLegalName": _TEXT,
    "merchantTaxId": _CODE,
    "category": _TEXT,
    "docType": _choice(DocType, "DocType"),
    "invoiceId": _TEXT,
    "receiptId": _TEXT,
    "preferredCurrency": _CODE,
    "currency": _CODE,
    "paymentMethod": _TEXT,
    "paymentMethodEnding": _TEXT,
    "fromEmail": _TEXT,
    "toEmail": _TEXT,
    "summary": _TEXT,
    "taxAmount": _MONEY,
    "subtotal": _MONEY,
    "tipAmount": _MONEY,
    # The amount in the workspace's preferred currency at the document date's rate: amounts in
    # several currencies compared on one scale.
    "convertedAmount": _MONEY,
    "isRecurring": Filterable("boolean"),
    "recurringType": _choice(RecurringType, "RecurringType"),
    # Beyond the spec's list: where processing stands (the dashboard's status filter and its
    # count use the same clause; "failed" or "warning" finds what needs a look).
    "processingStatus": _choice(ProcessingStatus, "ProcessingStatus"),
    # The original a document duplicates (exists: true lists the possible duplicates; counted
    # too, so a list of them says how many there are).
    "duplicateOf": _TEXT,
    # When fincap received it (upload, email), whatever date it bears: what was added lately
    # (the overview counts new documents dated outside its range). A date, or an ISO time.
    "receivedAt": Filterable("date"),
    # The workspace's tags on it (tags.list names them).
    "tags": Filterable("tags"),
    # The review queue (``domain.review``): a field flagged, a processing warning, a possible
    # duplicate or no amount, not yet accepted by documents.review. Stored, so it is indexed.
    "needsReview": Filterable("boolean"),
}
SEARCH_FILTERS: dict[str, Filterable] = {
    **COUNT_FILTERS,
    "id": _TEXT,
    "paymentStatus": _choice(PaymentStatus, "PaymentStatus"),
    "entityId": _TEXT,
    "expenseLocation.primary.countryCode": _CODE,
    "expenseLocation.primary.country": _TEXT,
    "expenseLocation.primary.city": _TEXT,
    "expenseLocation.primary.stateOrProvince": _TEXT,
    "expenseLocation.primary.kind": _choice(LocationKind, "LocationKind"),
}

# What each value means (the GraphQL enum values' descriptions read it).
RECURRING_TYPES = vocabulary(
    RecurringType,
    {
        "weekly": "Every week",
        "monthly": "Every month",
        "quarterly": "Every three months",
        "yearly": "Every year",
    },
)
EXPORT_STATUSES = vocabulary(
    ExportStatus,
    {
        "exported": "Sent to an accounting integration",
        "not-exported": "Not sent to any, or unlinked since",
    },
)
EXPORT_FILTERS = vocabulary(ExportFilter, {"all": "Exported or not", **EXPORT_STATUSES.meanings})
ARCHIVE_FILTERS = vocabulary(
    ArchiveFilter,
    {
        "exclude": "Only documents not archived",
        "only": "Only archived documents",
        "include": "Archived or not",
    },
)

COUNT_GROUPS = vocabulary(
    CountGroupBy,
    {
        "merchant": "Per merchant",
        "category": "Per category",
        "docType": "Per document type",
        "currency": "Per original currency",
        "paymentMethod": "Per payment method",
        "entityId": "Per entity (entityId)",
        "day": "Per day of the document date (YYYY-MM-DD)",
        "date": "Per day, as day",
        "week": "Per ISO week of the document date (YYYY-Www, Monday first)",
        "month": "Per month of the document date (YYYY-MM)",
        "year": "Per year of the document date (YYYY)",
    },
)

PAYMENT_STATUSES = vocabulary(
    PaymentStatus,
    {
        "paid": "Paid in full",
        "unpaid": "Not paid yet",
        "partially-paid": "Paid in part",
        "refunded": "Paid, then refunded",
    },
)

LOCATION_KINDS = vocabulary(
    LocationKind,
    {
        "in-store": "Spent in person, at a place",
        "online": "Spent online",
        "travel": "Spent while travelling",
    },
)
