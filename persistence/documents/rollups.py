"""Rollups: per-workspace counts and integer-cent sums of documents, kept for dashboards.

A rollup row holds, for one combination of a shape's dimensions, how many documents have those
values, the sums of their amounts and tax amounts (cents of ``currency``) and of their
``preferredCents``, and how many of them have each of the three (``amounts``, ``taxes``,
``converted``), so a sum over no value is told from a sum of zero and an average is exact.
Seven shapes are kept (``SHAPES``), each with currency and preferredCurrency:

- ``total``: nothing more (a handful of rows per workspace: document counts, totals per
  currency, the GraphQL graph's ``documentCount``);
- ``category``: the category, over all time (the web dashboard's opening chart);
- ``month-currency``: the month of ``docDate`` (spending per month);
- ``month-category``: the month × category (spending per category);
- ``month``: the month × category × docType;
- ``merchant-month``: the month × merchant × category (a merchant mostly has one category);
- ``day``: ``docDate`` itself × category (recent days, ranges that end inside a month).

The ``month-category`` rows are also kept packed: one record per month (``PACKED``) holding
that month's rows as ``cells`` (keyed by the row's id), which a read of whole months with no
other condition takes instead of the rows. The embedded store's cost is per record read, not
per byte: a year of month-category rows at 20k documents is 931 records and ~100 ms, the same
cells packed are 12 records and ~19 ms (load 4). A cell moves with ``$inc`` like a row, and is
unset (its record deleted) when it reaches zero, so the packed records are exactly what a
recount packs.

The documents repository applies every change of a document to the rows in the same call as
the document's own write: it reads the record as it was (``find_one_and_update`` returning the
old record) and moves the document from the old rows to the new ones with ``$inc``, which
commutes, so concurrent writers never lose an update. A row that reaches zero is removed (by
the writer that took its last document out, only while it is still at zero).

``documents.count`` reads the rows whenever its where clause and groupBy use only a shape's
dimensions (``fitting_shape``); a row carries its dimensions under the documents' own field
names, so the compiled where clause and the group keys apply to rows unchanged. ``docDate``
conditions fit the month shape only at month boundaries (``gte``/``lt`` the first of a month,
``gt``/``lte`` the last day of one), where every document of a month row answers alike.

A write that reaches the document but not its rows (the store failed in between) marks the
workspace stale: its counts are computed from the documents until ``rebuild`` recounts the
rows (``fincap admin rebuild-rollups``). Databases written before rollups existed are marked
stale once, when the indexes are ensured.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal, TypeGuard, cast

from motor.motor_asyncio import AsyncIOMotorCollection, AsyncIOMotorDatabase
from pymongo import ASCENDING, DeleteOne, IndexModel, UpdateOne
from pymongo.errors import BulkWriteError

from persistence.units import in_unit, joined
from persistence.where import AGGREGATE_TIME_LIMIT_MS

log = logging.getLogger(__name__)

Granularity = Literal["all", "month", "day"]
# Ordered bulk writes lost to a concurrent creation of the same row, before giving up.
UPSERT_ATTEMPTS = 3
# Rows per batch of a read (the store's reply limit is far above this many rows).
ROWS_BATCH = 20_000
DUPLICATE_KEY = 11000
# The marker of a database whose workspaces were checked for documents without rows of every
# shape in ``SHAPES`` (v2 added ``month-category``, v3 ``category``) or rows without every
# counter of ``_amounts`` (v4 added ``amounts``, ``taxes`` and ``taxCents``) or without packed
# month records (v5, ``PACKED``): a workspace with
# documents and no marker's check is stale until it is rebuilt.
MIGRATED_ID = "rollups-v5"
# A counter every row has since v4: a row without it was written by an older release.
NEWEST_COUNTER = "taxCents"


@dataclass(frozen=True)
class RollupShape:
    """One kind of rollup row: its time granularity and the fields it keeps apart."""

    name: str
    granularity: Granularity
    dimensions: tuple[str, ...]
    # documents.count groupBy values the shape answers.
    groupings: frozenset[str]

    def bucket(self, doc_date: datetime | None) -> datetime | None:
        if self.granularity == "all":
            return None
        if doc_date is None or self.granularity == "day":
            return doc_date
        return doc_date.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


# Smallest first: a query is answered by the first shape that fits it. Dimensions were chosen
# by rows per document on demo data (5,000 documents: 12 total rows, about 150 month-currency
# rows); a field that varies per document (payment method) would multiply every shape.
SHAPES = (
    RollupShape("total", "all", ("currency", "preferredCurrency"), frozenset({"currency"})),
    # Spending per category over all time, the web dashboard's opening chart: about as many
    # rows as categories × currencies, where the month shapes hold that many per month.
    RollupShape(
        "category",
        "all",
        ("category", "currency", "preferredCurrency"),
        frozenset({"category", "currency"}),
    ),
    RollupShape(
        "month-currency",
        "month",
        ("currency", "preferredCurrency"),
        frozenset({"currency", "month", "year"}),
    ),
    # Spending per category by month without docType: a third of the "month" rows on demo
    # data, which the last-90-days-by-category dashboard call reads for its whole months.
    RollupShape(
        "month-category",
        "month",
        ("category", "currency", "preferredCurrency"),
        frozenset({"category", "currency", "month", "year"}),
    ),
    RollupShape(
        "month",
        "month",
        ("category", "currency", "docType", "preferredCurrency"),
        frozenset({"category", "currency", "docType", "month", "year"}),
    ),
    RollupShape(
        "merchant-month",
        "month",
        ("merchant", "category", "currency", "preferredCurrency"),
        frozenset({"merchant", "category", "currency", "month", "year"}),
    ),
    RollupShape(
        "day",
        "day",
        ("category", "currency", "preferredCurrency"),
        frozenset({"category", "currency", "day", "date", "week", "month", "year"}),
    ),
)
# The shape whose rows are also kept packed a month to a record, and the packed records' shape.
PACKED_ROWS = "month-category"
PACKED = "month-category-packed"
# The fields of a row a packed cell keeps (the record holds the rest: workspace, archived,
# docDate).
CELL_DIMENSIONS = ("category", "currency", "preferredCurrency")

# The fields whose change moves a document between rows.
ROLLUP_FIELDS = frozenset(
    {"archived", "docDate", "amount", "taxAmount", "preferredCents"}
    | {name for shape in SHAPES for name in shape.dimensions}
)

INDEXES = [
    IndexModel(
        [
            ("workspaceId", ASCENDING),
            ("shape", ASCENDING),
            ("archived", ASCENDING),
            # Last, so a date range is an exact index bound on the embedded store too.
            ("docDate", ASCENDING),
        ],
        name="workspace_shape_archived_date",
    )
]


def _naive(moment: datetime) -> datetime:
    """Stored dates come back naive (UTC); the where compiler's are aware."""
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def _row(shape: RollupShape, workspace_id: str, record: Mapping[str, Any]) -> dict[str, Any]:
    """The dimensions of the row of ``shape`` that ``record`` (a stored document) counts in."""
    doc_date = record.get("docDate")
    row: dict[str, Any] = {
        "workspaceId": workspace_id,
        "shape": shape.name,
        "archived": bool(record.get("archived")),
        "docDate": shape.bucket(_naive(doc_date) if isinstance(doc_date, datetime) else None),
    }
    for name in shape.dimensions:
        row[name] = record.get(name)
    return row


def _row_id(row: Mapping[str, Any]) -> str:
    key = json.dumps(list(row.values()), default=str, separators=(",", ":"))
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _cents(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _amounts(record: Mapping[str, Any], sign: int) -> dict[str, int]:
    amount, tax = record.get("amount"), record.get("taxAmount")
    preferred = record.get("preferredCents")
    return {
        "count": sign,
        "cents": sign * amount if _cents(amount) else 0,
        "amounts": sign if _cents(amount) else 0,
        "taxCents": sign * tax if _cents(tax) else 0,
        "taxes": sign if _cents(tax) else 0,
        "preferredCents": sign * preferred if _cents(preferred) else 0,
        "converted": sign if _cents(preferred) else 0,
    }


@dataclass
class _Delta:
    row: dict[str, Any]
    amounts: dict[str, int]


def deltas(
    workspace_id: str,
    removed: Iterable[Mapping[str, Any]] = (),
    added: Iterable[Mapping[str, Any]] = (),
) -> dict[str, _Delta]:
    """Row id → what changes in it when ``removed`` records leave and ``added`` ones arrive
    (rows that end up unchanged are left out)."""
    changes: dict[str, _Delta] = {}
    for sign, records in ((-1, removed), (1, added)):
        for record in records:
            amounts = _amounts(record, sign)
            for shape in SHAPES:
                row = _row(shape, workspace_id, record)
                row_id = _row_id(row)
                delta = changes.setdefault(row_id, _Delta(row, dict.fromkeys(amounts, 0)))
                for name, value in amounts.items():
                    delta.amounts[name] += value
    return {row_id: d for row_id, d in changes.items() if any(d.amounts.values())}


def _packed_id(row: Mapping[str, Any]) -> str:
    """The id of the packed record that keeps ``row`` (a ``PACKED_ROWS`` row) as a cell."""
    return _row_id(_packed_record(row))


def _packed_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of the packed record of ``row``'s month (its cells apart)."""
    return {
        "workspaceId": row["workspaceId"],
        "shape": PACKED,
        "archived": row["archived"],
        "docDate": row["docDate"],
    }


def _packed_writes(changes: Mapping[str, _Delta]) -> tuple[list[UpdateOne], list[Any]]:
    """The writes that move the packed cells as ``changes`` moves the rows: the increments
    (a cell created with its dimensions where missing), then, for each cell a document left,
    its removal while it is at zero and the removal of its record while that has no cell."""
    moved: list[UpdateOne] = []
    emptied: list[UpdateOne] = []
    empty_records: dict[str, DeleteOne] = {}
    for row_id, d in changes.items():
        if d.row["shape"] != PACKED_ROWS:
            continue
        packed_id = _packed_id(d.row)
        cell = f"cells.{row_id}"
        moved.append(
            UpdateOne(
                {"_id": packed_id},
                {
                    "$inc": {f"{cell}.{name}": value for name, value in d.amounts.items()},
                    # The same values every time: a cell created again gets them back.
                    "$set": {f"{cell}.{name}": d.row[name] for name in CELL_DIMENSIONS},
                    "$setOnInsert": _packed_record(d.row),
                },
                upsert=True,
            )
        )
        if d.amounts["count"] < 0:
            emptied.append(
                UpdateOne({"_id": packed_id, f"{cell}.count": {"$lte": 0}}, {"$unset": {cell: ""}})
            )
            empty_records[packed_id] = DeleteOne({"_id": packed_id, "cells": {}})
    return moved, [*emptied, *empty_records.values()]


def _cell(row: Mapping[str, Any], amounts: Mapping[str, int]) -> dict[str, Any]:
    return {**{name: row[name] for name in CELL_DIMENSIONS}, **amounts}


def _unpacked(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows packed records hold (dimensions, counters, docDate and archived: what a fold
    of rows reads)."""
    return [
        {**cell, "docDate": record["docDate"], "archived": record["archived"]}
        for record in records
        for cell in record.get("cells", {}).values()
    ]


def _only_dates(condition: Mapping[str, Any], dates: Mapping[str, Any]) -> bool:
    """Whether ``condition`` asks nothing of a row but the ``dates`` bounds (so a whole month
    record answers as its rows would)."""
    if not condition:
        return True
    split = _date_parts(condition)
    return split is not None and not split[1] and split[0] == dict(dates)


def _aligned_to_month(operator: str, value: Any) -> bool:
    """Whether a ``docDate`` condition answers alike for every date of any month."""
    if value is None:  # exists: false
        return True
    if not isinstance(value, datetime):
        return False
    moment = _naive(value)
    if moment != moment.replace(hour=0, minute=0, second=0, microsecond=0):
        return False
    if operator in ("$gte", "$lt"):
        return moment.day == 1
    if operator in ("$gt", "$lte"):
        return (moment + timedelta(days=1)).day == 1  # stored dates are midnights
    return False


def _fits(shape: RollupShape, condition: Any) -> bool:
    """Whether a compiled filter uses only the shape's dimensions (and aligned dates)."""
    if not isinstance(condition, Mapping):
        return False
    for key, value in condition.items():
        if key in ("$and", "$or"):
            if not all(_fits(shape, part) for part in value):
                return False
        elif key == "docDate":
            if shape.granularity == "all":
                return False
            if shape.granularity == "day":
                continue  # day rows carry the documents' own dates
            if isinstance(value, Mapping) and value:
                if not all(
                    (op == "$ne" and bound is None) or _aligned_to_month(op, bound)
                    for op, bound in value.items()
                ):
                    return False
            elif not _aligned_to_month("$eq", value):
                return False
        elif key not in shape.dimensions:
            return False
    return True


Grouping = str | Collection[str] | None


def _keys(group_by: Grouping) -> frozenset[str]:
    """The group keys asked for: one (documents.count's groupBy), several (documentsAggregate's)
    or none."""
    if group_by is None:
        return frozenset()
    return frozenset({group_by} if isinstance(group_by, str) else group_by)


def fitting_shape(caller: Mapping[str, Any], group_by: Grouping) -> RollupShape | None:
    """The first shape whose rows answer the compiled filter ``caller`` grouped by
    ``group_by`` (one key or several) exactly; None when only the documents can."""
    keys = _keys(group_by)
    for shape in SHAPES:
        if keys <= shape.groupings and _fits(shape, caller):
            return shape
    return None


def date_bounds(caller: Mapping[str, Any]) -> dict[str, Any]:
    """The ``docDate`` ranges every row must satisfy, taken from the filter's top level (so
    the first ``$match`` can bound the index scan); ``{}`` when there are none."""
    parts = caller.get("$and") if set(caller) == {"$and"} else [caller]
    bounds: dict[str, Any] = {}
    for part in parts or []:
        value = part.get("docDate") if isinstance(part, Mapping) else None
        if isinstance(value, Mapping) and set(value) <= {"$gt", "$gte", "$lt", "$lte"}:
            for op, bound in value.items():
                # The tighter of two bounds of one direction.
                lower = op in ("$gt", "$gte")
                if op not in bounds or (bound > bounds[op] if lower else bound < bounds[op]):
                    bounds[op] = bound
    return {"docDate": bounds} if bounds else {}


@dataclass(frozen=True)
class RowRead:
    """One read of rollup rows: the shape, and the ``docDate`` bounds of its first ``$match``;
    then ``others`` applies to every row (None: the caller's whole filter). A ``sign`` of -1
    subtracts the rows' counts and sums from the answer (a month's rows less its first days)."""

    shape: RollupShape
    dates: Mapping[str, Any]
    others: Mapping[str, Any] | None = None
    sign: int = 1


def _month_start(moment: datetime) -> datetime:
    return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def _next_month(moment: datetime) -> datetime:
    start = _month_start(moment)
    return (
        start.replace(year=start.year + 1, month=1)
        if start.month == 12
        else start.replace(month=start.month + 1)
    )


def _date_parts(caller: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The caller's top-level ``docDate`` range and the rest of it; None when ``docDate`` is
    used any other way (inside ``$or``, with equality, ``$ne``…)."""
    parts = list(caller["$and"]) if set(caller) == {"$and"} else [caller]
    rest: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, Mapping):
            return None
        kept = {key: value for key, value in part.items() if key != "docDate"}
        value = part.get("docDate")
        if value is not None and not (
            isinstance(value, Mapping)
            and value
            and set(value) <= {"$gt", "$gte", "$lt", "$lte"}
            and all(isinstance(bound, datetime) for bound in value.values())
        ):
            return None
        if any(_mentions_date(v) for v in kept.values()):
            return None
        if kept:
            rest.append(kept)
    others = rest[0] if len(rest) == 1 else ({"$and": rest} if rest else {})
    return date_bounds(caller).get("docDate", {}), others


def _mentions_date(value: Any) -> bool:
    if isinstance(value, Mapping):
        return "docDate" in value or any(_mentions_date(v) for v in value.values())
    if isinstance(value, list):
        return any(_mentions_date(v) for v in value)
    return False


def row_reads(caller: Mapping[str, Any], group_by: Grouping) -> list[RowRead] | None:
    """The reads of rollup rows that answer the compiled filter ``caller`` grouped by
    ``group_by``; None when only the documents can.

    A date range that starts or ends inside a month fits only the day rows, which a long
    range (the last 90 days) makes many: then the whole months inside it are read from month
    rows, and each month it cuts from the day rows of the days it takes, or, when those are
    more than the days it leaves, as the month's rows less the day rows of the days it leaves
    (so an edge costs at most half a month of day rows). Stored dates are midnights, so a day
    row answers a bound on its date exactly.
    """
    shape = fitting_shape(caller, group_by)
    if shape is None:
        return None
    whole = [RowRead(shape, date_bounds(caller).get("docDate", {}))]
    if shape.granularity != "day" or (split := _date_parts(caller)) is None:
        return whole
    bounds, others = split
    months = next(
        (
            candidate
            for candidate in SHAPES
            if candidate.granularity == "month"
            and _keys(group_by) <= candidate.groupings
            and _fits(candidate, others)
        ),
        None,
    )
    if months is None or not bounds:
        return whole
    # The range as days: the first it takes, and the first after it that it leaves out.
    lows = [first_day(op, _naive(bounds[op])) for op in ("$gt", "$gte") if op in bounds]
    highs = [first_day(op, _naive(bounds[op])) for op in ("$lt", "$lte") if op in bounds]
    low, high = max(lows, default=None), min(highs, default=None)
    if (
        low is not None
        and high is not None
        and (low >= high or _month_start(low) == _month_start(high - _DAY))
    ):
        return whole  # inside one month (or empty): a few day rows
    reads: list[RowRead] = []
    inner: dict[str, Any] = {}
    if low is not None:
        first = _month_start(low)
        if first == low:
            inner["$gte"] = low
        else:
            after = _next_month(low)
            inner["$gte"] = after
            reads += _edge(shape, months, others, first, low, after, taken_first=False)
    if high is not None:
        last = _month_start(high)
        if last == high:
            inner["$lt"] = high
        else:
            inner["$lt"] = last
            reads += _edge(shape, months, others, last, high, _next_month(high), taken_first=True)
    if _nonempty_range(inner):
        reads.append(RowRead(months, inner, others))
    return reads


_DAY = timedelta(days=1)


def first_day(op: str, moment: datetime) -> datetime:
    """The first midnight a ``docDate`` bound takes (``$gt``/``$gte``) or leaves out after
    the range (``$lt``/``$lte``): stored dates are midnights."""
    day = moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if op == "$gte" or op == "$lt":
        return day if day == moment else day + _DAY
    return day + _DAY


def _edge(
    days: RollupShape,
    months: RollupShape,
    others: Mapping[str, Any],
    start: datetime,
    cut: datetime,
    end: datetime,
    *,
    taken_first: bool,
) -> list[RowRead]:
    """The reads for the month [``start``, ``end``) of which the range takes the days before
    ``cut`` (``taken_first``) or the days from it on: those days' rows, or the month's rows
    less the other days' rows, whichever reads fewer day rows."""
    before, after = {"$gte": start, "$lt": cut}, {"$gte": cut, "$lt": end}
    taken, left = (before, after) if taken_first else (after, before)
    before_is_smaller = (cut - start).days * 2 <= (end - start).days
    if before_is_smaller == taken_first:
        return [RowRead(days, taken, others)]
    return [
        RowRead(months, {"$gte": start, "$lt": end}, others),
        RowRead(days, left, others, sign=-1),
    ]


def _nonempty_range(bounds: Mapping[str, datetime]) -> bool:
    return "$gte" not in bounds or "$lt" not in bounds or bounds["$gte"] < bounds["$lt"]


class Recount:
    """A workspace's rows and packed records added up from its documents, as ``rebuild``
    writes them (and the benches' bulk loads)."""

    def __init__(self, workspace_id: str) -> None:
        self.workspace_id = workspace_id
        self._rows: dict[str, _Delta] = {}

    @property
    def rows(self) -> int:
        return len(self._rows)

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        for row_id, delta in deltas(self.workspace_id, added=records).items():
            kept = self._rows.setdefault(row_id, _Delta(delta.row, dict.fromkeys(delta.amounts, 0)))
            for name, value in delta.amounts.items():
                kept.amounts[name] += value

    def records(self) -> list[dict[str, Any]]:
        """The rows, then the packed records, as stored."""
        documents = [{"_id": row_id, **d.row, **d.amounts} for row_id, d in self._rows.items()]
        packed: dict[str, dict[str, Any]] = {}
        for row_id, d in self._rows.items():
            if d.row["shape"] == PACKED_ROWS:
                record = packed.setdefault(
                    _packed_id(d.row), {**_packed_record(d.row), "cells": {}}
                )
                record["cells"][row_id] = _cell(d.row, d.amounts)
        return documents + [{"_id": packed_id, **record} for packed_id, record in packed.items()]


class DocumentRollups:
    """The ``document_rollups`` collection and the per-workspace staleness markers; used
    through the documents repository."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        # Joined: a new document's rows move in the unit that inserts it.
        self._col: AsyncIOMotorCollection = joined(db["document_rollups"])
        self._state: AsyncIOMotorCollection = joined(db["document_rollup_state"])
        self._documents: AsyncIOMotorCollection = db["documents"]

    @property
    def collection(self) -> AsyncIOMotorCollection:
        return self._col

    async def ensure_indexes(self) -> None:
        await self._col.create_indexes(INDEXES)
        if await self._state.find_one({"_id": MIGRATED_ID}) is None:
            # Documents written before rollups existed have no rows: count them the slow way
            # until their workspace is rebuilt.
            # Every document counts in a row of every shape, so a workspace with documents
            # lacks no shape's rows unless they were written before that shape existed.
            existing = await self._documents.distinct("workspaceId")
            rowed: set[str] | None = None
            for shape in (*(shape.name for shape in SHAPES), PACKED):
                having = set(await self._col.distinct("workspaceId", {"shape": shape}))
                rowed = having if rowed is None else rowed & having
            # Rows of an older release lack the newer counters (an ``$inc`` would start them
            # at the change, not at the row's documents).
            older = set(
                await self._col.distinct(
                    "workspaceId", {"shape": {"$ne": PACKED}, NEWEST_COUNTER: {"$exists": False}}
                )
            )
            for workspace_id in existing:
                if workspace_id not in (rowed or set()) or workspace_id in older:
                    await self.mark_stale(workspace_id, "documents from before these rollups")
                    log.warning(
                        "workspace %s counts from its documents until "
                        "`fincap admin rebuild-rollups` recounts its rollups",
                        workspace_id,
                    )
            await self._state.update_one(
                {"_id": MIGRATED_ID}, {"$set": {"at": datetime.now(UTC)}}, upsert=True
            )

    async def is_current(self, workspace_id: str) -> bool:
        return await self._state.find_one({"_id": f"stale:{workspace_id}"}, {"_id": 1}) is None

    async def mark_stale(self, workspace_id: str, reason: str) -> None:
        await self._state.update_one(
            {"_id": f"stale:{workspace_id}"},
            {"$set": {"workspaceId": workspace_id, "reason": reason, "at": datetime.now(UTC)}},
            upsert=True,
        )

    async def apply(
        self,
        workspace_id: str,
        removed: Iterable[Mapping[str, Any]] = (),
        added: Iterable[Mapping[str, Any]] = (),
    ) -> None:
        """Move documents between rows: ``removed`` records as they were, ``added`` as they
        are now. On a failure the workspace is marked stale and the error is logged, not
        raised: the documents are written, only the shortcut is lost."""
        changes = deltas(workspace_id, removed, added)
        increments = [
            UpdateOne({"_id": row_id}, {"$inc": d.amounts, "$setOnInsert": d.row}, upsert=True)
            for row_id, d in changes.items()
        ]
        # A row empties only when a document leaves it. The bulk is ordered, so these run
        # after every ``$inc`` (all updates, then all deletes: two commands) and remove a row
        # (a packed cell, a packed record) only while it is still empty.
        emptied = [
            DeleteOne({"_id": row_id, "count": {"$lte": 0}})
            for row_id, d in changes.items()
            if d.amounts["count"] < 0
        ]
        packed, packed_emptied = _packed_writes(changes)
        try:
            await self._write([*increments, *packed, *packed_emptied, *emptied])
        except Exception:
            if in_unit():
                raise  # the unit fails whole: its document is not written either
            log.exception("rollup update failed; workspace %s counts from documents", workspace_id)
            await self.mark_stale(workspace_id, "a rollup update failed")

    async def _write(self, operations: list[UpdateOne | DeleteOne]) -> None:
        """One ordered bulk write of ``operations`` (a processed document moves through ten
        rows in two commands). Not ``find_one_and_update`` per row: the embedded store re-checks a
        findAndModify's write under a top-level ``$and`` and so scans the whole collection for
        each (134 ms at 10k rows). Two writers that create one row at once: the loser's bulk
        stops at its upsert, which is run again with the rest (the row exists now)."""
        for _ in range(UPSERT_ATTEMPTS):
            if not operations:
                return
            try:
                await self._col.bulk_write(operations, ordered=True)
                return
            except BulkWriteError as exc:
                errors = exc.details.get("writeErrors") or []
                if not errors or any(e.get("code") != DUPLICATE_KEY for e in errors):
                    raise
                operations = operations[errors[0]["index"] :]
        raise RuntimeError("rollup rows kept being created concurrently")

    async def rebuild(self, workspace_id: str) -> int:
        """Recount the workspace's rows (and packed records) from its documents and clear its
        stale marker; the number of rows. Run it while nothing writes to the workspace."""
        await self._col.delete_many({"workspaceId": workspace_id})
        cursor = self._documents.find(
            {"workspaceId": workspace_id}, {name: 1 for name in ROLLUP_FIELDS}
        )
        recount = Recount(workspace_id)
        async for record in cursor:
            recount.add([record])
        documents = recount.records()
        for start in range(0, len(documents), 1000):
            await self._col.insert_many(documents[start : start + 1000], ordered=False)
        await self._state.delete_one({"_id": f"stale:{workspace_id}"})
        return recount.rows

    async def read(
        self,
        workspace_id: str,
        archived: Mapping[str, Any],
        read: RowRead,
        caller: Mapping[str, Any],
        hint: Mapping[str, str] | None = None,
    ) -> list[dict[str, Any]]:
        """The rows of one read (``hint``: the aggregate's ``hint`` option, when the store
        bounds a hinted read, ``persistence.plans``): the workspace, shape, archive filter
        (``archived``, a documents' filter) and date bounds first (index bounds of
        ``workspace_shape_archived_date``), then the read's own filter (else the caller's);
        ``month-category`` rows of whole months with no other filter from their packed records.
        Whole rows: they are small, and the embedded store's ``$project`` cost as much per row
        as reading it (the day rows of 90 days: 299 ms with it, 148 without, at 20k
        documents)."""
        first: dict[str, Any] = {
            "workspaceId": workspace_id,
            "shape": read.shape.name,
            **archived,
            **({"docDate": dict(read.dates)} if read.dates else {}),
        }
        then = caller if read.others is None else read.others
        packed = read.shape.name == PACKED_ROWS and _only_dates(then, read.dates)
        if packed:  # whole months and nothing else asked: a record a month, not ~80 rows
            first["shape"] = PACKED
        pipeline: list[dict[str, Any]] = [
            {"$match": first},
            *([{"$match": then}] if then and not packed else []),
        ]
        # In one batch: a read of a few thousand rows pays no getMore round trips.
        found = self._col.aggregate(
            pipeline, maxTimeMS=AGGREGATE_TIME_LIMIT_MS, batchSize=ROWS_BATCH, **(hint or {})
        )
        records = cast(list[dict[str, Any]], await found.to_list(None))
        return _unpacked(records) if packed else records

    async def tallies(self, workspace_id: str) -> dict[str, int] | None:
        """Active and archived document counts from the ``total`` rows; None when the
        workspace is stale (count its documents instead)."""
        current, rows = await asyncio.gather(
            self.is_current(workspace_id),
            self._col.find({"workspaceId": workspace_id, "shape": "total"}).to_list(None),
        )
        if not current:
            return None
        tally = {"active": 0, "archived": 0}
        for row in rows:
            tally["archived" if row["archived"] else "active"] += int(row["count"])
        return tally

    async def month_counts(
        self, workspace_id: str, archived: bool, since: datetime | None = None
    ) -> dict[datetime, int]:
        """Documents of the workspace per month of ``docDate`` (the first of the month, naive
        UTC; undated ones left out), archived or active, from the ``month-currency`` rows (of
        the months from ``since``'s on): a few rows per month, one indexed read. An estimate
        where the workspace is stale."""
        match: dict[str, Any] = {
            "workspaceId": workspace_id,
            "shape": "month-currency",
            "archived": archived,
        }
        if since is not None:
            match["docDate"] = {"$gte": _naive(since).replace(day=1, hour=0, minute=0)}
        rows = await self._col.find(
            match, {"docDate": 1, "count": 1, "_id": 0}, batch_size=10_000
        ).to_list(None)
        months: dict[datetime, int] = {}
        for row in rows:
            month = row.get("docDate")
            if isinstance(month, datetime):
                months[_naive(month)] = months.get(_naive(month), 0) + int(row.get("count", 0))
        return months

    async def stale_workspaces(self) -> list[str]:
        rows = await self._state.find({"workspaceId": {"$exists": True}}).to_list(None)
        return [row["workspaceId"] for row in rows]
