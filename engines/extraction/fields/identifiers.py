"""Invoice numbers and receipt numbers, found after their label."""

from __future__ import annotations

import itertools
import re

# The id itself: starts with a letter, digit or '#', has at least one digit, no spaces.
_ID = r"(?P<id>#?\s?[A-Z0-9][A-Z0-9_/.\-]*\d[A-Z0-9_/\-]*|#?\d[A-Z0-9_/.\-]*)"
_SEP = r"\s*(?:no\.?|nr\.?|number|num\.?|#|n°|no:|id)?\s*[:.#]?\s*"

INVOICE_LABEL = re.compile(
    r"(?:invoice|rechnung(?:s)?|factuur|facture|fattura|factura|bill)" + _SEP + _ID, re.I
)
INVOICE_WORD_LABEL = re.compile(
    r"(?:invoice\s*(?:number|no\.?|#|id)|rechnungs-?\s*(?:nummer|nr\.?)|factuurnummer|"
    r"n°\s*de\s*facture|facture\s*n°)\s*[:.#]?\s*" + _ID,
    re.I,
)
RECEIPT_LABEL = re.compile(
    r"(?:receipt|bon|beleg|doc(?:ument)?|bill|trans(?:action)?|trx|invoice|ticket|order|"
    r"kassenbon|quittung)" + r"\s*(?:no\.?|nr\.?|number|#|id|num\.?)\s*[:.#]?\s*" + _ID,
    re.I,
)


HASH_ID_LINE = re.compile(r"^#\s?(?P<id>[A-Z0-9][A-Z0-9_/.\-]*\d[A-Z0-9_/\-]*)$", re.I)


def find_invoice_id(lines: list[str]) -> str | None:
    """The invoice number: 'Invoice Number: X' style labels first, then 'Invoice X', then
    a '# X' line right below an INVOICE title (a common template layout)."""
    for pattern in (INVOICE_WORD_LABEL, INVOICE_LABEL):
        for line in lines:
            match = pattern.search(line)
            if match and _looks_like_id(match.group("id")):
                return _tidy(match.group("id"))
    for title, below in itertools.pairwise(lines):
        match = HASH_ID_LINE.match(below)
        if match and re.fullmatch(r"(tax\s*)?invoice", title.strip(), re.I):
            return match.group("id")
    return None


def _tidy(identifier: str) -> str:
    return re.sub(r"^#\s", "#", identifier).rstrip(".")


def find_receipt_id(lines: list[str]) -> str | None:
    """The receipt (till slip) number printed after 'Receipt #', 'Bon-Nr', 'Doc No' ..."""
    for line in lines:
        match = RECEIPT_LABEL.search(line)
        if match and _looks_like_id(match.group("id")):
            return _tidy(match.group("id"))
    return None


def _looks_like_id(candidate: str) -> bool:
    digits = sum(ch.isdigit() for ch in candidate)
    # Dates and amounts are not ids ("01/02/2018", "12.50").
    if re.fullmatch(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}|\d+[.,]\d{2}", candidate):
        return False
    return digits >= 1 and len(candidate) >= 3
