"""From scored candidates to each field's value: the model's pick, bounded by rules of what
receipts and invoices mean.

The fitted model ranks candidates by many weak features; some facts about documents are
not weak and hold everywhere, so they are rules here rather than weights learnt from a few
examples:

- *admissible candidates*: a date labelled as due, delivery, order, period or validity date
  is never the document's date, a name in the buyer's block (under "Bill to",
  "Rechnungsempfänger", …) never the issuer, a customer, order or VAT number never the
  invoice number — while any other candidate remains;
- *cash tendered and change*: when the pick is the amount handed over or the change given
  back, and tendered − change is printed, that is the total;
- *cash rounding*: when a rounding adjustment is printed and the pick plus or minus it is a
  multiple of 0.05 printed on the document, that rounded figure is what was paid;
- *the payee is the seller*: the name after an account-holder label ("Kontoinhaber:",
  "Account name:", "Titulaire du compte :") owns the bank account the invoice is paid to;
  when the pick is another name, the payee's is taken;
- *a year misread*: when the picked date's year is one digit away from the year every other
  date on the page agrees on (and at least two years from it), the year is the others'.

Then each choice is marked *contested* where the document disputes it — a total under a
stronger total label printed below the pick, a brand beside a registered company (a
franchise's receipt names both), a labelled date other than an unlabelled pick — and its
confidence is recalibrated with that mark, so a disputed value is sent for review.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from decimal import Decimal

from .consensus import AmountChecks, settle_by_consensus
from .scoring import Candidate, Choice, FieldModel, choose
from .totals import Cell, cash_facts

SCORED_FIELDS = ("amount", "doc_date", "merchant", "invoice_id")
FIVE_CENTS = Decimal("0.05")
# Features that put a date under a label naming another date (due, delivery, period …).
OTHER_DATE = frozenset({"label_other", "above_other", "beside_other"})
# Features that put a name in the buyer's block.
BUYER = frozenset({"buyer_block", "buyer_label"})
# A number under a customer, order, VAT … label is no invoice number, wherever it sits.
OTHER_NUMBER = frozenset({"label_other", "above_other", "beside_other"})
EXCLUDED = {"doc_date": OTHER_DATE, "merchant": BUYER, "invoice_id": OTHER_NUMBER}


def decide(
    models: Mapping[str, FieldModel],
    candidates: Mapping[str, Sequence[Candidate]],
    cells: Sequence[Cell],
    today: date,
    checks: AmountChecks | None = None,
) -> dict[str, Choice | None]:
    """Each scored field's choice (None when nothing was found). ``checks``: what the
    document's other amounts say the total is (``consensus``)."""
    choices: dict[str, Choice | None] = {}
    for name in SCORED_FIELDS:
        pool = admissible(name, candidates[name])
        choices[name] = choose(models[name], pool)
    choices["amount"] = settle_amount(
        choices["amount"], candidates["amount"], cells, models["amount"]
    )
    choices["amount"] = settle_by_consensus(
        choices["amount"], candidates["amount"], checks, models["amount"]
    )
    choices["merchant"] = settle_issuer(choices["merchant"], candidates["merchant"], models)
    choices["doc_date"] = settle_year(choices["doc_date"], candidates["doc_date"], today)
    for name, choice in choices.items():
        if choice is not None:
            contested = CONTESTS[name](choice.candidate, candidates[name])
            confidence = models[name].confidence(
                choice.score, choice.margin, choice.candidate.ocr_confidence, contested
            )
            choices[name] = dataclasses.replace(choice, contested=contested, confidence=confidence)
    choices[LEGAL_NAME] = legal_name(choices["merchant"], candidates["merchant"], models)
    choices["merchant"] = prefer_brand(choices["merchant"], candidates["merchant"], models)
    return choices


# The registered company (a candidate with a legal form), beside the merchant's pick.
LEGAL_NAME = "merchant_legal_name"


def prefer_brand(
    merchant: Choice | None, candidates: Sequence[Candidate], models: Mapping[str, FieldModel]
) -> Choice | None:
    """The name people know: when the pick is a registered company and a known brand heads
    the document too (a franchise's receipt, a chain's operator), the brand is the merchant
    and the company its legal name (``legal_name``) — both right, for different readers, so
    neither contests the other any more."""
    if merchant is None or not merchant.candidate.features.get("legal_strong"):
        return merchant
    brands = [
        c
        for c in candidates
        if c.features.get("brand")
        and not c.features.get("legal_strong")
        and not _has(c, BUYER)
        and c.identity != merchant.candidate.identity
    ]
    best = choose(models["merchant"], brands)
    if best is None:
        return merchant
    return dataclasses.replace(best, contested=0.0, confidence=merchant.confidence)


def legal_name(
    merchant: Choice | None, candidates: Sequence[Candidate], models: Mapping[str, FieldModel]
) -> Choice | None:
    """The seller's registered name: the pick itself when it carries a legal form ("Sdn
    Bhd", "GmbH", "B.V."), else the best-scored such name outside the buyer's block (a
    franchise's receipt heads with the brand and prints its operator below)."""
    if merchant is not None and merchant.candidate.features.get("legal_strong"):
        return merchant
    legal = [
        c
        for c in candidates
        if c.features.get("legal_strong") and not _has(c, BUYER) and len(str(c.value)) >= 4
    ]
    return choose(models["merchant"], legal)


STRONG_TOTAL = frozenset({"cell_total_strong", "row_total_strong", "above_total_strong"})
TOTAL_LABEL = STRONG_TOTAL | {"cell_total", "row_total", "above_total"}
DATE_LABELS = frozenset(
    f"{where}_{kind}" for where in ("label", "above", "beside") for kind in ("issue", "date")
)


def _has(candidate: Candidate, names: frozenset[str]) -> bool:
    return any(candidate.features.get(name) for name in names)


def contested_amount(pick: Candidate, candidates: Sequence[Candidate]) -> float:
    """Another amount under a strong total label ("Total payable") further down, when the
    pick has none: two totals disagree."""
    if _has(pick, STRONG_TOTAL) or pick.line is None:
        return 0.0
    return float(
        any(
            c.value != pick.value
            and _has(c, STRONG_TOTAL)
            and c.line is not None
            and c.line.index > pick.line.index
            for c in candidates
        )
    )


def contested_merchant(pick: Candidate, candidates: Sequence[Candidate]) -> float:
    """A brand and a registered company both head the document (a franchise names its
    operator), and the pick is one of them."""
    if pick.features.get("brand"):
        other = "legal_strong"
    elif pick.features.get("legal_strong"):
        other = "brand"
    else:
        return 0.0
    return float(
        any(
            c.identity != pick.identity
            and c.features.get(other)
            and not c.features.get("buyer_block")
            for c in candidates
        )
    )


def contested_date(pick: Candidate, candidates: Sequence[Candidate]) -> float:
    """An unlabelled pick while another date carries a date label."""
    if _has(pick, DATE_LABELS):
        return 0.0
    return float(any(c.value != pick.value and _has(c, DATE_LABELS) for c in candidates))


CONTESTS = {
    "amount": contested_amount,
    "doc_date": contested_date,
    "merchant": contested_merchant,
    "invoice_id": lambda pick, candidates: 0.0,
}


def admissible(name: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates a field may take: those the rules exclude go only when others remain."""
    excluded = EXCLUDED.get(name)
    if excluded is None:
        return list(candidates)
    kept = [c for c in candidates if not excluded & {k for k, v in c.features.items() if v}]
    return kept or list(candidates)


def settle_amount(
    choice: Choice | None,
    candidates: Sequence[Candidate],
    cells: Sequence[Cell],
    model: FieldModel,
) -> Choice | None:
    """The amount paid, when the pick is cash handed over, change, or a total before a
    printed cash rounding."""
    if choice is None:
        return None
    picked: Decimal = choice.candidate.value
    facts = cash_facts(cells)
    printed = {c.value for c in candidates}
    # A pick that is itself tendered − change ("Cash 71.00", "Cash received 101.00",
    # "Change 30.00") is the total already.
    if picked in facts.tendered | facts.change and picked not in facts.handed:
        due = sorted(v for v in facts.handed if v != picked)
        shown = [v for v in due if v in printed]
        if shown:
            return _moved(choice, candidates, shown[-1], model)
        given_back = [picked - back for back in facts.change if back < picked]
        if picked in facts.tendered and given_back:
            # Not printed as such (or not read): cash handed over minus the change given
            # back is what the purchase cost, never the banknote.
            return _derived(choice, max(given_back), "tendered_minus_change")
    if picked % FIVE_CENTS:
        for step in sorted(facts.rounding):
            for rounded in (picked + step, picked - step):
                if rounded > 0 and rounded % FIVE_CENTS == 0 and rounded in printed:
                    return _moved(choice, candidates, rounded, model)
    return choice


def settle_issuer(
    choice: Choice | None, candidates: Sequence[Candidate], models: Mapping[str, FieldModel]
) -> Choice | None:
    """The account holder's name when the pick is someone else's."""
    if choice is None:
        return None
    payees = {
        str(c.identity) for c in candidates if c.source == "payee" and len(str(c.identity)) >= 4
    }
    picked = str(choice.candidate.identity)
    if not payees or any(p in picked or picked in p for p in payees):
        return choice
    same = [
        c for c in candidates if any(str(c.identity) in p or p in str(c.identity) for p in payees)
    ]
    best = choose(models["merchant"], same)
    return choice if best is None else dataclasses.replace(choice, candidate=best.candidate)


def settle_year(
    choice: Choice | None, candidates: Sequence[Candidate], today: date
) -> Choice | None:
    """The picked date with the year the page's other dates agree on, when its own year is
    one OCR slip (a single digit) away from it."""
    if choice is None:
        return None
    picked: date = choice.candidate.value
    others = {
        c.value.year
        for c in candidates
        if c.line is not choice.candidate.line or c.start != choice.candidate.start
    }
    others.discard(picked.year)
    if len(others) != 1:
        return choice
    (year,) = others
    if abs(year - picked.year) < 2 or not _one_digit_apart(year, picked.year):
        return choice
    try:
        fixed = picked.replace(year=year)
    except ValueError:
        return choice
    if fixed > today + timedelta(days=1):
        return choice
    return _derived(choice, fixed, "year_repaired")


def _derived(choice: Choice, value: object, how: str) -> Choice:
    """The choice with a value worked out from the row it was read on."""
    candidate = dataclasses.replace(
        choice.candidate, value=value, features={**choice.candidate.features, how: 1.0}
    )
    return dataclasses.replace(choice, candidate=candidate)


def _one_digit_apart(first: int, second: int) -> bool:
    a, b = f"{first:04d}", f"{second:04d}"
    return sum(x != y for x, y in zip(a, b, strict=True)) == 1


def _moved(
    choice: Choice, candidates: Sequence[Candidate], value: Decimal, model: FieldModel
) -> Choice:
    """The choice moved to the best-scored candidate printing ``value``, keeping the
    model's confidence in its decision."""
    best = choose(model, [c for c in candidates if c.value == value])
    assert best is not None
    return dataclasses.replace(choice, candidate=best.candidate)
