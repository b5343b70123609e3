"""Realistic demo documents, so a newcomer sees real-looking data at once.

The content is deterministic for a seed; ids are random, so loading twice adds new documents.
Produces plain field dicts (API-level values: Decimal money,
``date`` docDate) with ids, ready for ``documents.writes.insert_many``.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from domain.documents import SOURCES

CENT = Decimal("0.01")


@dataclass(frozen=True)
class Place:
    country_code: str
    country: str
    city: str
    state: str | None
    currency: str
    vat: Decimal  # typical sales tax / VAT rate


PLACES = (
    Place("US", "United States", "New York", "NY", "USD", Decimal("0.08875")),
    Place("US", "United States", "San Francisco", "CA", "USD", Decimal("0.08625")),
    Place("DE", "Germany", "Berlin", None, "EUR", Decimal("0.19")),
    Place("FR", "France", "Paris", None, "EUR", Decimal("0.20")),
    Place("GB", "United Kingdom", "London", None, "GBP", Decimal("0.20")),
    Place("JP", "Japan", "Tokyo", None, "JPY", Decimal("0.10")),
    Place("CA", "Canada", "Toronto", "ON", "CAD", Decimal("0.13")),
    Place("MY", "Malaysia", "Kuala Lumpur", None, "MYR", Decimal("0.06")),
)


@dataclass(frozen=True)
class Merchant:
    name: str
    category: str
    items: tuple[tuple[str, float, float], ...]  # description, min price, max price
    doc_type: str = "receipt"
    online: bool = False
    recurring: str | None = None


MERCHANTS = (
    Merchant(
        "Starbucks",
        "Meals",
        (("Caffe Latte", 3.5, 5.9), ("Croissant", 2.5, 4.2), ("Cold Brew", 3.9, 5.5)),
    ),
    Merchant(
        "Pret A Manger",
        "Meals",
        (("Chicken Caesar Baguette", 5.5, 7.9), ("Filter Coffee", 1.5, 2.9)),
    ),
    Merchant(
        "Le Petit Bistro",
        "Meals",
        (("Menu du jour", 16, 28), ("Verre de vin", 5, 9), ("Espresso", 2, 3.5)),
    ),
    Merchant(
        "Whole Foods Market",
        "Groceries",
        (("Organic Bananas", 1.5, 3), ("Almond Milk", 3, 5), ("Sourdough Bread", 4, 7)),
    ),
    Merchant(
        "REWE",
        "Groceries",
        (("Vollmilch 1L", 1, 1.6), ("Äpfel 1kg", 2, 3.5), ("Käse Gouda", 2.5, 4.5)),
    ),
    Merchant(
        "Tesco",
        "Groceries",
        (("Semi Skimmed Milk", 1, 1.7), ("Free Range Eggs", 2, 3.2), ("Cheddar", 2.5, 4)),
    ),
    Merchant("Shell", "Fuel", (("Unleaded 95", 40, 95), ("Car Wash", 8, 15))),
    Merchant("Aral", "Fuel", (("Super E10", 45, 90),)),
    Merchant("Uber", "Transport", (("Trip", 9, 48),), online=True),
    Merchant("Deutsche Bahn", "Travel", (("ICE Ticket Berlin-München", 39, 149),), online=True),
    Merchant(
        "Delta Air Lines",
        "Travel",
        (("Economy fare", 180, 620), ("Checked bag", 30, 35)),
        online=True,
    ),
    Merchant(
        "Marriott",
        "Lodging",
        (("Room night", 140, 320), ("Room service", 20, 60)),
        doc_type="invoice",
    ),
    Merchant(
        "Hilton", "Lodging", (("Room night", 130, 290), ("Parking", 20, 45)), doc_type="invoice"
    ),
    Merchant(
        "Staples",
        "Office Supplies",
        (("Printer Paper A4", 6, 12), ("Ballpoint Pens 12pk", 4, 9), ("Stapler", 8, 18)),
    ),
    Merchant("IKEA", "Office Supplies", (("MICKE Desk", 79, 149), ("Desk lamp", 15, 39))),
    Merchant(
        "Amazon Web Services",
        "Software",
        (("EC2 usage", 40, 400), ("S3 storage", 5, 60)),
        doc_type="invoice",
        online=True,
        recurring="monthly",
    ),
    Merchant(
        "Adobe",
        "Software",
        (("Creative Cloud All Apps", 59.99, 59.99),),
        doc_type="invoice",
        online=True,
        recurring="monthly",
    ),
    Merchant(
        "GitHub",
        "Software",
        (("Team plan", 44, 44),),
        doc_type="invoice",
        online=True,
        recurring="monthly",
    ),
    Merchant(
        "Vodafone", "Telecom", (("Mobile plan", 25, 60),), doc_type="invoice", recurring="monthly"
    ),
    Merchant(
        "Con Edison",
        "Utilities",
        (("Electricity", 60, 190),),
        doc_type="invoice",
        recurring="monthly",
    ),
    Merchant(
        "WeWork",
        "Rent",
        (("Hot desk membership", 300, 450),),
        doc_type="invoice",
        recurring="monthly",
    ),
    Merchant("Apple Store", "Equipment", (("MacBook Air", 999, 1499), ("USB-C Adapter", 19, 79))),
    Merchant("Walgreens", "Healthcare", (("Ibuprofen", 6, 12), ("Vitamin D", 8, 15))),
)
PAYMENT_METHODS = ("card", "card", "card", "cash", "bank-transfer", "paypal")


def _money(value: float | Decimal, currency: str = "") -> Decimal:
    # Yen have no minor unit: amounts are whole.
    step = Decimal(1) if currency == "JPY" else CENT
    return Decimal(str(value)).quantize(step, rounding=ROUND_HALF_UP)


def _scale(place: Place) -> Decimal:
    # Prices above are in EUR/USD-like units; yen amounts are ~150×, ringgit ~4.5×.
    return {"JPY": Decimal(150), "MYR": Decimal("4.5")}.get(place.currency, Decimal(1))


def _document(rng: random.Random, today: date, merchant: Merchant, when: date) -> dict[str, Any]:
    place = rng.choice(PLACES)
    scale = _scale(place)
    lines: list[dict[str, Any]] = []
    for description, low, high in rng.sample(merchant.items, k=rng.randint(1, len(merchant.items))):
        quantity = Decimal(rng.choice((1, 1, 1, 2, 3)))
        unit = _money(Decimal(str(rng.uniform(low, high))) * scale, place.currency)
        lines.append(
            {
                "description": description,
                "quantity": quantity,
                "unitPrice": unit,
                "amount": _money(quantity * unit),
                "taxAmount": None,
            }
        )
    subtotal = sum((line["amount"] for line in lines), Decimal(0))
    tax = _money(subtotal * place.vat, place.currency)
    method = rng.choice(PAYMENT_METHODS)
    number = rng.randint(10000, 99999)
    is_invoice = merchant.doc_type == "invoice"
    received = datetime.combine(
        when + timedelta(days=rng.randint(0, 3)),
        time(rng.randint(7, 22), rng.randint(0, 59)),
        tzinfo=UTC,
    )
    return {
        "_id": "doc_" + secrets.token_urlsafe(12),
        "merchant": merchant.name,
        "amount": subtotal + tax,
        "subtotal": subtotal,
        "taxAmount": tax,
        "currency": place.currency,
        "docDate": when,
        "receivedAt": min(received, datetime.combine(today, time(23, 59), tzinfo=UTC)),
        "category": merchant.category,
        "docType": merchant.doc_type,
        "summary": f"{merchant.category} at {merchant.name} in {place.city}: "
        + ", ".join(line["description"] for line in lines),
        "invoiceId": f"INV-{when.year}-{number}" if is_invoice else None,
        "receiptId": None if is_invoice else f"R{number}",
        "paymentStatus": "paid" if not is_invoice or rng.random() < 0.8 else "unpaid",
        "paymentMethod": method,
        "paymentMethodEnding": f"{rng.randint(0, 9999):04d}" if method == "card" else None,
        "isRecurring": merchant.recurring is not None,
        "recurringType": merchant.recurring,
        "expenseLocation": {
            "primary": {
                "countryCode": place.country_code,
                "country": place.country,
                "city": place.city,
                "stateOrProvince": place.state,
                "kind": "online" if merchant.online else "in-store",
            }
        },
        "lineItems": lines,
        "source": rng.choice(("upload", *SOURCES)),  # uploads twice as likely
        "processingStatus": "processed",
        "exportStatus": "exported" if rng.random() < 0.3 else "not-exported",
    }


def demo_documents(count: int, *, seed: int = 7, today: date | None = None) -> list[dict[str, Any]]:
    """``count`` documents over the two years before ``today``: ~4% archived, recurring monthly
    bills, and ~3% duplicate pairs (the second copy marked ``duplicateOf`` the first)."""
    rng = random.Random(seed)
    today = today or date.today()
    documents: list[dict[str, Any]] = []
    while len(documents) < count:
        merchant = rng.choice(MERCHANTS)
        when = today - timedelta(days=rng.randint(0, 729))
        document = _document(rng, today, merchant, when)
        documents.append(document)
        if len(documents) < count and rng.random() < 0.03:
            copy = {
                **document,
                "_id": "doc_" + secrets.token_urlsafe(12),
                "duplicateOf": document["_id"],
                "processingStatus": "warning",
                "processingReason": (
                    f"Possible duplicate of {document['_id']}: same merchant, amount and date"
                ),
            }
            document["duplicates"] = [copy["_id"]]
            documents.append(copy)
    for document in documents:
        if (
            rng.random() < 0.04
            and not document.get("duplicates")
            and not document.get("duplicateOf")
        ):
            document["archived"] = True
            document["archivedAt"] = document["receivedAt"]
    return documents
