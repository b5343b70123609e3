"""The fields a search index keeps of each document for the where-clause and name filters
(``persistence.documents.matching.FILTER_PATHS``), by column.

Why columns: one dict per document cost 0.74-1.17 kB (a dict and its entries for ~30 fields),
and loading a snapshot built 100k of them. Values repeat from document to document (currencies,
categories, merchants, places), so each field keeps its distinct values once and an int32 code
per row (-1: absent or null): 4 bytes a field a document, and a snapshot's codes are loaded as
one array. A filter is evaluated once per distinct combination of the values of the fields it
reads, among the candidates (``FilterColumns.select``), never more often than once per row.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import bson
import numpy as np
import numpy.typing as npt
from bson.binary import UuidRepresentation
from bson.codec_options import CodecOptions

from persistence.documents import FILTER_PATHS, predicate

# The top-level fields of the stored paths filters read (a nested path's whole parent).
FILTER_ROOTS = tuple(dict.fromkeys(path.split(".")[0] for path in FILTER_PATHS))
# The store's own decoding of BSON (persistence.client): the filter fields come back as reads do.
_CODEC: CodecOptions[dict[str, Any]] = CodecOptions(
    tz_aware=True, uuid_representation=UuidRepresentation.STANDARD
)
_LOGICAL = ("$and", "$or", "$nor")
# Combinations below this are numbered as one int64 (``FilterColumns.select``).
ONE_KEY = 2**62

Ints = npt.NDArray[np.int64]


class FilterColumns:
    """The ``FILTER_ROOTS`` of every row: per field, its distinct values and a code per row."""

    def __init__(self) -> None:
        self._codes = np.full((len(FILTER_ROOTS), 0), -1, dtype=np.int32)
        self._values: list[list[Any]] = [[] for _ in FILTER_ROOTS]
        # Per field, value key (``_key``) → code; built when first needed after a load.
        self._lookup: list[dict[Any, int] | None] = [{} for _ in FILTER_ROOTS]
        self._size = 0

    def __len__(self) -> int:
        return self._size

    @property
    def nbytes(self) -> int:
        """Bytes of the codes (the distinct values are Python objects, shared)."""
        return int(self._codes[:, : self._size].nbytes)

    def set(self, row: int, record: Mapping[str, Any]) -> None:
        """Keep the filter fields of a stored document (``record``) as row ``row`` (a row
        already kept, or the next one)."""
        if row >= self._codes.shape[1]:
            bigger = np.full((len(FILTER_ROOTS), int(row * 1.5) + 64), -1, dtype=np.int32)
            bigger[:, : self._codes.shape[1]] = self._codes
            self._codes = bigger
        self._size = max(self._size, row + 1)
        for line, root in enumerate(FILTER_ROOTS):
            value = record.get(root)
            self._codes[line, row] = -1 if value is None else self._code(line, _shared(value))

    def _code(self, line: int, value: Any) -> int:
        lookup = self._lookup[line]
        values = self._values[line]
        if lookup is None:
            lookup = self._lookup[line] = {_key(v): code for code, v in enumerate(values)}
        key = _key(value)
        code = lookup.get(key)
        if code is None:
            code = lookup[key] = len(values)
            values.append(value)
        return code

    def row(self, row: int) -> dict[str, Any]:
        """Row ``row``'s fields as ``filter_fields`` gives them."""
        codes = self._codes[:, row].tolist()
        return {
            root: self._values[line][code]
            for line, (root, code) in enumerate(zip(FILTER_ROOTS, codes, strict=True))
            if code >= 0
        }

    def rows(self) -> list[dict[str, Any]]:
        """Every row's fields (tests compare them)."""
        return [self.row(row) for row in range(self._size)]

    def select(self, rows: Ints, selector: Mapping[str, Any]) -> Ints:
        """Those of ``rows`` whose fields satisfy ``selector`` (a compiled filter; raises
        ``UnsupportedFilter`` for one only the database reads)."""
        test = predicate(selector)
        lines = sorted({FILTER_ROOTS.index(r) for r in _roots(selector) if r in FILTER_ROOTS})
        if not len(rows):
            return rows
        if not lines:  # it reads no kept field: every row is alike
            return rows if test({}) else rows[:0]
        codes = self._codes[np.asarray(lines)][:, rows]
        # Each row's combination as one integer (mixed radix: a field's codes + 1, absent 0),
        # found with a plain np.unique: the (fields, rows) form with axis=1 sorts records,
        # ~2-3 times slower at 10k candidates.
        key = np.zeros(len(rows), dtype=np.int64)
        span = 1
        for line, line_codes in zip(lines, codes, strict=True):
            radix = len(self._values[line]) + 1
            span *= radix
            if span >= ONE_KEY:  # too many combinations for one integer
                combinations, inverse = np.unique(codes, axis=1, return_inverse=True)
                break
            key = key * radix + (line_codes + 1)
        else:
            _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
            combinations = codes[:, first]
        passed = np.fromiter(
            (test(self._record(lines, combo)) for combo in combinations.T.tolist()),
            dtype=bool,
            count=combinations.shape[1],
        )
        return rows[passed[inverse.reshape(-1)]]

    def _record(self, lines: Sequence[int], codes: Sequence[int]) -> dict[str, Any]:
        return {
            FILTER_ROOTS[line]: self._values[line][code]
            for line, code in zip(lines, codes, strict=True)
            if code >= 0
        }

    def encode(self) -> tuple[bytes, bytes]:
        """The columns as a snapshot keeps them: each field's distinct values (BSON) and the
        codes (int32, a line per field)."""
        values = bson.encode(
            {"roots": list(FILTER_ROOTS), "values": self._values}, codec_options=_CODEC
        )
        return values, np.ascontiguousarray(self._codes[:, : self._size]).tobytes()

    @classmethod
    def decode(cls, values: bytes, codes: bytes, size: int) -> FilterColumns:
        """The columns ``encode`` made, of ``size`` rows (raises ``ValueError`` when they
        disagree)."""
        stored = bson.decode(values, codec_options=_CODEC)
        if stored.get("roots") != list(FILTER_ROOTS):
            raise ValueError("other filter fields")
        matrix = np.frombuffer(codes, dtype=np.int32).reshape(len(FILTER_ROOTS), size).copy()
        # Each value is in its column once, as ``set`` kept it (``_shared``: nulls inside
        # left out), so nothing is shared or cleaned again: that took most of a load's time.
        columns = stored["values"]
        if not isinstance(columns, list) or len(columns) != len(FILTER_ROOTS):
            raise ValueError("a filter field has no values")
        for root, column, line in zip(FILTER_ROOTS, columns, matrix, strict=True):
            if size and int(line.max()) >= len(column):
                raise ValueError(f"a code of {root} names no value")
        kept = cls()
        kept._codes, kept._values, kept._size = matrix, columns, size
        kept._lookup = [None for _ in FILTER_ROOTS]
        return kept


def _roots(selector: Mapping[str, Any]) -> set[str]:
    """The top-level fields a compiled filter reads (a path's first part)."""
    found: set[str] = set()
    for key, condition in selector.items():
        if key in _LOGICAL:
            for part in condition:
                found |= _roots(part)
        elif not key.startswith("$"):  # another operator: ``predicate`` refuses it
            found.add(key.split(".")[0])
    return found


def _key(value: Any) -> Any:
    """A dictionary key that tells values apart as the store does (True is not 1)."""
    if type(value) is str:
        return value  # the common case; a string equals nothing else
    if isinstance(value, dict | list):
        return (dict, bson.encode({"v": value}, codec_options=_CODEC))
    try:
        return (type(value), hash(value), value)
    except TypeError:
        return (dict, bson.encode({"v": value}, codec_options=_CODEC))


def filter_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an index keeps of a document for filters: its ``FILTER_ROOTS`` that are not null,
    strings interned (values repeat from document to document)."""
    return {name: _shared(row[name]) for name in FILTER_ROOTS if row.get(name) is not None}


def _shared(value: Any) -> Any:
    if isinstance(value, str):
        return sys.intern(value)
    if isinstance(value, dict):
        return {sys.intern(k): _shared(v) for k, v in value.items() if v is not None}
    return value
