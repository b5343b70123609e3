"""Generated invoices for tests and for the extraction bench.

``generate(count)`` makes ``count`` invoice PDFs that cycle through every language
(English, American English, German, French, Spanish, Dutch, Italian) and every layout,
each with the truth a parser should read from it. The same arguments give the same PDFs.
"""

from __future__ import annotations

from dataclasses import dataclass

from .invoices import Invoice, make_invoice
from .pdf import LAYOUTS, render
from .vocabulary import LANGUAGES


@dataclass(frozen=True)
class GeneratedInvoice:
    invoice: Invoice
    layout: str
    pdf: bytes

    @property
    def name(self) -> str:
        return f"synthetic-{self.invoice.seed}-{self.invoice.language.code}-{self.layout}.pdf"


def generate(count: int, seed: int = 0) -> list[GeneratedInvoice]:
    """``count`` invoices, languages and layouts in turn, from ``seed``."""
    return [
        GeneratedInvoice(invoice, layout, render(invoice, layout))
        for invoice, layout in plan(count, seed)
    ]


def plan(count: int, seed: int = 0) -> list[tuple[Invoice, str]]:
    """What ``generate`` draws, without drawing it: each invoice and its layout."""
    layouts = sorted(LAYOUTS)
    return [
        (
            make_invoice(seed * 100_000 + index, LANGUAGES[index % len(LANGUAGES)]),
            layouts[(index // len(LANGUAGES)) % len(layouts)],
        )
        for index in range(count)
    ]


__all__ = [
    "LANGUAGES",
    "LAYOUTS",
    "GeneratedInvoice",
    "Invoice",
    "generate",
    "make_invoice",
    "plan",
]
