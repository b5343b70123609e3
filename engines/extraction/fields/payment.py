"""How the customer paid, and the last four digits of the card when printed."""

from __future__ import annotations

import re

# Order matters: the first method found wins, specific wallets before generic "card".
METHODS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("paypal", re.compile(r"paypal", re.I)),
    ("apple_pay", re.compile(r"apple\s*pay", re.I)),
    ("google_pay", re.compile(r"google\s*pay", re.I)),
    ("ideal", re.compile(r"\bideal\b", re.I)),
    ("bank_transfer", re.compile(r"bank\s*transfer|überweisung|wire\s*transfer|sepa|iban", re.I)),
    ("amex", re.compile(r"\bamex\b|american\s*express", re.I)),
    ("mastercard", re.compile(r"master\s*card", re.I)),
    ("visa", re.compile(r"\bvisa\b", re.I)),
    ("debit_card", re.compile(r"girocard|ec[-\s]?karte|\bmaestro\b|debit|\bec\b", re.I)),
    ("credit_card", re.compile(r"credit\s*card|kreditkarte|carte\s*bancaire", re.I)),
    ("card", re.compile(r"\bcard\b|karte|kartenzahlung", re.I)),
    ("cash", re.compile(r"\bcash\b|\bbar\b|\bbargeld\b|tunai|contant|espèces|gegeben", re.I)),
    ("check", re.compile(r"\bcheque\b|\bcheck\s*(no|#)", re.I)),
)
CARD_METHODS = frozenset({"amex", "mastercard", "visa", "debit_card", "credit_card", "card"})

MASKED_CARD = re.compile(r"(?:[X*•#.xX]{2,}[\s-]?){1,4}(?P<last>\d{4})(?!\d)")
ENDING_WORDS = re.compile(
    r"(?:ending(?:\s*in)?|last\s*4(?:\s*digits)?|endet\s*(?:mit|auf)|card\s*no\.?\s*:?"
    r"\s*[X*•#.]*)\s*[:#]?\s*(?P<last>\d{4})(?!\d)",
    re.I,
)


def find_payment_method(lines: list[str]) -> str | None:
    """The payment method, normalized (cash, visa, debit_card, paypal, ...)."""
    text = "\n".join(lines)
    for name, pattern in METHODS:
        if pattern.search(text):
            return name
    return "card" if find_card_ending(lines) else None


def find_card_ending(lines: list[str]) -> str | None:
    """Last four digits of a masked card number ('XXXX XXXX XXXX 1234', 'ending in 1234')."""
    for line in lines:
        match = ENDING_WORDS.search(line) or MASKED_CARD.search(line)
        if match:
            return match.group("last")
    return None
