"""Every number the matcher decides with, in one place: the weights of the signals, the date
window, the conversion tolerance and the workspace's defaults (threshold and margin).

A signal's contribution is its weight times a strength in [-1, 1]; the score is their sum. With
the defaults a receipt whose amount, date, merchant and currency all agree scores 85 and clears
the threshold of 70; the amount and date alone (60) do not: a second agreeing signal (merchant,
card ending or the invoice number in the booking text) is needed before anything is matched
without a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

WEIGHTS: dict[str, float] = {
    "amount": 40.0,
    "reference": 30.0,  # the document's invoice number in the booking text
    "merchant": 25.0,
    "date": 15.0,
    "card": 10.0,  # the same card ending on the receipt and in the booking text
    "currency": 5.0,
}

# Card bookings lag the receipt by 0–5 days; a transfer pays an invoice days or weeks after
# its date; a booking rarely comes before the document (a pre-dated invoice, a hotel's
# pre-authorisation).
CARD_LAG_DAYS = 5
LATE_LAG_DAYS = 14
INVOICE_LAG_DAYS = 45
EARLY_DAYS = 2
# A booking that names the document's invoice number may pay it much later.
REFERENCE_LAG_DAYS = 180

# A booking in another currency than the receipt is compared with the receipt's total converted
# at the booking date's ECB rate; card schemes add their own rate and a fee, so 2.5% either way.
CONVERSION_TOLERANCE = Decimal("0.025")
# Within the tolerance, how close a converted amount comes says little (the card scheme's rate
# drifts from the ECB's by 1–2% either way), so every amount inside it counts the same.
CONVERTED_STRENGTH = 0.75
# A booking above a receipt's total by up to this share, on a receipt without a printed tip,
# may be the tip written on the slip: a weak amount signal. With every other signal agreeing it
# scores 67, under the default threshold: a guessed tip is never matched without a person.
TIP_ALLOWANCE = Decimal("0.25")
TIP_STRENGTH = 0.3
# Merchant names this similar (rapidfuzz WRatio, 0–100) count as the same merchant; below
# DIFFERENT they speak against the match.
SAME_MERCHANT = 90.0
SIMILAR_MERCHANT = 70.0
DIFFERENT_MERCHANT = 50.0
# Splits: at most this many receipts of one merchant add up to one booking.
SPLIT_MAX_PARTS = 3
# Receipts of the merchant in the window considered for a split, the smallest first (a busy
# café has dozens in a week; parts are looked up by amount, so a pool this size stays cheap).
SPLIT_MAX_POOL = 60


# What a workspace may set (matches.configure) is bounded in domain/transactions.py (the
# contract reads the bounds too): the threshold from above what the amount, date and currency
# alone score to every signal agreeing in full (tests/statements/test_matching_settings.py).


@dataclass(frozen=True)
class MatchSettings:
    """The workspace's choices: auto-match only when ``auto`` is on, at ``threshold`` or
    above, and only when no rival (another candidate for the transaction, or another
    transaction for the document) scores within ``margin`` of it; ``top`` candidates are kept
    for review."""

    auto: bool = True
    threshold: float = 70.0
    margin: float = 10.0
    top: int = 3
    currency: str = "EUR"  # the workspace's currency (documents' converted amounts are in it)
    # A candidate scoring below this is not shown at all.
    floor: float = 20.0
