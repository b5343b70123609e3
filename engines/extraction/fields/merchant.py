"""Who issued the document: a known brand, a company name with a legal form, or the
first line of the header that is not an address, a phone number or a title."""

from __future__ import annotations

import re

from ..known_merchants import BRANDS, normalize_merchant

HEADER_LINES = 12
BRAND_WORD_LINES = 6
# Forms only a registered company name carries: a line with one is the issuer's name even
# when an address follows on the same line or the name holds a word like "Taman".
STRONG_LEGAL_FORM = re.compile(
    r"\b(sdn\.?\s*bhd|s/b|bhd|gmbh|ltd|limited|llc|plc|pte|pvt|plt|llp|b\.v\.|s\.a\.|"
    r"sarl|s\.r\.l\.|corp)(?![\w])",
    re.I,
)
# What disqualifies even such a line: contact data, tax ids, licensing notes, titles.
NOT_A_COMPANY = re.compile(
    r"tel|fax|phone|www\.|http|@|gst|vat|licensee|franchise|invoice|receipt|rechnung", re.I
)
# Company registration numbers printed beside the name: "(913144-A)", "789417-W",
# "(JM0292487-D)", "(LLP0007299-LGN)". They are not part of the name.
REGISTRATION = re.compile(r"\(?\b[A-Z]{0,4}\d{5,}-?[A-Z]{0,3}\b\)?", re.I)
# Column titles and staff lines ("Code Desc Qty RM Amt", "Cashier: Anna", "Staff: 12").
NOT_A_HEADER_NAME = re.compile(r"\bqty\b|\bdesc|\bamt\b|cashier|staff|\S\s*:(\s|$)", re.I)
LEGAL_FORM = re.compile(
    r"\b(sdn\.?\s*bhd|s/b|bhd|gmbh|ag|kg|ltd|limited|inc|llc|plc|pte|pvt|b\.v\.|bv|s\.a\.|"
    r"sarl|s\.r\.l\.|spa|enterprise|trading|restaurant|restoran|company|co\.|corp)\b",
    re.I,
)
NOT_A_NAME = re.compile(
    r"tel|fax|phone|www\.|http|@|gst|vat|reg|invoice|receipt|rechnung|quittung|beleg|"
    r"tax|date|datum|welcome|willkommen|cash\s*sales?|page|seite|order|bill|copy|"
    r"jalan|jln|street|str\.|straße|strasse|road|avenue|lot\s|no\.\s*\d|taman|"
    r"öffnungszeiten|opening|uhr|\d{4,}",
    re.I,
)
# The bank account an invoice asks to be paid into belongs to its issuer; invoices that
# print the customer's address at the top name the issuer only here.
PAYEE = re.compile(
    r"(titulaire\s*du\s*compte|kontoinhaber|account\s*(holder|name)|beneficiary|payee)"
    r"\s*:\s*(?P<name>[^\d,;:]{3,60}?)\s*(?:$|[,;]|\s-\s|\biban\b)",
    re.I,
)
DOMAIN = re.compile(
    r"(?:www\.|@|https?://|\b)([a-z0-9-]+)\.(?:com|de|co|net|org|nl|fr|in|my)\b", re.I
)


def find_merchant(lines: list[str]) -> str | None:
    """The merchant: a known brand, else a company name, else the first name-like line.

    Brands come first because chain stores print their name as a logo that OCR reads
    poorly, while the brand's web domain or a clean header word is reliable.
    """
    header = [line.strip() for line in lines[:HEADER_LINES] if line.strip()]
    brand = _known_brand(header, lines)
    if brand is not None:
        return brand
    for line in lines:
        payee = PAYEE.search(line)
        if payee and _letters(payee.group("name")) >= 3:
            return _tidy(payee.group("name"))
    company = _registered_company(header)
    if company is not None:
        return company
    cleaned = [REGISTRATION.sub(" ", line).strip() for line in header]
    for line in cleaned:
        if LEGAL_FORM.search(line) and _letters(line) >= 4 and not NOT_A_NAME.search(line):
            return _tidy(line)
    for line in cleaned:
        if (
            _letters(line) >= 3
            and not NOT_A_NAME.search(line)
            and not NOT_A_HEADER_NAME.search(line)
            and _mostly_letters(line)
        ):
            return _tidy(line)
    return None


def _registered_company(header: list[str]) -> str | None:
    """The first header line with a company's legal form, cut after that form.

    Malaysian and Singaporean receipts print the trading name above the company's
    registered name ("KIKU JAPANESE RESTAURANT" / "TK DIVISION KITCHEN SDN BHD"); the
    registered name is the issuer. Text after the form is usually the address.
    """
    for line in header:
        forms = list(STRONG_LEGAL_FORM.finditer(line))
        if not forms:
            continue
        name = REGISTRATION.sub(" ", line[: forms[-1].end()])
        if _letters(name) >= 6 and not NOT_A_COMPANY.search(name):
            return _tidy(name)
    return None


# Longest keys first, so "Amazon Web Services" wins over "Amazon".
_PREFIX_KEYS = sorted((key for key in BRANDS if len(key) >= 4), key=len, reverse=True)


def _known_brand(header: list[str], lines: list[str]) -> str | None:
    # Brands are matched as a whole header word (the first lines only: "real" or "dm" in
    # running text is no evidence), as the start of a header line, or as the name in a
    # web or e-mail domain anywhere ("www.lidl.de").
    for line in header[:BRAND_WORD_LINES]:
        for word in re.findall(r"[\w.'&-]+", line):
            brand = BRANDS.get(normalize_merchant(word))
            if brand is not None:
                return brand.name
    for line in header:
        normalized = normalize_merchant(line)
        for key in _PREFIX_KEYS:
            if normalized.startswith(key):
                return BRANDS[key].name
    for line in lines:
        for domain in DOMAIN.findall(line):
            brand = BRANDS.get(normalize_merchant(domain))
            if brand is not None:
                return brand.name
    return None


def _letters(line: str) -> int:
    return sum(ch.isalpha() for ch in line)


def _mostly_letters(line: str) -> bool:
    visible = [ch for ch in line if not ch.isspace()]
    return bool(visible) and _letters(line) / len(visible) >= 0.7


def _tidy(line: str) -> str:
    return re.sub(r"\s{2,}", " ", line.strip(" .,:;-*|_=")).strip()
