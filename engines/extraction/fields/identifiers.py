"""Invoice numbers (scored candidates) and receipt numbers (the first labelled one).

An invoice number is an identifier-shaped token after a label on its row ("Invoice No.:",
"Rechnungsnummer", "N° de facture", "Número de factura", "Factuurnummer", "Numero
fattura", …) or below a label that stands alone in its column (a header row "Invoice # |
Date | Due"). Customer, order, VAT and reference numbers are candidates too, with features
saying so: the fitted model learns to pass them over.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from ..layout import TextLine
from .dates import NUMERIC, TEXTUAL
from .labels import INVOICE_NUMBER_LABEL, INVOICE_TITLE, NUMBER_LABEL, OTHER_NUMBER_LABEL
from .scoring import Candidate
from .view import DocView, Segment

# The id itself: letters, digits and separators, at least one digit, no spaces.
ID_TOKEN = re.compile(r"#?\s?(?P<id>[A-Z0-9][A-Z0-9_/.\-]*[A-Z0-9]|[0-9]{3,})", re.I)
DATE_LIKE = re.compile(r"\d{1,4}[./-]\d{1,2}[./-]\d{2,4}")
AMOUNT_LIKE = re.compile(r"\d+[.,]\d{2}")
VAT_LIKE = re.compile(r"(?:[A-Z]{2}\d{8,12}(?:B\d{2})?|[A-Z]{2}\d{2}[A-Z0-9]{10,30})", re.I)
DOCUMENT_WORD = re.compile(r"\bdoc|beleg|documento?", re.I)
FILLER = re.compile(r"^[\s:.#\-–|]*(?:no\.?|nr\.?|n[°º]\.?|number|#)?[\s:.#\-–|]*", re.I)
RECEIPT_LABEL = re.compile(
    r"(?:receipt|bon|beleg|doc(?:ument)?|bill|trans(?:action)?|trx|invoice|ticket|order|"
    r"kassenbon|quittung|ticket|recibo|ricevuta|reçu|bonnummer)"
    r"\s*(?:no\.?|nr\.?|number|#|id|num\.?)\s*[:.#]?\s*"
    r"(?P<id>#?\s?[A-Z0-9][A-Z0-9_/.\-]*\d[A-Z0-9_/\-]*|#?\d[A-Z0-9_/.\-]*)",
    re.I,
)


def invoice_number_candidates(view: DocView) -> list[Candidate]:
    """Identifier tokens governed by a number label, with features of label and shape."""
    found: list[Candidate] = []
    for line in view.lines:
        for kind, label_start, label_end, segment in _labels(view, line):
            token = _token_after(line.text, label_end, segment.end)
            if token is None and not line.text[label_end : segment.end].strip(" :.#-–|"):
                # "Invoice No.:      INV-1" with the value in the next column.
                beside = view.next_segment(line, segment.end)
                if beside is not None:
                    token = _token_after(line.text, beside.start, beside.end)
            if token is not None:
                found.append(_candidate(view, line, token, f"label_{kind}", label_end))
                continue
            left = line.box_at(label_start, label_start + 1)[0]
            right = line.box_at(max(label_start, label_end - 1), label_end)[2]
            below = view.following(line)
            under = list(_tokens_under(view, below, left, right)) if below is not None else []
            for start, end in under:
                assert below is not None
                found.append(_candidate(view, below, (start, end), f"above_{kind}", start))
            if not under:
                # A table whose cells are not level: the value in the next cell to the
                # right, half a row up or down ("Invoice No." | "INV-7734").
                for other, (start, end) in _tokens_beside(view, line, right):
                    found.append(_candidate(view, other, (start, end), f"beside_{kind}", start))
    counts = Counter(candidate.value for candidate in found)
    texts = "\n".join(view.texts)
    for candidate in found:
        candidate.features["repeats"] = float(
            counts[candidate.value] > 1 or texts.count(candidate.value) > 1
        )
    return found


def _labels(view: DocView, line: TextLine) -> Iterator[tuple[str, int, int, Segment]]:
    """(kind, label start, label end, the label's segment) for each number label of the row."""
    for segment in view.segments(line):
        text = segment.text
        spans: list[tuple[int, int, str]] = []
        for match in INVOICE_NUMBER_LABEL.finditer(text):
            # "Doc No", "Beleg-Nr.", "Numero documento" number any document: on a till
            # slip the receipt, on an invoice the invoice.
            kind = "document" if DOCUMENT_WORD.search(match.group()) else "invoice"
            spans.append((match.start(), match.end(), kind))
        title = INVOICE_TITLE.match(text)
        if title and not spans:
            spans.append((title.start(), title.end(), "title"))
        bare = NUMBER_LABEL.match(text)
        if bare and not spans:
            spans.append((bare.start(), bare.end(), "number"))
        for match in OTHER_NUMBER_LABEL.finditer(text):
            if all(match.end() <= s or match.start() >= e for s, e, _ in spans):
                spans.append((match.start(), match.end(), "other"))
        for start, end, kind in sorted(spans):
            yield kind, segment.start + start, segment.start + end, segment


def _token_after(text: str, label_end: int, segment_end: int) -> tuple[int, int] | None:
    rest = text[label_end:segment_end]
    filler = FILLER.match(rest)
    offset = filler.end() if filler else 0
    match = ID_TOKEN.match(rest, offset)
    if match is None or not _looks_like_id(match.group("id")):
        return None
    return label_end + match.start("id"), label_end + match.end("id")


def _tokens_under(
    view: DocView, line: TextLine, left: float, right: float
) -> Iterator[tuple[int, int]]:
    """The first id token of ``line`` in the column of a label spanning ``left``–``right``
    (left-aligned columns start under the label, right-aligned ones end under it)."""
    dates = [m.span() for pattern in (NUMERIC, TEXTUAL) for m in pattern.finditer(line.text)]
    for match in ID_TOKEN.finditer(line.text):
        start, end = match.span("id")
        if any(s < end and start < e for s, e in dates):
            continue  # a date's year is no number
        x0, _, x1, _ = line.box_at(start, end)
        slack = view.text_height
        if x0 < right + slack and x1 > left - slack and _looks_like_id(match.group("id")):
            yield start, end
            return


def _tokens_beside(
    view: DocView, line: TextLine, right: float
) -> Iterator[tuple[TextLine, tuple[int, int]]]:
    """The first id token right of a label on the rows just above or below it, when its
    box overlaps the label's band vertically by a text height (the cell beside it)."""
    slack = view.text_height
    band = (line.y0 - slack, line.y1 + slack)
    # Below first: a value set lower in its cell than its label is the common case.
    for other in (view.following(line), view.previous(line)):
        if other is None:
            continue
        for match in ID_TOKEN.finditer(other.text):
            start, end = match.span("id")
            x0, y0, _, y1 = other.box_at(start, end)
            if x0 < right or y1 < band[0] or y0 > band[1] or not _looks_like_id(match.group("id")):
                continue
            own = next(seg for seg in view.segments(other) if seg.start <= start < seg.end)
            if other.text[own.start : start].strip(" :.#-–|"):
                break  # the token has a label of its own
            yield other, (start, end)
            return


def _candidate(
    view: DocView, line: TextLine, token: tuple[int, int], label: str, label_end: int
) -> Candidate:
    start, end = token
    value = line.text[start:end].rstrip(".,;:")
    digits = sum(ch.isdigit() for ch in value)
    features = {
        label: 1.0,
        "distance": min(40, max(0, start - label_end)) / 20,
        "digit_share": digits / max(1, len(value)),
        "letters": float(any(ch.isalpha() for ch in value)),
        "separator": float(any(ch in "-/_." for ch in value)),
        "length": min(20, len(value)) / 20,
        "vat_like": float(bool(VAT_LIKE.fullmatch(value))),
        "date_like": float(bool(DATE_LIKE.search(value))),
        "position": view.document_position(line),
        "ocr": line.confidence_at(start, end),
    }
    return Candidate(value, line, start, end, features, "identifier", value.lower())


def _looks_like_id(candidate: str) -> bool:
    digits = sum(ch.isdigit() for ch in candidate)
    if AMOUNT_LIKE.fullmatch(candidate) or DATE_LIKE.fullmatch(candidate):
        return False
    return digits >= 1 and len(candidate) >= 3


def find_receipt_id(lines: list[str]) -> str | None:
    """The receipt (till slip) number printed after 'Receipt #', 'Bon-Nr', 'Doc No' ..."""
    for line in lines:
        match = RECEIPT_LABEL.search(line)
        if match and _looks_like_id(match.group("id").lstrip("# ")):
            return re.sub(r"^#\s", "#", match.group("id")).rstrip(".")
    return None
