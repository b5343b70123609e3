"""Billing periods: calendar months (or years) from an anchor day, midnight to midnight UTC.

A subscription anchored on the 31st renews on the last day of shorter months and on the 31st
again when a month has one: each period start is computed from the anchor, never from the
previous period, so a short February does not pull every later renewal to the 28th. Periods are
half-open, ``[start, end)``.
"""

from __future__ import annotations

import calendar
from datetime import UTC, date, datetime, time
from fractions import Fraction


def add_months(day: date, months: int, anchor_day: int | None = None) -> date:
    """``day`` moved by ``months`` calendar months, on ``anchor_day`` (default: ``day``'s day)
    clamped to the month's length."""
    total = day.year * 12 + (day.month - 1) + months
    year, month = divmod(total, 12)
    last_day = calendar.monthrange(year, month + 1)[1]
    return date(year, month + 1, min(anchor_day or day.day, last_day))


def next_period_end(start: datetime, months: int, anchor_day: int) -> datetime:
    """End of the period that starts at ``start`` and lasts ``months``, renewing on the
    subscription's ``anchor_day`` (a plan of another interval keeps the same day)."""
    return midnight(add_months(start.date(), months, anchor_day))


def midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def period_bounds(anchor: date, months: int, index: int) -> tuple[datetime, datetime]:
    """Start and end of period number ``index`` (0 is the one starting on ``anchor``)."""
    return (
        midnight(add_months(anchor, index * months)),
        midnight(add_months(anchor, (index + 1) * months)),
    )


def period_index(anchor: date, months: int, at: datetime) -> int:
    """The number of the period that contains ``at`` (0 for any moment before the anchor)."""
    elapsed = (at.year - anchor.year) * 12 + at.month - anchor.month
    index = max(0, elapsed // months)
    while index > 0 and period_bounds(anchor, months, index)[0] > at:
        index -= 1
    while period_bounds(anchor, months, index)[1] <= at:
        index += 1
    return index


def share(start: datetime, end: datetime, period_start: datetime, period_end: datetime) -> Fraction:
    """The exact fraction of the period that ``[start, end)`` covers (microsecond resolution)."""
    whole = (period_end - period_start) // _MICROSECOND
    part = (min(end, period_end) - max(start, period_start)) // _MICROSECOND
    return Fraction(max(0, part), whole)


def round_half_up(value: Fraction) -> int:
    """Nearest integer, halves away from zero (the usual rule for money)."""
    sign = -1 if value < 0 else 1
    return sign * int((abs(value) + Fraction(1, 2)) // 1)


_MICROSECOND = datetime(2000, 1, 1, 0, 0, 0, 1) - datetime(2000, 1, 1)
