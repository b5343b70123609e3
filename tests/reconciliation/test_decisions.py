"""The decisions: auto-match only above the workspace's threshold, one-to-one, with no rival
within the margin on either side; splits and partial payments proposed, never matched
silently; a rejected pair never proposed again; candidates found through the index, at the
booking date's rate; the same decisions whatever the input order."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.currency import default_rate_book
from engines.reconciliation import MatchSettings, RateBookRates, match, signals

from .stand_ins import DAY, FixedRates, doc, txn

RATES = FixedRates({("USD", "EUR"): "0.9"})


def test_a_clear_match_is_made_with_its_reasons() -> None:
    [decision] = match(
        [txn(card_last4="4242")], [doc(card_last4="4242"), doc("d2", "17.00")], RATES
    )
    assert decision.outcome == "auto_match"
    assert decision.matched is not None and decision.matched.document_ids == ("d1",)
    assert decision.matched.score == 95
    assert decision.matched.reasons == (
        "amount 42.50 EUR equals the total",
        "booked the same day as the document date (card bookings lag 0–5 days)",
        "'SHELL DEUTSCHLAND OIL GMBH 1234' ~ 'Shell' 90%",
        "both in EUR",
        "card ending 4242 on both",
    )
    assert [c.document_ids for c in decision.candidates] == [("d1",)]  # 17.00 is no candidate


def test_below_the_threshold_is_for_review_and_the_workspace_sets_it() -> None:
    # Amount and date agree; the receipt names no merchant: 60 points.
    unnamed = doc(merchant="")
    [decision] = match([txn()], [unnamed], RATES)
    assert decision.outcome == "needs_review"
    assert decision.why == "best score 60 is below the threshold 70"
    assert [c.document_ids for c in decision.candidates] == [("d1",)]
    [lowered] = match([txn()], [unnamed], RATES, MatchSettings(threshold=55))
    assert lowered.outcome == "auto_match"


def test_switched_off_or_taken_back_once_it_is_for_a_person() -> None:
    """Automatic matching off in the workspace, or a document a person took back from an
    automatic match: still the best candidate, never matched without a person."""
    [off] = match([txn()], [doc()], RATES, MatchSettings(auto=False))
    assert off.outcome == "needs_review" and off.matched is None
    assert off.why == "automatic matching is off in this workspace"
    assert [c.document_ids for c in off.candidates] == [("d1",)]
    [manual] = match([txn()], [doc()], RATES, manual=["d1"])
    assert manual.outcome == "needs_review" and manual.matched is None
    assert manual.why == "d1 was taken back from an automatic match once: a person decides"
    assert [c.document_ids for c in manual.candidates] == [("d1",)]
    [other] = match([txn()], [doc()], RATES, manual=["d9"])
    assert other.outcome == "auto_match"


def test_a_rival_candidate_within_the_margin_blocks_the_auto_match() -> None:
    # The same amount at the same merchant two days apart, one booking: which was it?
    receipts = [doc("d1"), doc("d2", date=DAY - timedelta(days=2))]
    [decision] = match([txn()], receipts, RATES)
    assert decision.outcome == "needs_review"
    assert decision.why == "d2 scores 85, within 10 of 85"
    assert [c.document_ids for c in decision.candidates] == [("d1",), ("d2",)]
    # One card ending apart is still within the margin (10 points, inclusive).
    with_card = [doc("d1", card_last4="4242"), doc("d2", date=DAY - timedelta(days=2))]
    [decision] = match([txn(card_last4="4242")], with_card, RATES)
    assert decision.outcome == "needs_review"
    # Outside the margin (a late receipt speaks against itself): matched.
    far = [doc("d1"), doc("d2", date=DAY - timedelta(days=9))]
    [decision] = match([txn()], far, RATES, MatchSettings(margin=10))
    assert decision.outcome == "auto_match" and decision.matched is not None
    assert decision.matched.document_ids == ("d1",)
    [narrow] = match([txn()], receipts, RATES, MatchSettings(margin=0))
    assert narrow.outcome == "needs_review"  # even without a margin a tie is never decided


def test_a_second_transaction_wanting_the_same_document_is_a_rival() -> None:
    bookings = [txn("t1"), txn("t2", booking_date=DAY + timedelta(days=1))]
    decisions = match(bookings, [doc()], RATES)
    assert [d.outcome for d in decisions] == ["needs_review", "needs_review"]
    assert decisions[0].rivals == ("t2",)
    assert decisions[0].why == "t2 also wants d1 within 10 points"
    assert decisions[1].rivals == ("t1",)
    # Each with a receipt of its own: both matched, one to one.
    bookings = [txn("t1"), txn("t2", "-17.10", booking_date=DAY + timedelta(days=1))]
    decisions = match(bookings, [doc(), doc("d2", "17.10")], RATES)
    assert [d.outcome for d in decisions] == ["auto_match", "auto_match"]


def test_a_split_payment_is_proposed_not_matched() -> None:
    parts = [doc("d1", "30.00"), doc("d2", "12.50", date=DAY - timedelta(days=1))]
    [decision] = match([txn()], parts, RATES)
    assert decision.outcome == "needs_review"
    assert decision.matched is None
    [split] = decision.candidates
    assert split.kind == "split" and split.document_ids == ("d1", "d2")
    assert split.reasons[0] == "amount 42.50 EUR is the sum of 2 receipts: 30.00 + 12.50"
    assert split.score >= MatchSettings().threshold  # strong, and still a person decides
    assert decision.why == "a split match is never made without a person"


def test_a_three_part_split_of_another_merchant_is_not_proposed() -> None:
    parts = [doc("d1", "20.00"), doc("d2", "12.50"), doc("d3", "10.00")]
    [decision] = match([txn()], parts, RATES)
    assert [c.document_ids for c in decision.candidates if c.kind == "split"] == [
        ("d1", "d2", "d3")
    ]
    others = [doc("d1", "20.00", merchant="Edeka"), doc("d2", "22.50", merchant="Edeka")]
    [decision] = match([txn()], others, RATES)
    assert decision.outcome == "no_candidate"


def test_a_partial_payment_is_proposed_not_matched() -> None:
    invoice = doc(total="1200.00", invoice_number="RE-2025-0042", merchant="Muster Software")
    paying = txn(
        amount="-500.00",
        counterparty="MUSTER SOFTWARE GMBH",
        reference="Rechnung RE-2025-0042 Teilzahlung",
        booking_date=DAY + timedelta(days=20),
    )
    [decision] = match([paying], [invoice], RATES)
    assert decision.outcome == "needs_review"
    [partial] = decision.candidates
    assert partial.kind == "partial"
    assert "invoice number RE-2025-0042 in the booking text" in partial.reasons
    assert decision.why == "a partial match is never made without a person"


def test_a_rejected_pair_is_never_proposed_again() -> None:
    receipts = [doc("d1"), doc("d2", "30.00"), doc("d3", "12.50")]
    [before] = match([txn()], receipts, RATES)
    assert {c.document_ids for c in before.candidates} == {("d1",), ("d2", "d3")}
    [after] = match([txn()], receipts, RATES, rejected={("t1", "d1"), ("t1", "d3")})
    assert after.candidates == ()
    assert after.outcome == "no_candidate"
    # Rejected for this transaction only.
    other = match([txn("t2")], receipts, RATES, rejected={("t1", "d1")})
    assert other[0].candidates[0].document_ids == ("d1",)


def test_a_foreign_receipt_is_converted_at_the_booking_date() -> None:
    rates = FixedRates({("USD", "EUR"): "0.9"})
    receipt = doc(total="50.00", currency="USD", merchant="Uber", date=DAY - timedelta(days=2))
    booked = txn(amount="-45.60", counterparty="UBER *TRIP", reference="UBER *TRIP")
    [decision] = match([booked], [receipt], rates)
    assert decision.outcome == "auto_match"  # 30 + 15 + 25: converted, on time, same merchant
    assert ("USD", "EUR", DAY) in rates.asked
    assert all(day == DAY for _, _, day in rates.asked)
    # Without a rate, the converted amount extraction stored (at the document's date) serves.
    stored = doc(
        total="50.00",
        currency="USD",
        merchant="Uber",
        converted_amount="45.10",
        date=DAY - timedelta(days=2),
    )
    [decision] = match([booked], [stored], FixedRates())
    assert decision.candidates and "converted" in decision.candidates[0].reasons[0]


def test_far_amounts_and_dates_are_never_scored() -> None:
    # Candidates come from the index: a receipt of another amount, or of the right amount a
    # year earlier, is not looked at (no 'another merchant' reason, no candidate at all).
    receipts = [doc("d1", "99.99"), doc("d2", date=DAY - timedelta(days=365))]
    [decision] = match([txn()], receipts, RATES)
    assert decision.outcome == "no_candidate" and decision.candidates == ()


def test_zero_and_negative_amounts_are_no_trouble() -> None:
    receipts = [
        doc("d1", "0.00"),
        doc("d2", "-42.50"),  # a credit note
        doc(
            "d3",
            "0.00",
            currency="USD",
            converted_amount="0.00",
            tip="1.00",
            invoice_number="INV-0001",
        ),
    ]
    # The booking names d3's invoice: it is scored, through the stored converted amount.
    t3 = txn("t3", "1.00", reference="INV-0001")
    decisions = match([txn("t1", "0.00"), txn("t2", "-42.50"), t3], receipts, FixedRates())
    assert [d.outcome for d in decisions] == ["no_candidate"] * 3


amounts = st.sampled_from(["42.50", "30.00", "12.50", "17.10", "45.00"])
offsets = st.integers(min_value=-3, max_value=8)
merchants = st.sampled_from(["Shell", "Aral", ""])


@given(
    receipts=st.lists(st.tuples(amounts, offsets, merchants), min_size=1, max_size=8),
    bookings=st.lists(st.tuples(amounts, offsets), min_size=1, max_size=6),
    data=st.data(),
)
def test_the_decisions_do_not_depend_on_the_input_order(
    receipts: list[tuple[str, int, str]], bookings: list[tuple[str, int]], data: st.DataObject
) -> None:
    docs = [
        doc(f"d{i}", total, date=DAY + timedelta(days=offset), merchant=name)
        for i, (total, offset, name) in enumerate(receipts)
    ]
    txns = [
        txn(f"t{i}", f"-{amount}", booking_date=DAY + timedelta(days=offset))
        for i, (amount, offset) in enumerate(bookings)
    ]
    rejected = {(t.id, d.id) for t, d in zip(txns, docs[::2], strict=False)}
    expected = match(txns, docs, RATES, rejected=rejected)
    shuffled_txns = data.draw(st.permutations(txns))
    shuffled_docs = data.draw(st.permutations(docs))
    assert match(shuffled_txns, shuffled_docs, RATES, rejected=rejected) == expected
    # One transaction per document at most, and never a rejected pair.
    matched = [d.matched.document_ids for d in expected if d.matched is not None]
    assert len(matched) == len(set(matched))
    for decision in expected:
        for candidate in decision.candidates:
            for doc_id in candidate.document_ids:
                assert (decision.transaction_id, doc_id) not in rejected


def test_candidates_come_from_the_index_not_from_every_document(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 2,000 receipts of every amount and day of a year: one booking scores only the few whose
    # total, converted total or merchant-and-date fit, never all of them.
    receipts = [
        doc(
            f"d{i:04d}",
            f"{5 + (i * 7919) % 20000 / 100:.2f}",
            date=DAY + timedelta(days=i % 365 - 180),
            merchant=("Shell", "Aral", "REWE", "")[i % 4],
            currency=("EUR", "EUR", "EUR", "USD")[i % 4],
        )
        for i in range(2000)
    ] + [doc("hit")]
    scored: list[str] = []
    amount = signals.amount

    def counting(*args: Any) -> Any:
        scored.append(args[2].id)
        return amount(*args)

    monkeypatch.setattr(signals, "amount", counting)
    [decision] = match([txn(amount="-42.50")], receipts, RATES)
    assert "hit" in scored and len(scored) <= 20, scored
    assert decision.candidates[0].document_ids == ("hit",)
    assert len(set(scored)) == len(scored)  # each document scored once


money_values = st.decimals(
    min_value=-100000, max_value=100000, places=2, allow_nan=False, allow_infinity=False
)
days = st.integers(min_value=-400, max_value=400).map(lambda n: DAY + timedelta(days=n))
codes = st.sampled_from(["EUR", "USD", "CHF", "XXX"])  # XXX: no rate anywhere
names = st.text(max_size=30)


@settings(deadline=None)  # the first example loads the ECB rate table (~0.3 s)
@given(
    receipts=st.lists(
        st.tuples(money_values, days, codes, names, names, st.none() | money_values), max_size=6
    ),
    bookings=st.lists(st.tuples(money_values, days, codes, names, names), max_size=4),
)
def test_any_input_gets_a_decision_with_the_real_rates(
    receipts: list[tuple[Any, ...]], bookings: list[tuple[Any, ...]]
) -> None:
    docs = [
        doc(
            f"d{i}",
            str(total),
            date=on,
            currency=code,
            merchant=name,
            invoice_number=number,
            tip=tip,
        )
        for i, (total, on, code, name, number, tip) in enumerate(receipts)
    ]
    txns = [
        txn(f"t{i}", str(amount), booking_date=on, currency=code, counterparty=name, reference=text)
        for i, (amount, on, code, name, text) in enumerate(bookings)
    ]
    decisions = match(txns, docs, RateBookRates(default_rate_book()))
    assert [d.transaction_id for d in decisions] == sorted(t.id for t in txns)
    for decision in decisions:
        assert len(decision.candidates) <= MatchSettings().top
        for candidate in decision.candidates:
            assert candidate.score == pytest.approx(sum(s.contribution for s in candidate.signals))
            assert all(signal.reason for signal in candidate.signals)
