"""The seller's tax registration number: a VAT, GST or sales-tax id printed on the document.

Receipts and invoices print the seller's tax id beside a label that names it: "VAT Reg No",
"GST ID", "USt-IdNr.", "Steuernummer", "N° TVA intracom.", "CIF"/"NIF", "BTW-nr.",
"P. IVA", "Codice fiscale", "EIN", "ABN", "UID", "SST ID", "Tax ID". The value follows the
label on its row, or opens the row below when the label ends its row. Only a label makes a
number a tax id: a bare "DE123456789" could be anything, and registration numbers that are
not tax ids (a company number, SIRET, RCS, KvK, Handelsregister) are not taken.

An invoice between businesses often prints the *buyer's* tax id as well ("Your VAT ID",
"Kunden-USt-IdNr.", "N° TVA client", or any id in the buyer's block under "Bill to"): those
are never the seller's. Of several seller ids the first is taken (letterheads print it at
the top, the legal footer repeats it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from ..layout import TextLine
from .scoring import FieldEvidence
from .view import DocView

# A tax-id label. Longer spellings first within each alternative; case-insensitive.
TAX_ID_LABEL = re.compile(
    r"(?<![\w])(?:"
    r"(?:vat|gst|sst|tax)\s*(?:(?:reg(?:istration)?|id)\.?\s*)?(?:no|nr|number|id|#)?\.?"
    r"|tin\b|ein\b|abn\b|uid(?:-?nr\.?)?"
    r"|ust[\s.-]*id(?:[\s.-]*nr)?\.?|ust[\s.-]*nr\.?|umsatzsteuer[\s-]*(?:id(?:ent)?[\w.-]*|nr\.?)"
    r"|steuer[\s-]*(?:nr|nummer)\.?|st\.?[\s-]*nr\.?"
    r"|(?:n[°ºo]\.?\s*)?tva(?:\s*intra(?:com(?:munautaire)?)?\.?)?"
    r"|n\.?\s*i\.?\s*f\.?|c\.?\s*i\.?\s*f\.?|nif\b|cif\b"
    r"|btw[\s-]*(?:nr|nummer|id)?\.?"
    r"|p\.?\s*iva|partita\s*iva|codice\s*fiscale"
    r")(?![\w])\s*[:#.]?",
    re.I,
)
# Whose id it is, when the label says: the buyer's.
BUYER_ID = re.compile(
    r"\b(?:your|customer|client|buyer|recipient|kunden|ihre|empf[äa]nger|acheteur|"
    r"destinataire|cliente|comprador|klant|afnemer|acquirente)\b",
    re.I,
)
# The value: country prefix and digits, perhaps grouped by spaces, dots, dashes or slashes
# ("GB 123 4567 89", "DE123456789", "12/345/67890", "001234567890", "B12345678", "12-3456789",
# "NL123456789B01", "ATU12345678"). At least six digits in all.
TAX_ID_VALUE = re.compile(
    r"(?<![\w])(?:[A-Z]{2,3}[\s-]?)?[A-Z]?\d[\d\s./-]{4,20}\d[A-Z]?(?:\d{2})?(?![\w])"
)
MIN_DIGITS = 6
MAX_CONFIDENCE = 0.95
MAX_DIGITS = 15


@dataclass(frozen=True)
class TaxId:
    """The seller's tax id as printed (spaces kept out), and where it was read."""

    value: str
    line: TextLine
    start: int
    end: int
    label: str

    def evidence(self, view: DocView) -> FieldEvidence:
        """Where it was read; its confidence is the OCR's in its characters, capped: a label
        names it, what remains uncertain is whether every digit was read right."""
        page = next((p for p in view.pages if p.number == self.line.page), None)
        box = page.page_box(self.line.box_at(self.start, self.end)) if page else None
        confidence = round(min(MAX_CONFIDENCE, self.line.confidence_at(self.start, self.end)), 3)
        return FieldEvidence(confidence, self.line.page, box, self.line.text, "label")


def find_seller_tax_id(view: DocView, buyer: set[tuple[int, int]] | None = None) -> TaxId | None:
    """The first tax id of the document under a tax-id label that is not the buyer's.

    ``buyer``: (row index, segment start) of the buyer's block (``merchant.buyer_segments``).
    """
    buyer = buyer or set()
    for line in view.lines:
        for label in TAX_ID_LABEL.finditer(line.text):
            before = line.text[max(0, label.start() - 25) : label.start()]
            if BUYER_ID.search(before + label.group(0)) or _in_block(
                view, line, label.start(), buyer
            ):
                continue
            found = _value_after(line, label.end()) or _value_below(view, line, label.end())
            if found is not None:
                value_line, start, end = found
                return TaxId(
                    _compact(value_line.text[start:end]),
                    value_line,
                    start,
                    end,
                    label.group(0).strip(" :#."),
                )
    return None


def _in_block(view: DocView, line: TextLine, position: int, block: set[tuple[int, int]]) -> bool:
    return any(
        (line.index, segment.start) in block
        for segment in view.segments(line)
        if segment.start <= position < segment.end
    )


def _value_after(line: TextLine, position: int) -> tuple[TextLine, int, int] | None:
    """The id right after the label on its row (only separators between them)."""
    match = TAX_ID_VALUE.search(line.text, position)
    if match is None or line.text[position : match.start()].strip(" :#.-–|"):
        return None
    end = match.start() + _grouped_length(match.group(0))
    return (line, match.start(), end) if _plausible(line.text[match.start() : end]) else None


def _grouped_length(text: str) -> int:
    """How much of ``text`` is the id: spaces group an id in short runs ("GB 123 4567 89");
    after a longer run, a space ends it ("B90708855 08001 Barcelona": the postcode follows)."""
    parts = text.split(" ")
    length = len(parts[0])
    for previous, part in pairwise(parts):
        longest = max(len(previous), len(part))
        if longest > 4 and not previous.isalpha():
            break
        length += 1 + len(part)
    return length


def _value_below(view: DocView, line: TextLine, position: int) -> tuple[TextLine, int, int] | None:
    """The id opening the row below, when the label ends its row."""
    if line.text[position:].strip(" :#.-–|"):
        return None
    below = view.following(line)
    if below is None:
        return None
    match = TAX_ID_VALUE.match(below.text.lstrip())
    if match is None:
        return None
    offset = len(below.text) - len(below.text.lstrip())
    start = offset + match.start()
    end = start + _grouped_length(match.group(0))
    return (below, start, end) if _plausible(match.group(0)) else None


def _plausible(text: str) -> bool:
    digits = sum(ch.isdigit() for ch in text)
    # A date or an amount is no tax id ("12.03.2024", "1.234,56").
    if re.fullmatch(r"\d{1,2}[./-]\d{1,2}[./-]\d{2,4}", text.strip()):
        return False
    if re.search(r"\d[.,]\d{2}$", text.strip()) and not re.search(r"[A-Z]", text):
        return False
    return MIN_DIGITS <= digits <= MAX_DIGITS


def _compact(text: str) -> str:
    """The id without the spaces printed to group it ("GB 123 4567 89" → "GB123456789");
    slashes and dashes are part of many national formats and stay."""
    return re.sub(r"\s+", "", text).strip(".")
