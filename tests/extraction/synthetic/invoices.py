"""Made-up invoices: what they say (``Invoice``) and the truth a parser should find.

``make_invoice(seed)`` draws one invoice from a seeded random generator: the issuer (a
company with a legal form, or a sole trader), the buyer (a company or a person), an
invoice number in one of the common shapes, the invoice date with due, order, delivery or
period dates around it, items with one or two tax rates, and how the document prints
dates and amounts in its language. ``pdf.render`` draws it in one of several layouts.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from .conventions import CONVENTIONS
from .vocabulary import FIRST_NAMES, LANGUAGES, LAST_NAMES, Language

CENT = Decimal("0.01")
FIVE_CENTS = Decimal("0.05")
# Invoices are dated up to five years before this day (a fixed day: the same seed gives
# the same invoice every time, and no date lies in the future).
ANCHOR = date(2025, 10, 31)


@dataclass(frozen=True)
class Party:
    name: str
    lines: tuple[str, ...]  # address lines below the name


@dataclass(frozen=True)
class Item:
    description: str
    quantity: int
    unit_price: Decimal
    rate: int

    @property
    def amount(self) -> Decimal:
        return (self.unit_price * self.quantity).quantize(CENT)


@dataclass(frozen=True)
class Invoice:
    """One invoice's content; the fields a parser must find are ``issuer.name``, ``total``,
    ``invoice_date``, ``number`` and ``language.currency``."""

    seed: int
    language: Language
    issuer: Party
    buyer: Party
    number: str
    invoice_date: date
    other_dates: tuple[tuple[str, date | tuple[date, date]], ...]  # (label, date or period)
    other_numbers: tuple[tuple[str, str], ...]  # customer, order numbers
    items: tuple[Item, ...]
    vat_id: str
    iban: str
    phone: str
    email: str
    labels: dict[str, str] = field(default_factory=dict)  # the label variant used per role
    month_first: bool = False
    textual_dates: bool = False
    symbol_first: bool = False
    currency_mark: str = "€"
    space_groups: bool = False  # "1 280,00" (French usage) instead of "1.280,00"
    untaxed: bool = False  # a VAT-exempt small business: no tax lines, one total
    paid_rows: bool = False  # "Amount paid" and "Balance due" under the total
    # The total rounded to five cents for payment in cash ("Rounding -0.02", "Please pay");
    # 0 when not rounded.
    rounding: Decimal = Decimal(0)
    tendered: Decimal | None = None  # a cash sale: the money handed over (change given back)
    ship_to: Party | None = None  # a delivery address beside the billing one

    @property
    def subtotal(self) -> Decimal:
        return sum((item.amount for item in self.items), Decimal(0))

    def taxes(self) -> dict[int, Decimal]:
        """Tax per rate, on the net amounts of that rate (none for an untaxed invoice)."""
        if self.untaxed:
            return {}
        by_rate: dict[int, Decimal] = {}
        for item in self.items:
            by_rate[item.rate] = by_rate.get(item.rate, Decimal(0)) + item.amount
        return {
            rate: (net * rate / 100).quantize(CENT, ROUND_HALF_UP)
            for rate, net in sorted(by_rate.items())
        }

    @property
    def tax(self) -> Decimal:
        return sum(self.taxes().values(), Decimal(0))

    @property
    def total(self) -> Decimal:
        return self.subtotal + self.tax

    @property
    def payable(self) -> Decimal:
        """What is to be paid: the total after any cash rounding (the field to read)."""
        return self.total + self.rounding

    @property
    def change(self) -> Decimal | None:
        return None if self.tendered is None else self.tendered - self.payable

    def money(self, value: Decimal, mark: bool = True) -> str:
        """An amount as this invoice prints it ("1.234,56 €", "£1,234.56", "$1,234.56")."""
        text = f"{abs(value):,.2f}"
        if self.language.decimal_comma:
            group = " " if self.space_groups else "."
            text = text.replace(",", "X").replace(".", ",").replace("X", group)
        if value < 0:
            text = "-" + text
        if not mark:
            return text
        if self.symbol_first:
            return f"{self.currency_mark}{'' if len(self.currency_mark) == 1 else ' '}{text}"
        return f"{text} {self.currency_mark}"

    def day(self, value: date) -> str:
        """A date as this invoice prints it."""
        language = self.language
        if self.textual_dates:
            month = language.months[value.month - 1]
            if language.code.startswith("en"):
                if self.month_first:
                    return f"{month} {value.day}, {value.year}"
                return f"{value.day} {month} {value.year}"
            if language.code == "de":
                return f"{value.day}. {month} {value.year}"
            if language.code == "es":
                return f"{value.day} de {month} de {value.year}"
            return f"{value.day} {month} {value.year}"
        if self.month_first:
            return f"{value.month:02d}/{value.day:02d}/{value.year}"
        separator = {"de": ".", "nl": "-"}.get(language.code, "/")
        if language.code in ("en", "fr", "es", "it") and self.seed % 7 == 3:
            return value.isoformat()
        return f"{value.day:02d}{separator}{value.month:02d}{separator}{value.year}"


def make_invoice(seed: int, language: Language | None = None) -> Invoice:
    """One random but realistic invoice, the same for the same seed."""
    rng = random.Random(seed)
    language = language or rng.choice(LANGUAGES)
    issuer = _issuer(rng, language)
    buyer = _buyer(rng, language)
    invoice_date = ANCHOR - timedelta(days=rng.randint(20, 5 * 365))
    other_dates: list[tuple[str, date | tuple[date, date]]] = []
    if rng.random() < 0.8:
        other_dates.append(
            (
                rng.choice(language.due_label),
                invoice_date + timedelta(days=rng.choice((7, 14, 30, 60))),
            )
        )
    if rng.random() < 0.4:
        other_dates.append(
            (
                rng.choice(language.order_date_label),
                invoice_date - timedelta(days=rng.randint(1, 25)),
            )
        )
    if rng.random() < 0.3:
        other_dates.append(
            (rng.choice(language.delivery_label), invoice_date - timedelta(days=rng.randint(0, 10)))
        )
    if rng.random() < 0.3:
        end = invoice_date.replace(day=1) - timedelta(days=1)
        other_dates.append((rng.choice(language.period_label), (end.replace(day=1), end)))
    rng.shuffle(other_dates)
    other_numbers = []
    if rng.random() < 0.6:
        other_numbers.append(
            (rng.choice(language.customer_no_label), str(rng.randint(10000, 999999)))
        )
    if rng.random() < 0.4:
        other_numbers.append((rng.choice(language.order_no_label), _order_number(rng)))
    items = tuple(_items(rng, language))
    ways = CONVENTIONS[language.code]
    rounds, cash = rng.random() < 0.15, rng.random() < 0.12
    month_first = language.code == "en-us"
    mark = {
        "EUR": rng.choice(("€", "€", "EUR")),
        "GBP": rng.choice(("£", "GBP")),
        "USD": rng.choice(("$", "$", "USD")),
    }[language.currency]
    invoice = Invoice(
        seed=seed,
        language=language,
        issuer=issuer,
        buyer=buyer,
        number=_invoice_number(rng, invoice_date),
        invoice_date=invoice_date,
        other_dates=tuple(other_dates),
        other_numbers=tuple(other_numbers),
        items=items,
        vat_id=_vat_id(rng, language),
        iban=_iban(rng, language),
        phone=_phone(rng, language),
        email=_email(rng, issuer.name, language),
        labels={
            "title": rng.choice(language.title),
            "number": rng.choice(language.number_label + ways.number),
            "date": rng.choice(language.date_label + ways.date),
            "payable": rng.choice(ways.payable),
            "ship_to": rng.choice(ways.ship_to),
            "rounding": rng.choice(ways.rounding),
            "tendered": rng.choice(ways.tendered),
            "change": rng.choice(ways.change),
            "buyer": rng.choice(language.buyer_label),
            "subtotal": rng.choice(language.subtotal_label),
            "total": rng.choice(language.total_label),
            "vat": rng.choice(language.vat_id_label),
            "holder": rng.choice(language.holder_label),
        },
        month_first=month_first,
        textual_dates=rng.random() < 0.3,
        symbol_first=mark in ("£", "$") or (mark == "€" and rng.random() < 0.3),
        currency_mark=mark,
        space_groups=language.decimal_comma
        and rng.random() < (0.6 if language.code == "fr" else 0.15),
        untaxed=rng.random() < 0.1,
        paid_rows=rng.random() < 0.2,
        ship_to=_buyer(rng, language) if rng.random() < 0.3 else None,
    )
    if rounds:
        # Rounded to five cents for payment in cash (no line when already even).
        even = (invoice.total / FIVE_CENTS).quantize(Decimal(1), ROUND_HALF_UP) * FIVE_CENTS
        invoice = dataclasses.replace(invoice, rounding=even - invoice.total)
    if cash:
        invoice = dataclasses.replace(invoice, tendered=_banknotes(invoice.payable))
    return invoice


def _banknotes(bill: Decimal) -> Decimal:
    """A plausible amount handed over: the bill rounded up to the next note of the size of
    a fifth of it (5, 10, 20, 50, … units)."""
    for note in (5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000):
        if note * 5 >= bill:
            break
    return Decimal(note) * (bill // note + 1)


def _issuer(rng: random.Random, language: Language) -> Party:
    if rng.random() < 0.15:
        # A sole trader: a person's name and a trade, no legal form.
        name = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)} {rng.choice(language.trades)}"
    else:
        words = rng.sample(language.words, 2)
        first = words[0] if rng.random() < 0.6 else f"{words[0]} {words[1]}"
        name = f"{first} {rng.choice(language.trades)} {rng.choice(language.legal_forms)}"
    return Party(name, _address(rng, language))


def _buyer(rng: random.Random, language: Language) -> Party:
    if rng.random() < 0.5:
        words = rng.sample(language.words, 2)
        name = f"{words[1]} {rng.choice(language.trades)} {rng.choice(language.legal_forms)}"
        contact = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        lines = (
            (contact, *_address(rng, language)) if rng.random() < 0.4 else _address(rng, language)
        )
        return Party(name, lines)
    return Party(f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}", _address(rng, language))


def _address(rng: random.Random, language: Language) -> tuple[str, ...]:
    street = rng.choice(language.streets)
    number = rng.randint(1, 180)
    postcode, city = rng.choice(language.cities)
    if language.code in ("en", "en-us") or language.code == "fr":
        first = f"{number} {street}"
    else:
        first = f"{street} {number}"
    if language.code == "en-us":
        return (first, f"{city}, {postcode}")
    if language.code == "en":
        return (first, city, postcode)
    return (first, f"{postcode} {city}")


def _invoice_number(rng: random.Random, day: date) -> str:
    year = day.year
    shapes = (
        f"INV-{year}-{rng.randint(1, 9999):04d}",
        f"RE-{rng.randint(10000, 99999)}",
        f"{year}{rng.randint(100000, 999999)}",
        f"F{year}/{rng.randint(1, 999):03d}",
        f"A-{rng.randint(1, 999999):06d}",
        f"{rng.randint(1000, 99999)}",
        f"{year % 100:02d}-{rng.randint(1000, 9999)}",
        f"FA-{year}-{rng.randint(1, 99999):05d}",
        f"INV{rng.randint(1000000, 9999999)}",
        f"{year}.{rng.randint(1, 9999):04d}",
    )
    return rng.choice(shapes)


def _order_number(rng: random.Random) -> str:
    return rng.choice(
        (
            f"PO-{rng.randint(1000, 99999)}",
            f"{rng.randint(1000000, 9999999)}",
            f"ORD-{rng.randint(100, 9999)}",
        )
    )


def _items(rng: random.Random, language: Language) -> list[Item]:
    count = rng.choice((1, 2, 3, 3, 4, 5, 6, 8)) if rng.random() < 0.92 else rng.randint(26, 34)
    rates = language.tax_rates[:2] if rng.random() < 0.25 else language.tax_rates[:1]
    items = []
    for _ in range(count):
        unit = Decimal(rng.randint(150, 90000)) / 100
        if rng.random() < 0.3:
            unit = unit.quantize(Decimal(1))
        items.append(
            Item(
                rng.choice(language.goods),
                rng.choice((1, 1, 1, 2, 3, 5, 10, 12)),
                unit,
                rng.choice(rates),
            )
        )
    return items


def _vat_id(rng: random.Random, language: Language) -> str:
    digits = "".join(str(rng.randint(0, 9)) for _ in range(9))
    return {
        "en": f"GB{digits}",
        "en-us": f"{digits[:2]}-{digits[2:]}",
        "de": f"DE{digits}",
        "fr": f"FR{rng.randint(10, 99)}{digits}",
        "es": f"B{digits[:8]}",
        "nl": f"NL{digits}B01",
        "it": f"IT{digits}{rng.randint(10, 99)}",
    }[language.code]


def _iban(rng: random.Random, language: Language) -> str:
    country = {
        "en": "GB",
        "en-us": "US",
        "de": "DE",
        "fr": "FR",
        "es": "ES",
        "nl": "NL",
        "it": "IT",
    }[language.code]
    digits = "".join(str(rng.randint(0, 9)) for _ in range(18))
    groups = " ".join(digits[i : i + 4] for i in range(0, 16, 4))
    return f"{country}{rng.randint(10, 99)} {groups} {digits[16:]}"


def _phone(rng: random.Random, language: Language) -> str:
    code = {"en": 44, "en-us": 1, "de": 49, "fr": 33, "es": 34, "nl": 31, "it": 39}[language.code]
    return f"+{code} {rng.randint(10, 99)} {rng.randint(1000000, 9999999)}"


def _email(rng: random.Random, name: str, language: Language) -> str:
    """Mostly the company's own domain; sometimes a mail provider's or a billing service's."""
    box = rng.choice(("info", "billing", "accounts", "office", "invoices"))
    roll = rng.random()
    if roll < 0.6:
        return f"{box}@{_domain(name)}.{_tld(language)}"
    if roll < 0.8:
        handle = _domain(name) + rng.choice(("", ".office", "-billing"))
        return f"{handle}@{rng.choice(('gmail.com', 'outlook.com', 'gmx.de', 'orange.fr'))}"
    return f"noreply@{rng.choice(('invoicely', 'billingcloud', 'factura-online', 'paydesk'))}.com"


def _domain(name: str) -> str:
    word = name.split()[0].lower()
    return "".join(ch for ch in word if ch.isalnum() and ch.isascii()) or "example"


def _tld(language: Language) -> str:
    return {
        "en": "co.uk",
        "en-us": "com",
        "de": "de",
        "fr": "fr",
        "es": "es",
        "nl": "nl",
        "it": "it",
    }[language.code]
