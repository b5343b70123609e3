"""How well and how fast the reconciliation engine matches bank transactions to receipts.

A seeded generator makes a year of card and bank bookings and the receipts and invoices behind
them, with the noise real statements have: card bookings 0–5 days after the receipt, receipts
in another currency booked in euros at the card scheme's rate (drift around the ECB rate),
restaurant bookings above the receipt's total (the tip, printed on a third of the receipts),
the bank's legal name beside the receipt's brand ('ARAL AG 1234 HAMBURG' vs 'Aral'), processor
prefixes ('SQ *…', 'PAYPAL *…'), invoices paid by transfer weeks later with their number in the
booking text (some only in part), split payments (one booking, 2–3 receipts), bookings without
a receipt, receipts without a booking (cash), near-duplicates (the same amount at the same
merchant on nearby days), merchant names cut short by OCR on one receipt in ten, and the card's
last four digits on a third of the receipts and in most booking texts (two cards).

Figures: precision and recall of the auto-matches, recall of the top-3 candidates (the true
document, or the true set of a split, among the three shown for review), and the time to match
the whole set (median of several runs, inputs shuffled each run; every run's decisions must be
the same).

    .venv/bin/python bench/reconcile.py [--seed 42] [--transactions 10000] [--documents 20000]
                                        [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.currency import default_rate_book
from engines.reconciliation import (
    BankTransaction,
    CandidateDocument,
    Decision,
    RateBookRates,
    card_ending,
    match,
)

CENT = Decimal("0.01")
START = date(2025, 1, 1)
DAYS = 365
CITIES = ("HAMBURG", "BERLIN", "MUENCHEN", "KOELN", "FRANKFURT", "LEIPZIG", "BREMEN")
CARDS = ("4242", "8817")
# (brand on the receipt, legal name on the receipt or None, booking-text template, kind,
# receipt currency). {n} is a store or terminal number, {city} a city.
KNOWN = (
    ("Aral", "Aral AG", "ARAL AG {n} {city}", "fuel", "EUR"),
    ("Shell", "Shell Deutschland GmbH", "SHELL DEUTSCHLAND OIL GMBH {n}", "fuel", "EUR"),
    ("Esso", None, "ESSO STATION {n} {city}", "fuel", "EUR"),
    ("JET", None, "JET TANKSTELLE {n} {city}", "fuel", "EUR"),
    ("REWE", "REWE Markt GmbH", "REWE MARKT GMBH {city}", "grocery", "EUR"),
    ("EDEKA", None, "EDEKA {city} {n}", "grocery", "EUR"),
    ("Lidl", "Lidl Dienstleistung GmbH & Co. KG", "LIDL DIENSTL {n}", "grocery", "EUR"),
    ("ALDI SÜD", None, "ALDI SUED {n} {city}", "grocery", "EUR"),
    ("dm-drogerie markt", None, "DM DROGERIE MARKT {n}", "grocery", "EUR"),
    ("Starbucks", None, "STARBUCKS {n} {city}", "cafe", "EUR"),
    ("Café Müller", None, "SUMUP *CAFE MUELLER", "cafe", "EUR"),
    ("Blue Bottle Coffee", "Blue Bottle Coffee Inc.", "SQ *BLUE BOTTLE COFFEE", "cafe", "EUR"),
    ("Trattoria Roma", None, "SQ *TRATTORIA ROMA", "restaurant", "EUR"),
    ("Vapiano", "Vapiano SE", "VAPIANO SE {city}", "restaurant", "EUR"),
    ("Burger King", None, "BURGER KING {n}", "restaurant", "EUR"),
    ("Amazon", "Amazon EU S.à r.l.", "AMAZON EU S.A R.L. {n}", "online", "EUR"),
    ("eBay", "eBay GmbH", "PAYPAL *EBAY", "online", "EUR"),
    ("Zalando", "Zalando SE", "ZALANDO SE", "online", "EUR"),
    ("Pret A Manger", "Pret A Manger (Europe) Ltd", "PRET A MANGER {n} LONDON", "abroad", "GBP"),
    ("Uber", "Uber B.V.", "UBER *TRIP", "abroad", "USD"),
    ("SBB CFF FFS", None, "SBB CFF FFS {n}", "abroad", "CHF"),
    ("Hilton", "Hilton Worldwide Inc.", "HILTON {city} HOTEL", "abroad", "USD"),
    ("Migros", None, "MIGROS {n} ZUERICH", "abroad", "CHF"),
)
SYLLABLES = ("ka", "mo", "ber", "lin", "tech", "sol", "ver", "ta", "nor", "di", "mar", "kus")
TRADES = ("Consulting", "Elektro", "Software", "Druck", "Logistik", "Reinigung", "Bau")
FORMS = ("GmbH", "AG", "UG", "GmbH & Co. KG", "Ltd")
AMOUNTS = {  # (median, spread) of a receipt's total per kind of place, lognormal
    "fuel": (60.0, 0.4),
    "grocery": (35.0, 0.7),
    "cafe": (5.5, 0.4),
    "restaurant": (38.0, 0.5),
    "online": (45.0, 0.9),
    "abroad": (40.0, 0.8),
    "invoice": (400.0, 1.0),
}


@dataclass(frozen=True)
class Merchant:
    brand: str
    legal: str | None
    booking: str
    kind: str
    currency: str


@dataclass
class Generated:
    transactions: list[BankTransaction] = field(default_factory=list)
    documents: list[CandidateDocument] = field(default_factory=list)
    truth: dict[str, frozenset[str]] = field(default_factory=dict)  # transaction → documents
    noise: dict[str, str] = field(default_factory=dict)  # transaction → how it was made


def suppliers(rng: random.Random, count: int) -> list[Merchant]:
    made = []
    for _ in range(count):
        stem = "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()
        trade, form = rng.choice(TRADES), rng.choice(FORMS)
        legal = f"{stem} {trade} {form}"
        made.append(Merchant(f"{stem} {trade}", legal, legal.upper(), "invoice", "EUR"))
    return made


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.book = default_rate_book()
        self.merchants = [Merchant(*row) for row in KNOWN]
        self.suppliers = suppliers(self.rng, 120)
        self.out = Generated()
        self.invoices = 0

    def total(self, kind: str) -> Decimal:
        median, spread = AMOUNTS[kind]
        value = max(0.5, self.rng.lognormvariate(0, spread) * median)
        return Decimal(str(value)).quantize(CENT)

    def day(self) -> date:
        return START + timedelta(days=self.rng.randrange(DAYS - 40))

    def booked_as(self, merchant: Merchant) -> str:
        return merchant.booking.format(n=self.rng.randint(10, 9999), city=self.rng.choice(CITIES))

    def doc(
        self, merchant: Merchant, on: date, total: Decimal, **extra: object
    ) -> CandidateDocument:
        n = len(self.out.documents)
        currency = merchant.currency
        converted = None
        if currency == "EUR":
            converted = total
        else:
            rate = self.book.quote(currency, "EUR", on).rate
            converted = (total * rate).quantize(CENT)
        # A receipt shows the brand, its legal name, or both; an OCR'd name is sometimes cut.
        name = merchant.brand if self.rng.random() < 0.9 else merchant.brand[:-2]
        seller = merchant.legal if merchant.legal and self.rng.random() < 0.5 else ""
        card = self.rng.choice(CARDS) if self.rng.random() < 0.35 else None
        document = CandidateDocument(
            id=f"d{n:06d}",
            date=on,
            total=total,
            currency=currency,
            converted_amount=converted,
            merchant=name,
            seller=seller,
            card_last4=card,
            **extra,  # type: ignore[arg-type]
        )
        self.out.documents.append(document)
        return document

    def booking(
        self,
        noise: str,
        merchant: Merchant,
        on: date,
        amount: Decimal,
        docs: list[CandidateDocument],
        reference: str = "",
        card: str | None = None,
    ) -> None:
        n = len(self.out.transactions)
        counterparty = self.booked_as(merchant)
        if not reference:
            card = card or next((d.card_last4 for d in docs if d.card_last4), None)
            card = card or self.rng.choice(CARDS)
            shown = self.rng.random() < 0.6
            reference = (
                f"{counterparty} // Karte ****{card} {on:%d.%m}" if shown else "Kartenzahlung"
            )
        txn = BankTransaction(
            id=f"t{n:06d}",
            booking_date=on,
            value_date=docs[0].date if docs and self.rng.random() < 0.5 else None,
            amount=-amount,
            currency="EUR",
            counterparty=counterparty,
            reference=reference,
            account="DE02120300000000202051",
        )
        self.out.transactions.append(replace(txn, card_last4=card_ending(reference)))
        self.out.truth[txn.id] = frozenset(d.id for d in docs)
        self.out.noise[txn.id] = noise

    def lag(self) -> timedelta:
        return timedelta(days=self.rng.choices(range(6), weights=(15, 35, 25, 12, 8, 5))[0])

    def pick(self, *kinds: str) -> Merchant:
        return self.rng.choice([m for m in self.merchants if m.kind in kinds])

    # One booking (and its receipts) of each kind of noise.
    def card(self) -> None:
        merchant = self.pick("fuel", "grocery", "cafe", "online")
        on = self.day()
        doc = self.doc(merchant, on, self.total(merchant.kind))
        self.booking("card", merchant, on + self.lag(), doc.total, [doc])

    def tip(self) -> None:
        merchant = self.pick("restaurant")
        on = self.day()
        total = self.total("restaurant")
        tip = (total * Decimal(self.rng.uniform(0.05, 0.15)) * 2).quantize(
            Decimal(1), ROUND_HALF_UP
        ) / 2
        printed = tip if self.rng.random() < 0.35 else None
        doc = self.doc(merchant, on, total, tip=printed)
        self.booking("tip", merchant, on + self.lag(), total + tip, [doc])

    def abroad(self) -> None:
        merchant = self.pick("abroad")
        on = self.day()
        doc = self.doc(merchant, on, self.total("abroad"))
        booked = on + self.lag()
        rate = self.book.quote(merchant.currency, "EUR", booked).rate
        drift = Decimal(str(self.rng.uniform(-0.01, 0.02)))  # the scheme's rate and fee
        self.booking(
            "foreign", merchant, booked, (doc.total * rate * (1 + drift)).quantize(CENT), [doc]
        )

    def invoice(self, partial: bool = False) -> None:
        merchant = self.rng.choice(self.suppliers)
        on = self.day()
        self.invoices += 1
        number = f"RE-2025-{self.invoices:05d}"
        doc = self.doc(merchant, on, self.total("invoice"), invoice_number=number)
        shown = number if self.rng.random() < 0.7 else number.replace("-", " ")
        reference = f"Rechnung {shown} Kundennr {self.rng.randint(10000, 99999)}"
        paid = (doc.total / 2).quantize(CENT) if partial else doc.total
        if self.rng.random() < 0.3 and not partial:
            reference = f"Zahlung {merchant.brand}"  # the number left out
        booked = on + timedelta(days=self.rng.randint(3, 30))
        self.booking("partial" if partial else "invoice", merchant, booked, paid, [doc], reference)

    def split(self) -> None:
        merchant = self.pick("grocery", "cafe")
        on = self.day()
        docs = [
            self.doc(
                merchant, on + timedelta(days=self.rng.randint(0, 1)), self.total(merchant.kind)
            )
            for _ in range(self.rng.randint(2, 3))
        ]
        amount = sum((d.total for d in docs), Decimal(0))
        last = max(d.date for d in docs)
        self.booking("split", merchant, last + self.lag(), amount, docs)

    def missing(self) -> None:
        merchant = self.pick("fuel", "grocery", "cafe", "restaurant", "online")
        on = self.day()
        self.booking("missing", merchant, on + self.lag(), self.total(merchant.kind), [])

    def rivals(self) -> None:
        """The same amount at the same merchant on nearby days: two bookings, two receipts, and
        sometimes a third receipt paid in cash."""
        merchant = self.pick("cafe", "fuel")
        on = self.day()
        total = self.total(merchant.kind)
        for gap in (0, self.rng.randint(1, 3)):
            doc = self.doc(merchant, on + timedelta(days=gap), total)
            self.booking("rival", merchant, doc.date + self.lag(), total, [doc])
        if self.rng.random() < 0.5:
            self.doc(merchant, on + timedelta(days=self.rng.randint(1, 4)), total)

    def cash(self) -> None:
        merchant = self.rng.choice(self.merchants)
        self.doc(merchant, self.day(), self.total(merchant.kind))


NOISE = (  # share of bookings made of each kind
    ("card", 0.50),
    ("tip", 0.08),
    ("abroad", 0.08),
    ("invoice", 0.10),
    ("partial", 0.02),
    ("split", 0.04),
    ("missing", 0.10),
    ("rivals", 0.08),
)


def generate(seed: int, transactions: int, documents: int) -> Generated:
    maker = Generator(seed)
    kinds, weights = zip(*NOISE, strict=True)
    while len(maker.out.transactions) < transactions:
        kind = maker.rng.choices(kinds, weights=weights)[0]
        if kind == "partial":
            maker.invoice(partial=True)
        else:
            getattr(maker, kind)()
    while len(maker.out.documents) < documents:
        maker.cash()
    return maker.out


@dataclass(frozen=True)
class Scores:
    auto: int
    correct: int
    wanted: int  # transactions with a true document (or set)
    top3: int
    wrong: Counter[str]
    outcomes: Counter[str]


def judge(made: Generated, decisions: list[Decision]) -> Scores:
    auto = correct = wanted = top3 = 0
    wrong: Counter[str] = Counter()
    outcomes: Counter[str] = Counter()
    for decision in decisions:
        truth = made.truth[decision.transaction_id]
        outcomes[decision.outcome] += 1
        if truth:
            wanted += 1
            if any(frozenset(c.document_ids) == truth for c in decision.candidates):
                top3 += 1
        if decision.matched is not None:
            auto += 1
            if frozenset(decision.matched.document_ids) == truth:
                correct += 1
            else:
                wrong[made.noise[decision.transaction_id]] += 1
    return Scores(auto, correct, wanted, top3, wrong, outcomes)


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--transactions", type=int, default=10_000)
    parser.add_argument("--documents", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    made = generate(args.seed, args.transactions, args.documents)
    rates = RateBookRates(default_rate_book())
    print(
        f"seed {args.seed}: {len(made.transactions)} transactions, {len(made.documents)} "
        f"documents; made of {dict(Counter(made.noise.values()))}"
    )
    times: list[float] = []
    cpus: list[float] = []
    first = None
    for run in range(args.runs):
        shuffler = random.Random(args.seed * 1000 + run)
        transactions, documents = list(made.transactions), list(made.documents)
        shuffler.shuffle(transactions)
        shuffler.shuffle(documents)
        started, cpu = time.perf_counter(), time.process_time()
        decisions = match(transactions, documents, rates)
        times.append(time.perf_counter() - started)
        cpus.append(time.process_time() - cpu)
        if first is None:
            first = decisions
        elif decisions != first:
            sys.exit(f"run {run}: the decisions changed with the input order")
    assert first is not None
    scores = judge(made, first)
    print(f"outcomes: {dict(scores.outcomes)}")
    print(
        f"auto-match precision {share(scores.correct, scores.auto)} "
        f"({scores.correct}/{scores.auto}), recall {share(scores.correct, scores.wanted)} "
        f"({scores.correct}/{scores.wanted})"
    )
    print(f"wrong auto-matches by noise: {dict(scores.wrong) or 'none'}")
    top3 = share(scores.top3, scores.wanted)
    print(f"top-3 candidate recall {top3} ({scores.top3}/{scores.wanted})")
    runs = ", ".join(f"{t:.2f}" for t in times)
    print(
        f"match {len(made.transactions)} transactions × {len(made.documents)} documents: "
        f"median {statistics.median(times):.2f} s over {args.runs} runs ({runs}); "
        f"CPU median {statistics.median(cpus):.2f} s"
    )
    print("load " + " ".join(f"{value:.2f}" for value in os.getloadavg()))
    print("uptime: " + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


if __name__ == "__main__":
    main()
