"""Receipt, invoice or other; and whether the text is a financial document at all."""

from __future__ import annotations

import re

from .field_types import DocType

INVOICE_WORDS = re.compile(
    r"\binvoice\b|rechnung|factuur|facture|fattura|factura|bill\s*to|due\s*date|"
    r"payment\s*terms|zahlungsziel|tax\s*invoice",
    re.I,
)
RECEIPT_WORDS = re.compile(
    r"receipt|kassenbon|\bbon\b|quittung|beleg|cashier|kasse|change|rückgeld|zurück|"
    r"thank\s*you|vielen\s*dank|cash|tunai|bargeld|terminal|store|filiale|"
    r"cash\s*sales|till",
    re.I,
)
# What only an invoice carries, and what only a till slip does.
INVOICE_MARKS = re.compile(
    r"bill(?:ed)?\s*to|invoice\s*to|sold\s*to|ship\s*to|rechnungs(?:adresse|empf[äa]nger)|"
    r"factur[ée]e?\s*[àa]|factura\s*a\b|factuuradres|fatturat[oa]\s*a|due\s*date|pay\s*by|"
    r"payment\s*terms|f[äa]llig|zahlbar|zahlungsziel|[ée]ch[ée]ance|vencimiento|vervaldatum|"
    r"scadenza|\biban\b|bank\s*details|bankverbindung|coordonn[ée]es\s*bancaires|"
    r"datos\s*bancarios|bankgegevens|coordinate\s*bancarie",
    re.I,
)
TILL_MARKS = re.compile(
    r"cashier|kasse\b|kassierer|caissier|cajero|kassa|cassiere|\bchange\b|r[üu]ckgeld|"
    r"wechselgeld|\bbaki\b|terminal|tunai|\bcash\b|bargeld|gegeben|table\s*\d|pax|"
    r"member\s*(?:card|no)|thank\s*you.*come\s*again",
    re.I,
)
FINANCIAL_WORDS = re.compile(
    r"total|summe|amount|betrag|subtotal|tax|vat|gst|mwst|price|preis|paid|payment|"
    r"invoice|receipt|rechnung|eur|usd|€|\$|£",
    re.I,
)


def classify(
    text: str, has_amount: bool, has_total_line: bool, has_invoice_number: bool = False
) -> DocType:
    """Invoice or receipt, by the marks each carries.

    An invoice names its buyer, a due date or payment terms, bank details or an invoice
    number; a till slip has a cashier, cash and change, a terminal. "Tax invoice" alone
    decides nothing: Malaysian and Singaporean till slips are titled so.
    """
    head = text[: max(600, len(text) // 3)]
    invoice_marks = len(INVOICE_MARKS.findall(text)) + int(has_invoice_number)
    if INVOICE_WORDS.search(head) and not re.search(r"tax\s*invoice", head, re.I):
        invoice_marks += 2
    till_marks = len(TILL_MARKS.findall(text))
    if invoice_marks and invoice_marks > till_marks:
        return "invoice"
    if RECEIPT_WORDS.search(text) or has_total_line:
        return "receipt"
    if INVOICE_WORDS.search(text):
        return "invoice"
    return "receipt" if has_amount else "other"


def non_financial_reason(text: str, amount_count: int, has_total_line: bool) -> str | None:
    """Why the text is not a receipt or an invoice, or None when it looks financial.

    A financial document has amounts and at least a financial word; a letter that mentions
    one price, or a photo with no text, is not one.
    """
    if not text.strip():
        return "no text could be read from the document"
    keywords = len(FINANCIAL_WORDS.findall(text))
    if amount_count == 0:
        return "no money amounts found in the text"
    if not has_total_line and keywords == 0:
        return "amounts found but no total, tax or payment wording"
    if not has_total_line and amount_count < 2 and keywords < 2:
        return "only a single amount and no financial wording; not a receipt or invoice"
    return None
