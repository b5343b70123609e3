"""The stored shape of a document, and its mapping to and from the API's values.

Stored records differ from the API's ``Document`` in a few ways, all owned here: money is
integer cents, ``docDate`` is a BSON date at midnight UTC, line-item quantities are Decimal128,
and fields exist only in storage (``STORED_ONLY``): the workspace id, ``searchTerms``,
the folded words of the searchable fields that a multikey index finds lexical candidates with,
and others. ``preferredCents``, the amount in the preferred currency at the stored rate (see
``preferred_cents``), which totals in the preferred currency add up, is shown as
``convertedAmount`` (``STORED_FOR``).
The original's GridFS id is stored but never shown either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any, TypedDict

from bson import Decimal128

from engines.text import tokenize
from persistence.money import from_cents, to_cents

MONEY_FIELDS = ("amount", "taxAmount", "subtotal", "tipAmount")
TAX_LINE_MONEY_FIELDS = ("net", "tax")
LINE_MONEY_FIELDS = ("amount", "taxAmount")
LINE_DECIMAL_FIELDS = ("quantity", "unitPrice")
# Fields that exist only in storage; a read that returns documents leaves them out.
STORED_ONLY = (
    "workspaceId",
    "searchTerms",
    # The embedding, its model and when a search index must re-read the document
    # (``persistence/documents/vectors.py``).
    "embedding",
    "embeddingModel",
    "indexedAt",
    # Its place among the originals of one incoming item (which of two equal files came first).
    "intakeOrder",
    # The review reasons its last review accepted (``domain.review``).
    "reviewAccepted",
    # Its notes (``persistence.documents.notes``): read by notes.list, searched by their words.
    "notes",
    "notesRevision",
)
# Stored fields ``preferredCents`` is computed from.
PREFERRED_INPUTS = ("amount", "conversionRate")
# Stored fields ``needsReview`` and ``reviewReasons`` are computed from (``domain.review``).
REVIEW_INPUTS = ("amount", "evidence", "processingStatus", "duplicateOf")
# Text fields whose words are searchable (with line-item descriptions and notes, see
# ``searchable_texts``).
SEARCHABLE_FIELDS = (
    "merchant",
    "merchantLegalName",
    "summary",
    "category",
    "invoiceId",
    "receiptId",
)
LINE_DESCRIPTIONS = "lineItems.description"
NOTE_TEXTS = "notes.text"
# API field → stored fields it is made from, where the two differ.
STORED_FOR = {
    "id": ("_id",),
    "date": ("docDate",),
    "link": ("_id",),
    "convertedAmount": ("preferredCents",),
}


class StoredFile(TypedDict):
    """The reference to a document's original in GridFS."""

    gridfsId: Any
    fileName: str
    mimeType: str
    size: int
    sha256: str


class StoredLineItem(TypedDict, total=False):
    description: str
    quantity: Decimal128 | None
    unitPrice: Decimal128 | None
    amount: int | None  # cents
    taxAmount: int | None  # cents


class StoredDocument(TypedDict, total=False):
    """A document as the ``documents`` collection holds it (every field may be absent in a
    projection; ``_id`` and ``workspaceId`` are always stored)."""

    _id: str
    workspaceId: str
    merchant: str | None
    merchantLegalName: str | None
    merchantTaxId: str | None
    amount: int | None  # cents
    currency: str | None
    preferredCurrency: str | None
    conversionRate: float | None
    docDate: datetime | None  # midnight UTC
    receivedAt: datetime | None
    category: str | None
    docType: str | None
    summary: str | None
    invoiceId: str | None
    receiptId: str | None
    paymentStatus: str | None
    paymentMethod: str | None
    paymentMethodEnding: str | None
    fromEmail: str | None
    toEmail: str | None
    taxAmount: int | None  # cents
    subtotal: int | None  # cents
    tipAmount: int | None  # cents
    taxLines: list[dict[str, Any]] | None  # rate Decimal128, net and tax in cents
    isRecurring: bool | None
    recurringType: str | None
    entityId: str | None
    entityName: str | None
    exportStatus: str
    expenseLocation: dict[str, Any] | None
    lineItems: list[StoredLineItem] | None
    tags: list[str]  # names of the workspace's tags (persistence.tags)
    # Per extracted field: confidence, page, box, source text (``Document.evidence``).
    evidence: list[dict[str, Any]]
    file: StoredFile
    source: str
    activityId: str
    archived: bool
    archivedAt: datetime | None
    processingStatus: str
    processingReason: str | None
    duplicateOf: str | None
    duplicates: list[str]
    # The review queue (``domain.review``): kept by every write of REVIEW_INPUTS.
    needsReview: bool
    reviewReasons: list[str]
    reviewAccepted: list[str]
    reviewedBy: str | None
    reviewedAt: datetime | None
    reprocessedAt: datetime | None
    # Only on documents written before the history moved to ``document_edits``.
    editHistory: list[dict[str, Any]]
    searchTerms: list[str]
    embedding: Any  # a BSON int8 vector (persistence/documents/vectors.py), or None
    embeddingModel: str | None
    indexedAt: datetime  # the last change a search index must re-read
    preferredCents: int | None  # amount × conversionRate, in cents of preferredCurrency
    createdAt: datetime
    updatedAt: datetime


def midnight(value: date) -> datetime:
    """A date as stored: a BSON date at midnight UTC."""
    return datetime.combine(value, time(), tzinfo=UTC)


def preferred_cents(record: Mapping[str, Any]) -> int | None:
    """The stored amount (cents) at the stored rate, in cents of the preferred currency,
    rounded half to even once per document, so every total of them is an exact integer sum;
    None without an amount or a rate."""
    amount, rate = record.get("amount"), record.get("conversionRate")
    if not isinstance(amount, int) or isinstance(amount, bool) or not rate:
        return None
    return int((Decimal(amount) * Decimal(str(rate))).to_integral_value())


def search_terms(fields: Mapping[str, Any]) -> list[str]:
    """Distinct folded words of the searchable fields, line item descriptions and notes."""
    words: list[str] = []
    for text in searchable_texts(fields).values():
        words += tokenize(text)
    return list(dict.fromkeys(words))


def searchable_texts(record: Mapping[str, Any]) -> dict[str, str | None]:
    """The searchable text of a document by field; line item descriptions as ``lineItems``,
    the texts of its notes as ``notes``."""
    texts: dict[str, str | None] = {}
    for name in SEARCHABLE_FIELDS:
        value = record.get(name)
        texts[name] = value if isinstance(value, str) else None
    descriptions = [item.get("description") or "" for item in record.get("lineItems") or []]
    texts["lineItems"] = " ".join(descriptions) or None
    texts["notes"] = " ".join(note.get("text") or "" for note in record.get("notes") or []) or None
    return texts


def changes_search_terms(names: Iterable[str]) -> bool:
    """Whether changing the fields ``names`` changes the stored search terms."""
    return bool(set(names) & {*SEARCHABLE_FIELDS, "lineItems", "notes"})


def to_record(fields: Mapping[str, Any]) -> dict[str, Any]:
    """API-level values (Decimal, date) → storage values (cents, BSON dates)."""
    record = dict(fields)
    for name in MONEY_FIELDS:
        if isinstance(record.get(name), Decimal | int | float):
            record[name] = to_cents(record[name])
    doc_date = record.get("docDate")
    if isinstance(doc_date, date) and not isinstance(doc_date, datetime):
        record["docDate"] = midnight(doc_date)
    if record.get("lineItems") is not None:
        record["lineItems"] = [_line_to_record(item) for item in record["lineItems"]]
    if record.get("taxLines") is not None:
        record["taxLines"] = [_tax_line_to_record(line) for line in record["taxLines"]]
    return record


def _tax_line_to_record(item: Mapping[str, Any]) -> dict[str, Any]:
    line = dict(item)
    for name in TAX_LINE_MONEY_FIELDS:
        if line.get(name) is not None:
            line[name] = to_cents(line[name])
    if line.get("rate") is not None:
        line["rate"] = Decimal128(Decimal(str(line["rate"])))
    return line


def _tax_line_from_record(item: Mapping[str, Any]) -> dict[str, Any]:
    line = dict(item)
    for name in TAX_LINE_MONEY_FIELDS:
        if isinstance(line.get(name), int):
            line[name] = from_cents(line[name])
    if isinstance(line.get("rate"), Decimal128):
        line["rate"] = line["rate"].to_decimal()
    return line


def _line_to_record(item: Mapping[str, Any]) -> dict[str, Any]:
    line = dict(item)
    for name in LINE_MONEY_FIELDS:
        if line.get(name) is not None:
            line[name] = to_cents(line[name])
    for name in LINE_DECIMAL_FIELDS:
        if line.get(name) is not None:
            line[name] = Decimal128(Decimal(str(line[name])))
    return line


def from_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """Storage values → API-level values, with ``id`` and without storage-only fields."""
    out = {k: v for k, v in record.items() if k != "_id" and k not in STORED_ONLY}
    if "_id" in record:
        out["id"] = record["_id"]
    if "preferredCents" in out:
        converted = out.pop("preferredCents")
        out["convertedAmount"] = from_cents(converted) if isinstance(converted, int) else None
    for name in MONEY_FIELDS:
        if isinstance(out.get(name), int):
            out[name] = from_cents(out[name])
    if isinstance(out.get("docDate"), datetime):
        out["docDate"] = out["docDate"].date()
        out["date"] = out["docDate"]
    if out.get("lineItems") is not None:
        out["lineItems"] = [_line_from_record(item) for item in out["lineItems"]]
    if out.get("taxLines") is not None:
        out["taxLines"] = [_tax_line_from_record(line) for line in out["taxLines"]]
    if isinstance(out.get("file"), dict):
        out["file"] = {k: v for k, v in out["file"].items() if k != "gridfsId"}
    return out


def values_after(record: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """The API values of a stored ``record`` once ``changes`` (API-level values) apply: what
    the new embedding of a correction is made of, in a write or in a step that embeds ahead
    of its write (the pipeline's)."""
    return {**from_record(record), **changes}


def _line_from_record(item: Mapping[str, Any]) -> dict[str, Any]:
    line = dict(item)
    for name in LINE_MONEY_FIELDS:
        if isinstance(line.get(name), int):
            line[name] = from_cents(line[name])
    for name in LINE_DECIMAL_FIELDS:
        if isinstance(line.get(name), Decimal128):
            line[name] = line[name].to_decimal()
    return line


def projection(api_fields: Iterable[str] | None) -> dict[str, int]:
    """The projection that reads ``api_fields`` (None: every field a reader may see)."""
    if api_fields is None:
        return {name: 0 for name in STORED_ONLY}
    stored: dict[str, int] = {}
    for name in api_fields:
        for path in STORED_FOR.get(name, (name,)):
            stored[path] = 1
    return stored


def stored_path(api_field: str) -> str:
    """Where an API field (a sort key, a filter field) is stored: ``id`` is ``_id``."""
    return STORED_FOR.get(api_field, (api_field,))[0]
