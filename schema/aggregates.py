"""What GraphQL's ``documentsAggregate`` answers: groups by several keys at once.

The key type has one field per declared group key (``domain.documents.AggregateKey``), so a key
declared there appears here by itself. Every group is split by currency as well: its sums,
average, minimum and maximum are in one currency (``key.currency``), never added across.
"""

from __future__ import annotations

import typing
from datetime import date
from decimal import Decimal

from pydantic import BaseModel, Field, create_model

from domain.documents import AggregateKey

KEY_MEANINGS: dict[str, str] = {
    "year": "Year of the document date (YYYY)",
    "month": "Month of the document date (YYYY-MM)",
    "week": "ISO week of the document date (YYYY-Www, Monday first)",
    "day": "Day of the document date (YYYY-MM-DD)",
    "category": "Category",
    "merchant": "Merchant",
    "currency": "Currency of the amounts (every group is split by currency)",
    "docType": "Document type (receipt, invoice, other)",
    "paymentStatus": "Payment status (paid, unpaid, partially-paid, refunded)",
    "paymentMethod": "Payment method",
    "entityId": "Entity (entityId)",
    "tag": "Tag (a document counts under each of its tags; null: untagged)",
}
if set(KEY_MEANINGS) != set(typing.get_args(AggregateKey)):
    raise ValueError("every AggregateKey needs its meaning in KEY_MEANINGS")

DocumentGroupKey: type[BaseModel] = create_model(  # type: ignore[call-overload]
    "DocumentGroupKey",
    __doc__="The values of a group's keys: those grouped by, and always the currency; null "
    "for documents without the field (or the date)",
    **{
        name: (str | None, Field(default=None, description=KEY_MEANINGS[name]))
        for name in typing.get_args(AggregateKey)
    },
)


class AggregateSum(BaseModel):
    """Sums in the group's currency (null when no document has the field)."""

    amount: Decimal | None = Field(default=None, description="Sum of the amounts")
    taxAmount: Decimal | None = Field(default=None, description="Sum of the tax amounts")


class AggregateAverage(BaseModel):
    """Averages in the group's currency, of the documents that have the field."""

    amount: Decimal | None = Field(default=None, description="Average amount (2 places)")


class AggregateExtreme(BaseModel):
    """The smallest or largest value in the group."""

    amount: Decimal | None = Field(default=None, description="Amount")
    docDate: date | None = Field(default=None, description="Document date")


class AggregateConverted(BaseModel):
    """The group's amounts converted to the workspace's currency, each at the ECB rate of its
    document date (stored when the document was read). A document with an amount but no
    conversion to this currency (no rate for its currency or date, or converted before the
    workspace's currency changed) is not in the sum and is counted in unconverted, never
    added as 0."""

    currency: str = Field(description="The workspace's preferred currency (ISO 4217)")
    sum: Decimal | None = Field(
        default=None, description="Sum of the converted amounts (null when none is converted)"
    )
    count: int = Field(default=0, description="Documents in the sum")
    unconverted: int = Field(
        default=0, description="Documents with an amount that are not in the sum (no conversion)"
    )


class DocumentGroup(BaseModel):
    """One group: its key, how many documents, and their figures in one currency."""

    key: DocumentGroupKey = Field(description="The group's key values")  # type: ignore[valid-type]
    count: int = Field(description="Documents in the group")
    sum: AggregateSum = Field(description="Sums")
    avg: AggregateAverage = Field(description="Averages")
    min: AggregateExtreme = Field(description="Smallest values")
    max: AggregateExtreme = Field(description="Largest values")
    converted: AggregateConverted = Field(
        description="Amounts converted to the workspace's currency (documents without a "
        "conversion counted apart)"
    )


class DocumentAggregate(BaseModel):
    """Documents grouped by several keys: every matching document counted, the largest groups
    listed (time groups in time order)."""

    totalCount: int = Field(description="Documents the filter matches")
    groups: list[DocumentGroup] = Field(description="The groups")
    groupsTruncated: bool = Field(description="More groups exist than the 500 listed")
