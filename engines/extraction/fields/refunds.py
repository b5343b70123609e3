"""Refunds and credit notes: money paid back is a negative amount.

Two signs say a document gives money back:

- *its totals are printed negative* ("TOTAL -12.50", "SUMME 12,50-"): every labelled total
  of the document is below zero. The amounts are then read as their magnitudes, so the
  totals' features, sums and checks work as on any receipt, and the sign is put back on
  every amount at the end;
- *its title says so*: "REFUND", "RETURN", "Rückgabe", "Storno", "Gutschrift", "Credit
  note", "Avoir", "Nota de crédito", "Abono", "Factura rectificativa", "Creditnota", "Nota di
  credito", as a heading at the top of the first page or on the total's row ("Refund
  total"). A returns policy ("Strictly no cash refund", "Goods sold are not refundable")
  says nothing of the kind: the word must not follow "no", "non" or stand in a sentence.

A refund receipt is ``docType`` refund; an invoice's credit note is credit-note.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from .labels import find_labels
from .totals import TOTAL_KINDS, Cell, total_kind
from .view import DocView

REFUND_WORD = re.compile(
    r"\b(?:refund(?:ed)?|return(?:ed)?\s*(?:receipt|slip|goods)?|r[üu]ckgabe|storno|"
    r"erstattung|gutschrift|credit\s*note|avoir|note\s*de\s*cr[ée]dit|nota\s*de\s*cr[ée]dito|"
    r"abono|factura\s*rectificativa|creditnota|creditfactuur|nota\s*di\s*credito|"
    r"bayaran\s*balik|pemulangan)\b",
    re.I,
)
# What turns the word into a policy: "no cash refund", "non-refundable", "returns accepted".
POLICY = re.compile(
    r"\b(?:no|non|not|strictly|only|within|policy|allowed|accepted|nur|keine?|pas\s*de|sin)\b",
    re.I,
)
HEADING_ROWS = 8
MAX_HEADING = 40


def printed_negative(cells: Sequence[Cell]) -> bool:
    """Whether every labelled total of the document is printed below zero."""
    totals = [cell for cell in cells if total_kind(cell) in TOTAL_KINDS]
    return bool(totals) and all(cell.value < 0 for cell in totals)


def magnitudes(cells: Sequence[Cell]) -> list[Cell]:
    """The cells with their signs turned (a refund's amounts read as its magnitudes)."""
    return [
        dataclasses.replace(cell, token=dataclasses.replace(cell.token, value=-cell.value))
        for cell in cells
    ]


def titled_refund(view: DocView) -> bool:
    """Whether a heading of the first page, or a total's row, names a refund or credit note."""
    first = view.first_page_lines()[:HEADING_ROWS]
    for line in first:
        text = line.text.strip()
        found = REFUND_WORD.search(text)
        if found and len(text) <= MAX_HEADING and not POLICY.search(text):
            return True
    for line in view.lines:
        found = REFUND_WORD.search(line.text)
        if found is None or POLICY.search(line.text):
            continue
        kinds = {label.kind for label in find_labels(line.text)}
        if kinds & TOTAL_KINDS:
            return True
    return False
