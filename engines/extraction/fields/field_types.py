"""What field parsing returns, and the hints a caller may pass in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from domain.doc_types import DocType

from .scoring import FieldEvidence


@dataclass(frozen=True)
class ParseHints:
    """What the caller already knows; every field is optional.

    ``country_code`` (ISO 3166 alpha-2) and ``currency`` (ISO 4217) steer date order and
    currency when the text is silent; ``today`` bounds plausible dates (no future receipts).
    """

    country_code: str | None = None
    currency: str | None = None
    today: date | None = None


@dataclass(frozen=True)
class LineItem:
    """One purchased item; money fields are exact decimals, missing values are None."""

    description: str
    quantity: Decimal | None = None
    unit_price: Decimal | None = None
    amount: Decimal | None = None
    tax_amount: Decimal | None = None


@dataclass(frozen=True)
class TaxLine:
    """The tax of one rate: its rate in percent, the net amount it is on, the tax."""

    rate: Decimal | None
    net: Decimal | None
    tax: Decimal


@dataclass(frozen=True)
class ExpenseLocation:
    """Where the money was spent, as far as the document says."""

    country_code: str | None = None
    country: str | None = None
    city: str | None = None
    state_or_province: str | None = None


@dataclass(frozen=True)
class ParsedFields:
    """The fields of one financial document. ``financial`` False means: skip it."""

    merchant: str | None = None
    # The registered company printed on the document ("MR. D.I.Y. (M) SDN BHD", "Muster
    # GmbH") beside the name people know (``merchant``, often the brand), and its tax id.
    merchant_legal_name: str | None = None
    merchant_tax_id: str | None = None
    doc_date: date | None = None
    amount: Decimal | None = None
    subtotal: Decimal | None = None
    tax_amount: Decimal | None = None
    tip_amount: Decimal | None = None
    tax_lines: tuple[TaxLine, ...] = ()
    currency: str | None = None
    invoice_id: str | None = None
    receipt_id: str | None = None
    payment_method: str | None = None
    payment_method_ending: str | None = None
    line_items: tuple[LineItem, ...] = ()
    expense_location: ExpenseLocation = field(default_factory=ExpenseLocation)
    doc_type: DocType = "other"
    summary: str = ""
    financial: bool = True
    skip_reason: str | None = None
    # True when subtotal + tax equals the total to the cent.
    totals_consistent: bool | None = None
    # Per field (merchant, doc_date, amount, currency, invoice_id, subtotal, tax_amount):
    # the confidence and where the value was read.
    evidence: Mapping[str, FieldEvidence] = field(default_factory=dict)
    # The known brand the merchant is, and the category of that brand.
    brand: str | None = None
    brand_category: str | None = None
    # Set when the page was read a second time because the first reading found nothing.
    reading_note: str | None = None

    def confidence(self, name: str) -> float | None:
        """The confidence of a field, None when it was not found."""
        found = self.evidence.get(name)
        return found.confidence if found is not None else None
