"""What every statement format is read into: one statement, its lines, and the error that names
the place in the file where reading stopped.

Amounts are signed ``Decimal``s as the bank booked them: money leaving the account (a debit) is
negative, money coming in (a credit) positive. Dates are the bank's calendar dates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal


class StatementError(ValueError):
    """A file that is not a readable statement; ``place`` names the line (CSV, MT940, OFX 1.x)
    or the element (OFX 2.x, CAMT.053) where reading stopped."""

    def __init__(self, place: str, reason: str) -> None:
        super().__init__(f"{place}: {reason}" if place else reason)
        self.place = place
        self.reason = reason


@dataclass(frozen=True)
class Balance:
    """A balance the statement states, on a date."""

    amount: Decimal
    currency: str
    on: date | None


@dataclass(frozen=True)
class StatementLine:
    """One booked transaction as the file gives it.

    ``bank_id`` is the bank's own identifier of the booking (OFX FITID, CAMT AcctSvcrRef or
    EndToEndId, MT940's bank reference, a CSV column) when the file has one. ``place`` is where
    it was read (``line 12``, ``Ntry[3]/NtryDtls/TxDtls[2]``).
    """

    booking_date: date
    amount: Decimal
    currency: str
    place: str
    value_date: date | None = None
    counterparty: str | None = None
    reference: str | None = None
    account: str | None = None
    bank_id: str | None = None
    # A batch booking split into its parts (CAMT: one Ntry, several TxDtls): the entry's own
    # reference and total, so the parts can be traced back to the one line on the bank's paper.
    batch_ref: str | None = None
    batch_amount: Decimal | None = None


@dataclass
class ParsedStatement:
    """One file's statement: the account, the period, the balances and the lines, in file order."""

    format: str
    lines: list[StatementLine] = field(default_factory=list)
    account: str | None = None
    currency: str | None = None
    period_start: date | None = None
    period_end: date | None = None
    opening: Balance | None = None
    closing: Balance | None = None
    statement_id: str | None = None
    skipped: int = 0  # entries the file holds but that are not booked (pending, informational)
