"""Contract models of the documents resource: the record as returned, and every capability's
input and output.

Field names are the wire names. ``Document`` is what leaves the service; the stored record has
more (workspace id, search terms, integer cents) and is mapped in
``persistence/documents/records.py``.
"""

from __future__ import annotations

import datetime as dt
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    EmailStr,
    Field,
    WithJsonSchema,
    field_validator,
)

from domain.documents import (
    COUNT_FILTERS,
    SEARCH_FILTERS,
    ArchiveFilter,
    CountGroupBy,
    DocType,
    DocumentSource,
    ExportFilter,
    ExportStatus,
    LocationKind,
    PaymentStatus,
    ProcessingStatus,
    RecurringType,
)
from domain.review import ReviewReason
from domain.where import WhereClause, describe_narrower_where, describe_where
from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer, NotBoolean
from schema.money import Money, Quantity
from schema.tags import MAX_TAG_LENGTH, MAX_TAGS_PER_DOCUMENT, TagName

CURRENCY_PATTERN = r"^[A-Z]{3}$"


class LocationPlace(BaseModel):
    """Where money was spent, as far as the document tells."""

    model_config = ConfigDict(extra="forbid")

    countryCode: str | None = Field(
        default=None, pattern=r"^[A-Z]{2}$", description="ISO 3166-1 alpha-2 code, e.g. DE"
    )
    country: str | None = Field(default=None, max_length=100, description="Country name")
    city: str | None = Field(default=None, max_length=100, description="City")
    stateOrProvince: str | None = Field(default=None, max_length=100, description="Region")
    kind: LocationKind | None = Field(default=None, description="How the money was spent")


class ExpenseLocation(BaseModel):
    """The location of an expense; ``primary`` is the one used in filters."""

    model_config = ConfigDict(extra="forbid")

    primary: LocationPlace | None = Field(default=None, description="The place filters use")


class LineItem(BaseModel):
    """One line of a receipt or invoice."""

    model_config = ConfigDict(extra="forbid")

    description: str = Field(max_length=500, description="What was bought")
    quantity: Quantity | None = Field(default=None, description="How many")
    unitPrice: Quantity | None = Field(default=None, description="Price of one")
    amount: Money | None = Field(default=None, description="Line total")
    taxAmount: Money | None = Field(default=None, description="Tax in the line total")


class TaxLine(BaseModel):
    """The tax of one rate: "GST 6% on 35.00: 2.10", "MwSt A 19% 10,00 1,90"."""

    model_config = ConfigDict(extra="forbid")

    rate: Quantity | None = Field(default=None, description="The rate in percent, e.g. 19")
    net: Money | None = Field(default=None, description="The amount the tax is on")
    tax: Money = Field(description="The tax at this rate")


EvidenceField = Literal[
    "merchant",
    "merchantLegalName",
    "merchantTaxId",
    "amount",
    "currency",
    "docDate",
    "invoiceId",
    "subtotal",
    "taxAmount",
    "tipAmount",
    "lineItems",
    "taxLines",
]


class FieldEvidence(CapabilityOutput):
    """How sure extraction is of one field, and where on the original it was read."""

    field: EvidenceField = Field(description="The extracted field")
    confidence: float = Field(ge=0, le=1, description="Probability that the value is right")
    page: int | None = Field(default=None, description="1-based page it was read from")
    box: list[float] | None = Field(
        default=None,
        min_length=4,
        max_length=4,
        description="[x0, y0, x1, y1] as fractions of the page's width and height, from the "
        "top left",
    )
    text: str | None = Field(default=None, description="The text it was read from")
    source: str | None = Field(
        default=None, description="What decided it: amount, date, merchant, printed, edited…"
    )
    warning: str | None = Field(
        default=None,
        description="Why a person should check it (e.g. the lines do not add up to the total)",
    )


class DocumentFile(CapabilityOutput):
    """The original file, kept in GridFS; ``url`` streams it (authenticated)."""

    fileName: str = Field(description="The name it was uploaded or sent with")
    mimeType: str = Field(description="Its media type (image/jpeg, application/pdf…)")
    size: int = Field(description="Its size in bytes")
    sha256: str = Field(description="SHA-256 of its bytes, hex")
    url: str | None = Field(default=None, description="Where to download it (authenticated)")


class EditRecord(CapabilityOutput):
    """One correction of one field."""

    field: str = Field(description="The field corrected")
    oldValue: Any = Field(default=None, description="Its value before")
    newValue: Any = Field(default=None, description="Its value after")
    editedBy: str = Field(description="Id of the user who made it (usr_…)")
    editedAt: datetime = Field(description="When it was made")
    via: str = Field(default="documents.update", description="The capability that made the edit")


class Document(CapabilityOutput):
    """A receipt, invoice or other financial document with its extracted fields.

    In ``compact`` search output only a short projection is present; absent fields are omitted.
    """

    id: str = Field(description="Document id, doc_…")
    merchant: str | None = Field(default=None, description="Who was paid, as read or corrected")
    merchantLegalName: str | None = Field(
        default=None,
        description="The registered company printed on it (… Sdn Bhd, … GmbH), when it differs "
        "from or adds to merchant",
    )
    merchantTaxId: str | None = Field(
        default=None, description="The seller's VAT, GST or tax number printed on it"
    )
    amount: Money | None = Field(
        default=None, description="Total, in ``currency`` (negative for a refund or credit note)"
    )
    currency: str | None = Field(
        default=None, description="ISO 4217 code of amount, taxAmount and subtotal"
    )
    preferredCurrency: str | None = Field(
        default=None, description="The currency the workspace's totals are shown in, when converted"
    )
    conversionRate: float | None = Field(
        default=None, description="currency → preferredCurrency rate at the document date"
    )
    convertedAmount: Money | None = Field(
        default=None,
        description="amount in preferredCurrency at conversionRate (null: no rate)",
    )
    docDate: dt.date | None = Field(default=None, description="Document date, YYYY-MM-DD")
    date: dt.date | None = Field(
        default=None, description="Same as docDate (kept for clients that ask for it)"
    )
    receivedAt: datetime | None = Field(default=None, description="When the document arrived")
    category: str | None = Field(
        default=None, description="Spending category (Fuel, Meals, Software…)"
    )
    docType: DocType | None = Field(
        default=None, description="receipt, invoice, refund, credit-note or other"
    )
    summary: str | None = Field(default=None, description="A short description of what was bought")
    invoiceId: str | None = Field(default=None, description="The invoice number printed on it")
    receiptId: str | None = Field(default=None, description="The receipt number printed on it")
    paymentStatus: PaymentStatus | None = Field(
        default=None, description="paid, unpaid, partially-paid or refunded"
    )
    paymentMethod: str | None = Field(
        default=None, description="How it was paid (card, cash, transfer…)"
    )
    paymentMethodEnding: str | None = Field(
        default=None, description="Last digits of the card or account"
    )
    fromEmail: str | None = Field(default=None, description="Sender of the e-mail it came in")
    toEmail: str | None = Field(default=None, description="Address the e-mail was sent to")
    taxAmount: Money | None = Field(default=None, description="Tax included in amount")
    subtotal: Money | None = Field(default=None, description="Amount before tax")
    tipAmount: Money | None = Field(default=None, description="Tip included in amount")
    taxLines: list[TaxLine] | None = Field(
        default=None, description="The tax per rate, as printed (one line per rate)"
    )
    isRecurring: bool | None = Field(
        default=None, description="A repeating charge (subscription, rent…)"
    )
    recurringType: RecurringType | None = Field(
        default=None, description="weekly, monthly, quarterly or yearly"
    )
    entityId: str | None = Field(
        default=None,
        description="Your own id of the entity it belongs to (company, client, project)",
    )
    entityName: str | None = Field(default=None, description="The entity's name")
    exportStatus: ExportStatus | None = Field(
        default=None,
        description="exported once sent to an accounting integration, else not-exported",
    )
    expenseLocation: ExpenseLocation | None = Field(
        default=None, description="Where the money was spent"
    )
    link: str | None = Field(default=None, description="Where the document is shown in the service")
    lineItems: list[LineItem] | None = Field(
        default=None, description="The lines of the receipt or invoice"
    )
    file: DocumentFile | None = Field(
        default=None, description="The original file (url streams it)"
    )
    source: DocumentSource | None = Field(
        default=None, description="How it arrived: upload, email, whatsapp or inbound-email"
    )
    archived: bool | None = Field(
        default=None,
        description="Archived documents are left out of searches and counts unless asked for",
    )
    archivedAt: datetime | None = Field(default=None, description="When it was archived")
    processingStatus: ProcessingStatus | None = Field(
        default=None,
        description="Where extraction stands (queued, processing, processed, skipped…)",
    )
    processingReason: str | None = Field(
        default=None, description="Why it was skipped, failed or warned"
    )
    evidence: list[FieldEvidence] | None = Field(
        default=None, description="Per extracted field: confidence and where it was read"
    )
    duplicateOf: str | None = Field(default=None, description="Id of the document this one repeats")
    duplicates: list[str] | None = Field(
        default=None, description="Ids of the documents that repeat this one"
    )
    editHistory: list[EditRecord] | None = Field(
        default=None, description="Corrections of this document, oldest first"
    )
    needsReview: bool | None = Field(
        default=None, description="In the review queue until documents.review accepts it"
    )
    reviewReasons: list[ReviewReason] | None = Field(
        default=None,
        description="Why it needs a look: flaggedField (weak or warned evidence), "
        "processingWarning, possibleDuplicate, noAmount",
    )
    reviewedBy: str | None = Field(default=None, description="Who last accepted it (usr_…)")
    reviewedAt: datetime | None = Field(default=None, description="When it was last accepted")
    reprocessedAt: datetime | None = Field(
        default=None, description="When documents.reprocess last read it again"
    )
    createdAt: datetime | None = Field(default=None, description="When it was stored")
    # Documents never tagged store no list (and a projection may carry null): none.
    tags: Annotated[list[str], BeforeValidator(lambda value: value or [])] = Field(
        default_factory=list, description="Its tags' names"
    )
    updatedAt: datetime | None = Field(default=None, description="When it last changed")


COMPACT_FIELDS = ("id", "merchant", "amount", "currency", "docDate", "category", "docType")
RequiredField = Literal[
    "id",
    "merchant",
    "amount",
    "currency",
    "preferredCurrency",
    "conversionRate",
    "convertedAmount",
    "date",
    "docDate",
    "receivedAt",
    "category",
    "docType",
    "summary",
    "expenseLocation",
    "invoiceId",
    "receiptId",
    "paymentStatus",
    "entityId",
    "entityName",
    "exportStatus",
    "link",
]
SortField = Literal[
    "docDate",
    "amount",
    "convertedAmount",
    "merchant",
    "id",
    "category",
    "docType",
    "invoiceId",
    "receiptId",
    "currency",
    "preferredCurrency",
    "paymentStatus",
    "paymentMethod",
    "taxAmount",
    "subtotal",
    "receivedAt",
    "createdAt",
    "updatedAt",
    "entityId",
    "processingStatus",
]


SEARCH_WHERE = describe_where(
    SEARCH_FILTERS,
    {
        # One condition: the count's example shows two combined (the MCP listing's budget).
        "conditions": [{"field": "merchant", "op": "regex", "value": "uber|bolt"}]
    },
)
COUNT_WHERE = describe_narrower_where(
    COUNT_FILTERS,
    SEARCH_FILTERS,
    "documents.search",
    {
        "conditions": [
            {"field": "docDate", "op": "gte", "value": "2026-10-01"},
            {"field": "amount", "op": "gt", "value": 100},
        ]
    },
)
ARCHIVED = "exclude: active documents only; only: archived ones; include: both"


class SearchDocuments(CapabilityInput):
    """Input of documents.search."""

    query: str | None = Field(
        default=None,
        min_length=1,
        max_length=500,
        description="Words to rank by; used only when useSearch is true",
    )
    limit: Integer = Field(default=5, ge=1, le=100, description="Maximum documents returned")
    sortBy: SortField = Field(
        default="docDate", description="Sort field in filter mode; ties broken by id"
    )
    sortOrder: Annotated[Literal[1, -1], NotBoolean] = Field(
        default=-1, description="1 ascending, -1 descending"
    )
    where: WhereClause | None = Field(default=None, description=SEARCH_WHERE)
    useSearch: Boolean = Field(
        default=True, description="Rank by the query (with a query); else filter mode"
    )
    searchType: Literal["similarity", "mmr"] = Field(
        default="mmr",
        description="similarity: closest matches; mmr: closeness traded for diversity",
    )
    exportStatus: ExportFilter = Field(
        default="all", description="Whether sent to an accounting integration"
    )
    archived: ArchiveFilter = Field(default="exclude", description=ARCHIVED)
    outputMode: Literal["compact", "complete"] = Field(
        default="compact",
        description="compact: id, merchant, amount, currency, docDate, category, docType; "
        "complete: every field",
    )
    requiredFields: list[RequiredField] = Field(
        default_factory=list, max_length=20, description="Fields added to compact output"
    )
    cursor: str | None = Field(
        default=None, min_length=1, max_length=2000, description="nextCursor of the previous page"
    )


class DocumentPage(CapabilityOutput):
    """One page of documents; ``nextCursor`` is null on the last page."""

    documents: list[Document] = Field(description="The documents of this page")
    nextCursor: str | None = Field(
        default=None, description="Pass as cursor for the next page; null on the last"
    )
    found: int | None = Field(
        default=None,
        description=(
            "Search mode (useSearch): how many documents the search found, all of them in its "
            "pages: those matching a distinctive word of the query (by its letters, or by the "
            "kind of document or category it names) or close in meaning. Null in filter mode"
        ),
    )


DOCUMENT_ID = "Document id (doc_…)"


class DocumentId(CapabilityInput):
    """A document id."""

    id: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)


class GetDocument(DocumentId):
    """Input of documents.get."""


class DeleteDocument(DocumentId):
    """Input of documents.delete."""


class UnarchiveDocument(DocumentId):
    """Input of documents.unarchive."""


class DocumentResult(CapabilityOutput):
    """One document."""

    document: Document = Field(description="The document")


class DeletedDocument(CapabilityOutput):
    """The archived document and the ids of its duplicates archived with it."""

    document: Document = Field(description="The archived document")
    archivedDuplicates: list[str] = Field(description="Ids of its duplicates archived with it")


class DocumentCorrections(CapabilityInput):
    """The fields a person may correct (documents.update, documents.review's corrections)."""

    merchant: str | None = Field(default=None, min_length=1, max_length=200, description="Seller")
    merchantLegalName: str | None = Field(
        default=None, min_length=1, max_length=200, description="Registered name"
    )
    merchantTaxId: str | None = Field(
        default=None, min_length=1, max_length=40, description="Seller's VAT or GST number"
    )
    amount: Money | None = Field(default=None, description="Total, in currency")
    currency: str | None = Field(
        default=None, pattern=CURRENCY_PATTERN, description="ISO 4217 code, e.g. EUR"
    )
    docDate: dt.date | None = Field(default=None, description="Document date, YYYY-MM-DD")
    category: str | None = Field(
        default=None, min_length=1, max_length=100, description="Spending category, e.g. Travel"
    )
    docType: DocType | None = Field(default=None, description="Kind of document")
    summary: str | None = Field(default=None, max_length=1000, description="One-line summary")
    invoiceId: str | None = Field(default=None, max_length=100, description="Invoice number")
    receiptId: str | None = Field(default=None, max_length=100, description="Receipt number")
    paymentStatus: PaymentStatus | None = Field(default=None, description="Paid or not")
    paymentMethod: str | None = Field(
        default=None, max_length=50, description="How it was paid, e.g. visa, cash"
    )
    paymentMethodEnding: str | None = Field(
        default=None, pattern=r"^[0-9]{2,6}$", description="Last digits of the card"
    )
    fromEmail: EmailStr | None = Field(default=None, description="Sender's e-mail address")
    toEmail: EmailStr | None = Field(default=None, description="Recipient's e-mail address")
    taxAmount: Money | None = Field(default=None, description="Tax in the total")
    subtotal: Money | None = Field(default=None, description="Total before tax")
    tipAmount: Money | None = Field(default=None, description="Tip in the total")
    taxLines: list[TaxLine] | None = Field(
        default=None, max_length=20, description="Replaces every tax line"
    )
    isRecurring: Boolean | None = Field(default=None, description="A repeating charge")
    recurringType: RecurringType | None = Field(default=None, description="How often it repeats")
    entityId: str | None = Field(
        default=None, max_length=100, description="Your id of its entity (company, project…)"
    )
    entityName: str | None = Field(default=None, max_length=200, description="The entity's name")
    expenseLocation: ExpenseLocation | None = Field(
        default=None, description="Where the money was spent"
    )
    lineItems: list[LineItem] | None = Field(
        default=None, max_length=500, description="Replaces every line"
    )
    tags: list[Annotated[TagName, Field(min_length=1, max_length=MAX_TAG_LENGTH)]] | None = Field(
        default=None,
        max_length=MAX_TAGS_PER_DOCUMENT,
        description="Replaces every tag (names from tags.list)",
    )

    @field_validator("currency", mode="before")
    @classmethod
    def _upper_currency(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class UpdateDocument(DocumentCorrections):
    """Input of documents.update: the id and only the fields to change (at least one).

    A field sent as null is cleared; a field not sent is left as it is.
    """

    model_config = ConfigDict(json_schema_extra={"minProperties": 2})

    id: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)


class ReviewDocument(CapabilityInput):
    """Input of documents.review: the id, and corrections to apply first (none: accept it as
    it is)."""

    id: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)
    # Validated as documents.update's fields; described in a line, not listed again (every
    # reader of the MCP listing pays for each byte).
    corrections: Annotated[
        DocumentCorrections | None,
        WithJsonSchema({"anyOf": [{"type": "object"}, {"type": "null"}]}),
    ] = Field(default=None, description="Fields to correct first, as documents.update takes them")


class CountDocuments(CapabilityInput):
    """Input of documents.count."""

    where: WhereClause | None = Field(default=None, description=COUNT_WHERE)
    archived: ArchiveFilter = Field(default="exclude", description=ARCHIVED)
    groupBy: CountGroupBy | None = Field(
        default=None,
        description="Also count and total per group; date = day; week = ISO week",
    )
    fillGaps: Boolean = Field(
        default=False,
        description=(
            "With a time groupBy: every bucket of the where clause's docDate range (else "
            "the data's), empty ones with count 0; at most 400"
        ),
    )


class CurrencyTotal(CapabilityOutput):
    """A sum of amounts in one currency (documents without an amount add nothing)."""

    currency: str | None = Field(description="ISO 4217 code; null for documents without a currency")
    amount: Money = Field(description="The sum in that currency")


class PreferredTotal(CapabilityOutput):
    """The sum of the documents' amounts in the workspace's preferred currency, each converted
    at the ECB rate of its document date (stored at ingest). Documents without an amount or a
    rate, or converted to another currency before the preference changed, are not in it:
    ``converted`` counts those that are."""

    currency: str = Field(description="The workspace's preferred currency (ISO 4217)")
    amount: Money = Field(description="The sum of the converted amounts")
    converted: int = Field(description="How many documents the sum includes")


class CountGroup(CapabilityOutput):
    """Count and totals of one group."""

    key: str | None = Field(
        description="The group's value (a merchant, a category, a month as YYYY-MM …); null "
        "for documents without one"
    )
    count: int = Field(description="Documents in the group")
    totals: list[CurrencyTotal] = Field(description="Sums per original currency")
    preferredTotal: PreferredTotal = Field(description="The sum in the preferred currency")


class DocumentCount(CapabilityOutput):
    """Count and totals over all matching documents, optionally grouped."""

    count: int = Field(description="Matching documents")
    totals: list[CurrencyTotal] = Field(description="Sums per original currency")
    preferredTotal: PreferredTotal = Field(
        description="The total in the workspace's preferred currency (what a dashboard shows)"
    )
    groups: list[CountGroup] = Field(
        description="One entry per group when groupBy is set; empty otherwise"
    )
    groupsTruncated: bool = Field(
        default=False, description="True when only the largest groups are listed"
    )


def _one_of_set(*names: str) -> dict[str, Any]:
    """JSON Schema for "at least one of ``names`` is a string" (checked by the resolver too)."""
    return {
        "anyOf": [{"required": [name], "properties": {name: {"type": "string"}}} for name in names]
    }


class BulkChanges(BaseModel):
    """What bulk-edit sets on every matched document (merchant, category or both)."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_one_of_set("merchant", "category"))

    merchant: str | None = Field(
        default=None, min_length=1, max_length=200, description="New merchant"
    )
    category: str | None = Field(
        default=None, min_length=1, max_length=100, description="New category"
    )


class BulkEditDocuments(CapabilityInput):
    """Input of documents.bulk-edit: the changes and at least one filter."""

    model_config = ConfigDict(json_schema_extra=_one_of_set("query", "merchant", "category"))

    changes: BulkChanges = Field(description="What to set on every matched document")
    query: str | None = Field(
        default=None, min_length=1, max_length=500, description="Words the documents must contain"
    )
    merchant: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Current merchant (case-insensitive)",
    )
    category: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="Current category (case-insensitive)",
    )
    dryRun: Boolean = Field(default=True, description="true previews; false changes the documents")


class FieldChange(CapabilityOutput):
    """A proposed or applied change of one field."""

    field: str = Field(description="The field changed")
    oldValue: str | None = Field(description="Its value before, as text")
    newValue: str | None = Field(description="Its value after, as text")


class BulkEditItem(CapabilityOutput):
    """A matched document and what the edit does to it."""

    id: str = Field(description="Document id")
    merchant: str | None = Field(description="The document's merchant")
    category: str | None = Field(description="The document's category")
    proposedChanges: list[FieldChange] = Field(description="What the edit changes on it")


class BulkEditResult(CapabilityOutput):
    """Preview: matches, proposed changes and the merchants and categories in use.
    Execute: matches, how many documents changed, and the changed documents."""

    dryRun: bool = Field(description="True for a preview: nothing changed")
    matched: int = Field(description="Documents the where-clause matched")
    modified: int | None = Field(default=None, description="Documents changed (execute mode)")
    documents: list[BulkEditItem] = Field(description="The matched documents and their changes")
    merchants: list[str] | None = Field(
        default=None, description="Merchants in use in the workspace (preview)"
    )
    categories: list[str] | None = Field(
        default=None, description="Categories in use in the workspace (preview)"
    )


InspectableField = Literal[
    "merchant",
    "amount",
    "currency",
    "docDate",
    "invoiceId",
    "receiptId",
    "taxAmount",
    "subtotal",
    "paymentMethod",
    "category",
    "summary",
    "docType",
]
CORE_INSPECT_FIELDS: tuple[InspectableField, ...] = (
    "merchant",
    "amount",
    "currency",
    "docDate",
    "invoiceId",
    "receiptId",
    "taxAmount",
    "subtotal",
)


class InspectDocument(CapabilityInput):
    """Input of documents.inspect."""

    id: str = Field(min_length=1, max_length=100, description=DOCUMENT_ID)
    fields: list[InspectableField] = Field(
        default_factory=lambda: list(CORE_INSPECT_FIELDS),
        min_length=1,
        max_length=12,
        description="Fields to compare; default the core financial fields",
    )
    maxPages: Integer = Field(default=3, ge=1, le=5, description="PDF pages to read")


class InspectedField(CapabilityOutput):
    """One field: what is stored, what the original shows, and whether they agree."""

    field: str = Field(description="The field compared")
    stored: Any = Field(default=None, description="The value stored on the document")
    visible: Any = Field(
        default=None, description="The value read from the original now; null when not found there"
    )
    match: bool | None = Field(description="null when the original does not show the field")
    note: str = Field(description="What the comparison found, in words")
    confidence: float | None = Field(
        default=None, description="Confidence of the stored value when it was extracted"
    )
    evidence: FieldEvidence | None = Field(
        default=None, description="Where the original shows the visible value"
    )


class InspectionReport(CapabilityOutput):
    """The comparison of stored fields with a fresh reading of the original."""

    documentId: str = Field(description="The document inspected")
    pagesRead: int = Field(description="Pages of the original read for the comparison")
    pageCount: int = Field(description="Pages of the original")
    engine: str = Field(description="The engine that read the original")
    fields: list[InspectedField] = Field(description="One comparison per field asked for")
