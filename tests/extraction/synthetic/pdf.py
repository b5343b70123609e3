"""Drawing an ``Invoice`` as a text-layer PDF (reportlab), in one of six layouts.

- ``classic``: issuer top left in large type, title and "label: value" lines top right,
  the buyer under its label, items, totals, a legal footer;
- ``letter``: a business letter (DIN 5008 style): the issuer's name top right, a small
  return-address line over the buyer's address window (no label), a label/value block, a
  subject line with the number, a three-column footer with bank and registration;
- ``header_table``: issuer left and buyer right at the top, the invoice number, dates
  and customer number as a row of column titles over a row of values;
- ``buyer_first``: the buyer's address is the first text on the page and the issuer
  only appears in a smaller block at the right, the payment details and the footer;
- ``compact``: one narrow column: name, number and date on one row, a billing period;
- ``cells``: a form whose header is a grid of bordered label and value cells that are not
  level, and billing and delivery addresses side by side.

Any layout may close with a cash rounding ("Rounding -0.02" and what is to be paid) and
the tendered and change rows of a cash sale, worded as in ``conventions``.
"""

from __future__ import annotations

import io
import random
from collections.abc import Callable
from decimal import Decimal

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen.canvas import Canvas

from .invoices import Invoice

WIDTH, HEIGHT = A4
TITLE_WORD = {
    "en": "Invoice",
    "en-us": "Invoice",
    "de": "Rechnung",
    "fr": "Facture",
    "es": "Factura",
    "nl": "Factuur",
    "it": "Fattura",
}
UNTAXED_NOTE = {
    "en": "No VAT charged: the supplier is not VAT registered.",
    "en-us": "No sales tax charged on these services.",
    "de": "Gemäß § 19 UStG wird keine Umsatzsteuer berechnet.",
    "fr": "TVA non applicable, art. 293 B du CGI.",
    "es": "Operación exenta de IVA (art. 20 LIVA).",
    "nl": "Btw verlegd / vrijgesteld van btw (KOR).",
    "it": "Operazione fuori campo IVA (regime forfettario).",
}
PAID_ROWS = {
    "en": (("Amount paid", "zero"), ("Balance due", "total")),
    "en-us": (("Payments/Credits", "zero"), ("Balance Due", "total")),
    "de": (("Bereits bezahlt", "zero"), ("Offener Betrag", "total")),
    "fr": (("Acompte versé", "zero"), ("Reste à payer", "total")),
    "es": (("Pagado", "zero"), ("Pendiente de pago", "total")),
    "nl": (("Reeds betaald", "zero"), ("Openstaand bedrag", "total")),
    "it": (("Acconto", "zero"), ("Saldo da pagare", "total")),
}
FONTS = (
    ("Helvetica", "Helvetica-Bold"),
    ("Times-Roman", "Times-Bold"),
    ("Courier", "Courier-Bold"),
)


class Sheet:
    """A canvas with top-down coordinates, a font family and page breaks."""

    def __init__(self, rng: random.Random) -> None:
        self.buffer = io.BytesIO()
        self.canvas = Canvas(self.buffer, pagesize=A4)
        self.regular, self.bold = rng.choice(FONTS)
        self.page = 1

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: float = 9,
        bold: bool = False,
        align: str = "left",
    ) -> None:
        self.canvas.setFont(self.bold if bold else self.regular, size)
        draw = {
            "left": self.canvas.drawString,
            "right": self.canvas.drawRightString,
            "centre": self.canvas.drawCentredString,
        }[align]
        draw(x, HEIGHT - y, text)

    def rule(self, y: float, x0: float = 50, x1: float = WIDTH - 50) -> None:
        self.canvas.setLineWidth(0.5)
        self.canvas.line(x0, HEIGHT - y, x1, HEIGHT - y)

    def new_page(self) -> float:
        self.canvas.showPage()
        self.page += 1
        return 60.0

    def finish(self) -> bytes:
        self.canvas.save()
        return self.buffer.getvalue()


def render(invoice: Invoice, layout: str) -> bytes:
    """The invoice as PDF bytes in ``layout`` (one of ``LAYOUTS``)."""
    rng = random.Random(invoice.seed * 7919 + 17)
    sheet = Sheet(rng)
    LAYOUTS[layout](sheet, invoice, rng)
    return sheet.finish()


def _meta(invoice: Invoice, rng: random.Random) -> list[tuple[str, str]]:
    """The label/value pairs of an invoice's header: number, date, other dates, numbers."""
    labels = invoice.labels
    pairs = [
        (labels["number"], invoice.number),
        (labels["date"], invoice.day(invoice.invoice_date)),
    ]
    for label, value in invoice.other_dates:
        if isinstance(value, tuple):
            pairs.append((label, f"{invoice.day(value[0])} – {invoice.day(value[1])}"))
        else:
            pairs.append((label, invoice.day(value)))
    pairs.extend(invoice.other_numbers)
    head, rest = pairs[:2], pairs[2:]
    rng.shuffle(rest)
    # The number and the date usually come first, but not always in that order, and an
    # order or due date may come before the invoice date.
    if rng.random() < 0.3:
        head.reverse()
    if rest and rng.random() < 0.3:
        return [head[0], rest[0], head[1], *rest[1:]]
    return head + rest


def _colon(label: str) -> str:
    return label if label.rstrip().endswith(":") else f"{label}:"


def _items_and_totals(
    sheet: Sheet,
    invoice: Invoice,
    y: float,
    rng: random.Random,
    x0: float = 50,
    x1: float = WIDTH - 50,
) -> float:
    """The item table (continued on further pages when long) and the totals block."""
    language = invoice.language
    size = rng.choice((8, 9, 9, 10))
    columns = language.columns
    qty_x, price_x, amount_x = x1 - 190, x1 - 80, x1
    sheet.text(x0, y, columns[0], size, bold=True)
    sheet.text(qty_x, y, columns[1], size, bold=True, align="right")
    sheet.text(price_x, y, columns[2], size, bold=True, align="right")
    sheet.text(amount_x, y, columns[3], size, bold=True, align="right")
    y += 5
    sheet.rule(y, x0, x1)
    y += size + 6
    two_rates = len(invoice.taxes()) > 1
    for item in invoice.items:
        if y > HEIGHT - 110:
            y = sheet.new_page()
            sheet.text(
                x1,
                40,
                f"{invoice.labels['number']} {invoice.number} – {sheet.page}",
                7,
                align="right",
            )
        description = item.description + (f" ({item.rate}%)" if two_rates else "")
        sheet.text(x0, y, description, size)
        sheet.text(qty_x, y, str(item.quantity), size, align="right")
        sheet.text(
            price_x, y, invoice.money(item.unit_price, mark=rng.random() < 0.5), size, align="right"
        )
        sheet.text(amount_x, y, invoice.money(item.amount), size, align="right")
        y += size + 5
    if y > HEIGHT - 190:
        y = sheet.new_page()
    y += 6
    sheet.rule(y, x1 - 220, x1)
    y += size + 8
    label_x = x1 - 220
    if invoice.untaxed:
        # A small business exempt from VAT: one total and a note why there is no tax.
        sheet.text(x0, y, UNTAXED_NOTE[language.code], size - 1)
    else:
        sheet.text(label_x, y, invoice.labels["subtotal"], size)
        sheet.text(x1, y, invoice.money(invoice.subtotal), size, align="right")
        for rate, tax in invoice.taxes().items():
            y += size + 5
            sheet.text(label_x, y, f"{language.tax_name} {rate}%", size)
            sheet.text(x1, y, invoice.money(tax), size, align="right")
    y += size + 9
    total_size = size + rng.choice((0, 1, 2, 3))
    sheet.text(label_x, y, invoice.labels["total"], total_size, bold=True)
    sheet.text(x1, y, invoice.money(invoice.total), total_size, bold=True, align="right")
    labels = invoice.labels
    if invoice.rounding:
        # Cash rounding to five cents: the adjustment, then what is to be paid.
        y += size + 5
        sheet.text(label_x, y, labels["rounding"], size)
        sheet.text(x1, y, invoice.money(invoice.rounding), size, align="right")
        y += size + 6
        sheet.text(label_x, y, labels["payable"], total_size, bold=True)
        sheet.text(x1, y, invoice.money(invoice.payable), total_size, bold=True, align="right")
    if invoice.paid_rows:
        # "Amount paid 0.00 / Balance due 1,234.56" under the total.
        for label, value in PAID_ROWS[language.code]:
            y += size + 6
            sheet.text(label_x, y, label, size)
            shown = invoice.payable if value == "total" else Decimal(0)
            sheet.text(x1, y, invoice.money(shown), size, align="right")
    if invoice.tendered is not None and invoice.change is not None:
        # A cash sale: the money handed over and the change given back.
        for label, value in (
            (labels["tendered"], invoice.tendered),
            (labels["change"], invoice.change),
        ):
            y += size + 6
            sheet.text(label_x, y, label, size)
            sheet.text(x1, y, invoice.money(value), size, align="right")
    return y + total_size + 12


def _terms(sheet: Sheet, invoice: Invoice, y: float, rng: random.Random) -> float:
    language = invoice.language
    sheet.text(50, y, rng.choice(language.terms), 8)
    y += 12
    if rng.random() < 0.6:
        sheet.text(50, y, rng.choice(language.thanks), 8)
        y += 12
    return y


def _footer_line(sheet: Sheet, invoice: Invoice) -> None:
    issuer = invoice.issuer
    parts = [
        issuer.name,
        *issuer.lines,
        f"{invoice.labels['vat']} {invoice.vat_id}",
        f"IBAN {invoice.iban}",
    ]
    sheet.rule(HEIGHT - 52)
    sheet.text(WIDTH / 2, HEIGHT - 40, " · ".join(parts[:3]), 7, align="centre")
    sheet.text(WIDTH / 2, HEIGHT - 31, " · ".join(parts[3:]), 7, align="centre")


def classic(sheet: Sheet, invoice: Invoice, rng: random.Random) -> None:
    issuer, buyer = invoice.issuer, invoice.buyer
    y = 60.0
    sheet.text(50, y, issuer.name, rng.choice((15, 17, 20)), bold=True)
    y += 16
    for line in (*issuer.lines, f"{invoice.language.phone_label} {invoice.phone}", invoice.email):
        sheet.text(50, y, line, 8)
        y += 10
    sheet.text(
        WIDTH - 50, 62, invoice.labels["title"], rng.choice((18, 22, 24)), bold=True, align="right"
    )
    meta_y = 90.0
    for label, value in _meta(invoice, rng):
        sheet.text(WIDTH - 160, meta_y, _colon(label), 8, align="right")
        sheet.text(WIDTH - 50, meta_y, value, 8, align="right")
        meta_y += 11
    y = max(y, meta_y) + 25
    sheet.text(50, y, _colon(invoice.labels["buyer"]), 9, bold=True)
    y += 12
    sheet.text(50, y, buyer.name, 10)
    for line in buyer.lines:
        y += 11
        sheet.text(50, y, line, 9)
    y = _items_and_totals(sheet, invoice, y + 40, rng)
    _terms(sheet, invoice, y + 10, rng)
    _footer_line(sheet, invoice)


def letter(sheet: Sheet, invoice: Invoice, rng: random.Random) -> None:
    issuer, buyer = invoice.issuer, invoice.buyer
    language = invoice.language
    sheet.text(WIDTH - 50, 60, issuer.name, rng.choice((16, 20, 24)), bold=True, align="right")
    if rng.random() < 0.5:
        sheet.text(WIDTH - 50, 76, " · ".join(issuer.lines), 8, align="right")
    sheet.text(60, 135, " · ".join((issuer.name, *issuer.lines)), 6)
    sheet.rule(138, 60, 300)
    y = 152.0
    if rng.random() < 0.3:
        sheet.text(60, y, _colon(invoice.labels["buyer"]), 8, bold=True)
        y += 11
    sheet.text(60, y, buyer.name, 10)
    for line in buyer.lines:
        y += 12
        sheet.text(60, y, line, 10)
    meta_y = 150.0
    for label, value in _meta(invoice, rng):
        sheet.text(370, meta_y, label, 8)
        sheet.text(WIDTH - 50, meta_y, value, 8, align="right")
        meta_y += 11
    subject_y = max(y, meta_y) + 45
    title = TITLE_WORD[invoice.language.code]
    number_label = invoice.labels["number"]
    subject = f"{number_label} {invoice.number}"
    if title.lower() not in number_label.lower():
        subject = f"{title} {subject}"
    sheet.text(60, subject_y, subject, 12, bold=True)
    y = _items_and_totals(sheet, invoice, subject_y + 35, rng, x0=60)
    _terms(sheet, invoice, y + 10, rng)
    foot = HEIGHT - 70
    sheet.rule(foot - 10)
    columns = (
        (issuer.name, *issuer.lines, f"{language.phone_label} {invoice.phone}"),
        (
            language.bank_label,
            f"{invoice.labels['holder']} {issuer.name}",
            f"IBAN {invoice.iban}",
            "BIC " + "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(8)),
        ),
        (f"{invoice.labels['vat']} {invoice.vat_id}", invoice.email),
    )
    for index, column in enumerate(columns):
        for row, text in enumerate(column):
            sheet.text(60 + index * 175, foot + row * 9, text, 7)


def header_table(sheet: Sheet, invoice: Invoice, rng: random.Random) -> None:
    issuer, buyer = invoice.issuer, invoice.buyer
    sheet.text(50, 60, issuer.name, rng.choice((14, 16, 18)), bold=True)
    y = 75.0
    for line in (*issuer.lines, invoice.email, f"{invoice.labels['vat']} {invoice.vat_id}"):
        sheet.text(50, y, line, 8)
        y += 10
    sheet.text(330, 60, _colon(invoice.labels["buyer"]), 9, bold=True)
    buyer_y = 75.0
    for line in (buyer.name, *buyer.lines):
        sheet.text(330, buyer_y, line, 9)
        buyer_y += 11
    y = max(y, buyer_y) + 25
    sheet.text(50, y, invoice.labels["title"], rng.choice((16, 20)), bold=True)
    y += 28
    meta = _meta(invoice, rng)[:4]
    step = (WIDTH - 100) / len(meta)
    for index, (label, value) in enumerate(meta):
        sheet.text(50 + index * step, y, label, 8, bold=True)
        sheet.text(50 + index * step, y + 13, value, 9)
    sheet.rule(y + 20)
    rest = _meta(invoice, rng)[4:]
    y += 34
    for label, value in rest:
        sheet.text(50, y, f"{_colon(label)} {value}", 8)
        y += 11
    y = _items_and_totals(sheet, invoice, y + 20, rng)
    _terms(sheet, invoice, y + 10, rng)
    _footer_line(sheet, invoice)


def buyer_first(sheet: Sheet, invoice: Invoice, rng: random.Random) -> None:
    issuer, buyer = invoice.issuer, invoice.buyer
    language = invoice.language
    y = 60.0
    sheet.text(50, y, buyer.name, rng.choice((10, 11)))
    for line in buyer.lines:
        y += 12
        sheet.text(50, y, line, 10)
    issuer_y = 60.0
    sheet.text(WIDTH - 50, issuer_y, issuer.name, rng.choice((9, 10, 11)), bold=True, align="right")
    for line in (*issuer.lines, invoice.email):
        issuer_y += 11
        sheet.text(WIDTH - 50, issuer_y, line, 8, align="right")
    y = max(y, issuer_y) + 40
    sheet.text(50, y, invoice.labels["title"], rng.choice((20, 24)), bold=True)
    y += 25
    for label, value in _meta(invoice, rng):
        sheet.text(50, y, f"{_colon(label)} {value}", 9)
        y += 12
    y = _items_and_totals(sheet, invoice, y + 25, rng)
    y = _terms(sheet, invoice, y + 10, rng)
    sheet.text(50, y + 8, language.bank_label, 8, bold=True)
    sheet.text(50, y + 19, f"{invoice.labels['holder']} {issuer.name} – IBAN : {invoice.iban}", 8)
    _footer_line(sheet, invoice)


def compact(sheet: Sheet, invoice: Invoice, rng: random.Random) -> None:
    issuer, buyer = invoice.issuer, invoice.buyer
    left, right = 120.0, WIDTH - 120
    centre = WIDTH / 2
    sheet.text(centre, 60, issuer.name, rng.choice((13, 14, 16)), bold=True, align="centre")
    sheet.text(centre, 76, ", ".join(issuer.lines), 8, align="centre")
    sheet.text(centre, 87, f"{invoice.labels['vat']} {invoice.vat_id}", 8, align="centre")
    y = 120.0
    sheet.text(left, y, f"{TITLE_WORD[invoice.language.code]} {invoice.number}", 11, bold=True)
    sheet.text(
        right,
        y,
        f"{_colon(invoice.labels['date'])} {invoice.day(invoice.invoice_date)}",
        9,
        align="right",
    )
    y += 16
    for label, value in invoice.other_dates:
        text = (
            f"{invoice.day(value[0])} – {invoice.day(value[1])}"
            if isinstance(value, tuple)
            else invoice.day(value)
        )
        sheet.text(left, y, f"{_colon(label)} {text}", 8)
        y += 11
    y += 8
    sheet.text(
        left, y, f"{_colon(invoice.labels['buyer'])} {buyer.name}, {', '.join(buyer.lines)}", 8
    )
    y = _items_and_totals(sheet, invoice, y + 30, rng, x0=left, x1=right)
    _terms(sheet, invoice, y + 10, rng)


def cells(sheet: Sheet, invoice: Invoice, rng: random.Random) -> None:
    """A form: the header as a grid of bordered cells, label left and value right, the
    value set lower in its cell than the label (cells that are not level); the billing and
    delivery addresses side by side under their own titles."""
    issuer, buyer = invoice.issuer, invoice.buyer
    sheet.text(50, 60, issuer.name, rng.choice((14, 16)), bold=True)
    y = 76.0
    for line in (*issuer.lines, f"{invoice.labels['vat']} {invoice.vat_id}", invoice.email):
        sheet.text(50, y, line, 8)
        y += 10
    sheet.text(WIDTH - 50, 62, invoice.labels["title"], 18, bold=True, align="right")
    grid_x, label_w, value_w, row_h = WIDTH - 300.0, 110.0, 140.0, 22.0
    grid_y = 90.0
    rows = _meta(invoice, rng)[:5]
    canvas = sheet.canvas
    canvas.setLineWidth(0.5)
    for index, (label, value) in enumerate(rows):
        top = grid_y + index * row_h
        canvas.rect(grid_x, HEIGHT - top - row_h, label_w, row_h)
        canvas.rect(grid_x + label_w, HEIGHT - top - row_h, value_w, row_h)
        sheet.text(grid_x + 4, top + 8, label, 8, bold=True)
        sheet.text(grid_x + label_w + 4, top + 19, value, 9)
    y = max(y, grid_y + len(rows) * row_h) + 25
    blocks = [(invoice.labels["buyer"], buyer)]
    if invoice.ship_to is not None:
        blocks.append((invoice.labels["ship_to"], invoice.ship_to))
    bottom = y
    for column, (title, party) in enumerate(blocks):
        x = 50 + column * 250
        sheet.text(x, y, _colon(title), 9, bold=True)
        line_y = y + 12
        for text in (party.name, *party.lines):
            sheet.text(x, line_y, text, 9)
            line_y += 11
        bottom = max(bottom, line_y)
    y = _items_and_totals(sheet, invoice, bottom + 30, rng)
    _terms(sheet, invoice, y + 10, rng)
    _footer_line(sheet, invoice)


LAYOUTS: dict[str, Callable[[Sheet, Invoice, random.Random], None]] = {
    "cells": cells,
    "classic": classic,
    "letter": letter,
    "header_table": header_table,
    "buyer_first": buyer_first,
    "compact": compact,
}
