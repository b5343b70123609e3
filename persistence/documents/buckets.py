"""Time series without holes: every bucket (day, ISO week, month, year) of a range, for
``documents.count``'s ``fillGaps``; the empty ones count 0.

The range is the filter's top-level ``docDate`` bounds; a side it leaves open is the first or
last bucket that has documents. Bucket keys are the ones the count's groups carry (the
``$dateToString`` formats of ``TIME_FORMATS``), which sort as text in time order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from persistence.documents.query import TIME_FORMATS
from persistence.documents.rollups import date_bounds, first_day

# How many buckets one answer may hold: a daily series of a year and a month, a weekly one of
# almost eight years, a monthly one of 33. Beyond it a chart is unreadable and the answer big.
MAX_BUCKETS = 400
# The unit of each time grouping (date is day's older name).
_UNITS = {"day": "day", "date": "day", "week": "week", "month": "month", "year": "year"}


class TooManyBuckets(ValueError):
    """The range holds more buckets than an answer may (``count`` of them; None: more than
    the groups an answer lists)."""

    def __init__(self, group_by: str, count: int | None, limit: int) -> None:
        unit = _UNITS[group_by]
        self.unit, self.count, self.limit = unit, count, limit
        many = f"{count} {unit}s" if count is not None else f"more than {limit} {unit}s"
        super().__init__(f"the range holds {many}, more than {limit}")


def fillable(group_by: str | None) -> bool:
    """Whether ``group_by`` is a time grouping whose buckets can be listed."""
    return group_by in _UNITS


@dataclass(frozen=True)
class Range:
    """The first and last day a series covers (None: the data's first or last bucket)."""

    first: date | None
    last: date | None


def range_of(caller: Mapping[str, Any]) -> Range:
    """The days a compiled filter's top-level ``docDate`` bounds keep (stored dates are
    midnights UTC, so ``gt`` a day starts the next day and ``lt`` a day ends the one before)."""
    bounds = date_bounds(caller).get("docDate", {})
    first = last = None
    for op, moment in bounds.items():
        if not isinstance(moment, datetime):
            continue
        if moment.tzinfo is not None:
            moment = moment.astimezone(UTC).replace(tzinfo=None)
        day = first_day(op, moment)
        if op in ("$gt", "$gte"):
            first = day.date()
        else:
            last = (day - timedelta(days=1)).date()
    return Range(first, last)


def _start(unit: str, day: date) -> date:
    """The first day of the bucket ``day`` falls in."""
    if unit == "week":
        return day - timedelta(days=day.weekday())  # ISO weeks start on Monday
    if unit == "month":
        return day.replace(day=1)
    if unit == "year":
        return day.replace(month=1, day=1)
    return day


def _next(unit: str, start: date) -> date:
    if unit == "day":
        return start + timedelta(days=1)
    if unit == "week":
        return start + timedelta(days=7)
    if unit == "month":
        return date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return date(start.year + 1, 1, 1)


def bucket_count(group_by: str, first: date, last: date) -> int:
    """How many buckets [``first``, ``last``] touches (0 when ``last`` comes before)."""
    unit = _UNITS[group_by]
    if last < first:
        return 0
    if unit == "day":
        return (last - first).days + 1
    if unit == "week":
        return (_start("week", last) - _start("week", first)).days // 7 + 1
    if unit == "month":
        return (last.year - first.year) * 12 + last.month - first.month + 1
    return last.year - first.year + 1


def bucket_keys(group_by: str, first: date, last: date) -> Iterator[str]:
    """The keys of every bucket [``first``, ``last``] touches, in time order."""
    unit, form = _UNITS[group_by], TIME_FORMATS[group_by]
    start = _start(unit, first)
    while start <= last:
        yield start.strftime(form)
        start = _next(unit, start)


def key_day(group_by: str, key: str) -> date:
    """The first day of the bucket a group key names."""
    unit = _UNITS[group_by]
    if unit == "week":
        year, week = key.split("-W")
        return date.fromisocalendar(int(year), int(week), 1)
    return datetime.strptime(key, TIME_FORMATS[group_by]).date()


def check(group_by: str, first: date, last: date, limit: int) -> None:
    """``TooManyBuckets`` when [``first``, ``last``] holds more than ``limit`` buckets."""
    count = bucket_count(group_by, first, last)
    if count > limit:
        raise TooManyBuckets(group_by, count, limit)
