"""What a document's other amounts say its total is, and what to do when the total disagrees.

A receipt states its total more than once, in independent ways: the articles add up to it;
the subtotal and the tax (or the subtotal less a coupon), and a tip, make it; the tax
table's net and tax per rate make it; the cash handed over less the change given back is it;
a card payment row repeats it. Each is a *source*. A total that no source confirms while the
sources agree among themselves on another figure is, most often, a total OCR misread (a
digit lost, a 0 read as an 8) — and the figure the sources agree on is the one paid.

So, for the amount chosen by the model (``decide``):

- confirmed by a source: kept;
- unconfirmed, and two or more independent sources give one other figure: that figure is
  taken — never silently: the choice carries a warning saying what was printed, what the
  sources give, and which they are, so a person checks it;
- unconfirmed, and a strong source (subtotal and tax, the tax table, cash less change, a
  payment) gives another figure: kept, with a warning naming the disagreement;
- no source at all (a slip that prints only "TOTAL 12.00"): kept, nothing to say.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from .scoring import Candidate, Choice, FieldModel, choose
from .secondary import read_tax_lines, read_tip
from .totals import Cell, cash_facts, item_sums, total_kind
from .view import DocView

ITEMS = "the articles"
PARTS = "the subtotal and the tax"
TABLE = "the tax table"
CASH = "the cash less the change"
PAYMENT = "the payment"
# Sources strong enough alone to dispute a total (articles are often read incompletely).
STRONG = frozenset({PARTS, TABLE, CASH, PAYMENT})


@dataclass(frozen=True)
class AmountChecks:
    """The figures each source gives for the total."""

    by_source: Mapping[str, frozenset[Decimal]]

    def confirming(self, value: Decimal) -> list[str]:
        return [source for source, values in self.by_source.items() if value in values]

    def agreed(self) -> tuple[Decimal, list[str]] | None:
        """The figure two or more sources give (the most sources; ties: none)."""
        votes: Counter[Decimal] = Counter()
        for values in self.by_source.values():
            votes.update(value for value in values if value > 0)
        ranked = votes.most_common(2)
        if not ranked or ranked[0][1] < 2 or (len(ranked) > 1 and ranked[1][1] == ranked[0][1]):
            return None
        value = ranked[0][0]
        return value, self.confirming(value)

    def disputing(self) -> list[tuple[str, Decimal]]:
        """A strong source and its figure, one each (for the warning)."""
        return [
            (source, max(values))
            for source, values in self.by_source.items()
            if source in STRONG and values
        ]


def amount_checks(view: DocView, cells: Sequence[Cell], magnitudes: bool = False) -> AmountChecks:
    """Every source's figures for the total of the document."""
    subtotals = {c.value for c in cells if total_kind(c) == "subtotal" and c.value > 0}
    taxes = {c.value for c in cells if total_kind(c) == "tax" and c.value >= 0}
    reductions = {c.value for c in cells if c.value < 0 and total_kind(c) not in ("change",)}
    # A tip the table left is part of what was paid (the subtotal and the tax and the tip).
    tip_read = read_tip(view)
    tip = abs(tip_read[0]) if tip_read is not None else Decimal(0)
    parts = {s + t + tip for s in subtotals for t in taxes if t < s} | {
        s + r + tip for s in subtotals for r in reductions if -r < s
    }
    lines = read_tax_lines(view, magnitudes)
    table: set[Decimal] = set()
    if lines and all(read.readings[0].net is not None for read in lines):
        table.add(
            sum(
                ((read.readings[0].net or Decimal(0)) + read.readings[0].tax for read in lines),
                Decimal(0),
            )
        )
    facts = cash_facts(cells)
    payments = set() if facts.change else set(facts.tendered)
    by_source = {
        ITEMS: frozenset(value for value in item_sums(cells) if value > 0),
        PARTS: frozenset(parts),
        TABLE: frozenset(table),
        CASH: frozenset(facts.handed),
        PAYMENT: frozenset(payments),
    }
    return AmountChecks({source: values for source, values in by_source.items() if values})


def settle_by_consensus(
    choice: Choice | None,
    candidates: Sequence[Candidate],
    checks: AmountChecks | None,
    model: FieldModel,
) -> Choice | None:
    """The amount the document's sources agree on, as the module docstring says."""
    if choice is None or checks is None or not checks.by_source:
        return choice
    picked: Decimal = choice.candidate.value
    if checks.confirming(picked):
        return choice
    agreed = checks.agreed()
    if agreed is not None and agreed[0] != picked:
        value, sources = agreed
        warning = (
            f"the total printed reads {picked}, but {_listed(sources)} give {value}; "
            f"{value} was taken"
        )
        printed = [c for c in candidates if c.value == value]
        best = choose(model, printed)
        candidate = (
            best.candidate
            if best is not None
            else dataclasses.replace(
                choice.candidate,
                value=value,
                features={**choice.candidate.features, "agreed": 1.0},
            )
        )
        return dataclasses.replace(choice, candidate=candidate, warning=warning)
    disputing = [(s, v) for s, v in checks.disputing() if v != picked]
    if disputing:
        said = "; ".join(f"{source} give {value}" for source, value in disputing)
        return dataclasses.replace(
            choice, warning=f"the total {picked} does not agree with the other amounts: {said}"
        )
    return choice


def _listed(sources: list[str]) -> str:
    return sources[0] if len(sources) == 1 else ", ".join(sources[:-1]) + " and " + sources[-1]
