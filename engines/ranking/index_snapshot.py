"""A search index as bytes: what a process writes to the store so that another (or itself,
restarted) loads the index in seconds instead of reading and tokenizing every document.

The format is a NumPy ``.npz`` archive (a zip of ``.npy`` arrays, read with
``allow_pickle=False``: a stored snapshot is data, it can never run code) holding:

* ``header``: UTF-8 JSON: the format version, the vectors' width and type, what the terms were
  derived with (field weights, ``MIN_FUZZY``), the ids, the terms, the concept codes, and the
  caller's own ``meta``;
* the index's arrays (``SearchIndex.to_arrays``): vectors, lengths, row states, concepts, and
  the postings as the index holds them in memory (``engines.ranking.postings``): CSR by term
  (``offsets``, ``rows`` int32, ``weights`` float32) and by row (``row_offsets``,
  ``row_terms`` int32), so that loading them is reading them;
* the caller's ``blobs`` (bytes, as uint8 arrays).

Vectors are stored as int8 when that is exact: the index holds ``dequantize``d int8 embeddings,
and ``quantize`` of such a unit row gives the same int8 row back (its peak is ±127), so 512 bytes
a document restore the very float32 row. A row that does not come back bit for bit (an embedding
stored some other way) makes the whole matrix go as float32.

``decode`` raises ``SnapshotError`` for anything it cannot trust: another version, another
derivation of the terms, a damaged archive (zip CRCs), arrays that disagree.
"""

from __future__ import annotations

import io
import json
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engines.ranking.embeddings import dequantize, quantize
from engines.ranking.lexical import DEFAULT_FIELD_WEIGHTS
from engines.ranking.postings import MIN_FUZZY, PostingsArrays
from engines.ranking.search_index import IndexArrays, SearchIndex

# Bump when the layout changes or when what the index derives from a document changes
# (tokenizer, vocabulary of concepts): an older snapshot is then ignored and rebuilt.
# 2: the postings gained their CSR by row, terms sorted (1 held the CSR by term only).
FORMAT = 2
_TYPES: dict[str, type[np.generic]] = {
    "lengths": np.float32,
    "archived": np.int8,
    "exported": np.bool_,
    "vanishing": np.bool_,
    "gone": np.bool_,
    "concepts": np.int32,
}
_POSTINGS: dict[str, type[np.generic]] = {
    "offsets": np.int64,
    "rows": np.int32,
    "weights": np.float32,
    "row_offsets": np.int64,
    "row_terms": np.int32,
}


# What a damaged archive raises while it is read.
_DAMAGED = (ValueError, KeyError, TypeError, OSError, EOFError, zipfile.BadZipFile, zlib.error)


class SnapshotError(ValueError):
    """A snapshot that cannot be used (the index is rebuilt instead)."""


@dataclass(frozen=True)
class Snapshot:
    """A decoded snapshot: the index, the caller's ``meta`` and ``blobs``."""

    index: SearchIndex
    meta: dict[str, Any]
    blobs: dict[str, bytes]


def derivation() -> dict[str, Any]:
    """What the stored terms depend on besides the code's version: a change makes old
    snapshots unusable."""
    return {"weights": dict(DEFAULT_FIELD_WEIGHTS), "minFuzzy": MIN_FUZZY}


def encode(
    index: SearchIndex | IndexArrays,
    meta: Mapping[str, Any] | None = None,
    blobs: Mapping[str, bytes] | None = None,
    *,
    compress: bool = False,
) -> bytes:
    """The snapshot of ``index`` (with the caller's JSON ``meta`` and ``blobs``) as bytes; or
    of its ``to_arrays``, taken while nothing changes it (the rest needs no lock)."""
    arrays = index.to_arrays() if isinstance(index, SearchIndex) else index
    vectors, kind = _compact(arrays.vectors)
    header = {
        "format": FORMAT,
        "dim": arrays.vectors.shape[1],
        "vectors": kind,
        "derivation": derivation(),
        "ids": arrays.ids,
        "terms": arrays.postings.terms,
        "codes": arrays.codes,
        "meta": dict(meta or {}),
        "blobs": sorted(blobs or {}),
    }
    payload: dict[str, npt.NDArray[Any]] = {
        "header": np.frombuffer(json.dumps(header).encode(), dtype=np.uint8),
        "vectors": vectors,
    }
    for name in _TYPES:
        payload[name] = getattr(arrays, name)
    for name in _POSTINGS:
        payload[name] = getattr(arrays.postings, name)
    for name, data in (blobs or {}).items():
        payload[f"blob_{name}"] = np.frombuffer(data, dtype=np.uint8)
    out = io.BytesIO()
    save = np.savez_compressed if compress else np.savez
    save(out, **payload)  # type: ignore[arg-type]
    return out.getvalue()


def decode(data: bytes, dim: int) -> Snapshot:
    """The snapshot ``encode`` made; ``SnapshotError`` when it cannot be trusted."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as archive:
            header = json.loads(bytes(archive["header"]).decode())
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                version = header.get("format") if isinstance(header, dict) else None
                raise SnapshotError(f"format {version!r}, not {FORMAT}")
            if header.get("dim") != dim:
                raise SnapshotError(f"vectors of {header.get('dim')!r} dimensions, not {dim}")
            if header.get("derivation") != derivation():
                raise SnapshotError("terms derived with other settings")
            vectors = archive["vectors"]
            kind = header.get("vectors")
            if kind == "int8" and vectors.dtype == np.int8:
                vectors = dequantize(vectors) if len(vectors) else vectors.astype(np.float32)
            elif not (kind == "float32" and vectors.dtype == np.float32):
                raise SnapshotError(f"vectors stored as {kind!r} ({vectors.dtype})")
            loaded = {name: _array(archive, name, kind) for name, kind in _TYPES.items()}
            postings = {name: _array(archive, name, kind) for name, kind in _POSTINGS.items()}
            blobs = {name: bytes(archive[f"blob_{name}"]) for name in header.get("blobs", [])}
        arrays = IndexArrays(
            ids=_strings(header, "ids"),
            codes=_strings(header, "codes"),
            vectors=vectors.reshape(-1, dim) if vectors.size == 0 else vectors,
            postings=PostingsArrays(terms=_strings(header, "terms"), **postings),
            **loaded,
        )
        index = SearchIndex.from_arrays(dim, arrays)
    except SnapshotError:
        raise
    except _DAMAGED as error:
        raise SnapshotError(f"damaged snapshot: {error}") from error
    meta = header.get("meta")
    return Snapshot(index, meta if isinstance(meta, dict) else {}, blobs)


def _array(archive: Any, name: str, kind: type[np.generic]) -> npt.NDArray[Any]:
    array: npt.NDArray[Any] = archive[name]
    if array.dtype != kind:
        raise SnapshotError(f"{name} is {array.dtype}, not {kind}")
    return array


def _strings(header: Mapping[str, Any], name: str) -> list[str]:
    values = header.get(name)
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise SnapshotError(f"{name} is not a list of strings")
    return values


def _compact(vectors: npt.NDArray[np.float32]) -> tuple[npt.NDArray[Any], str]:
    """int8 rows when they restore ``vectors`` exactly, else the float32 rows."""
    if not len(vectors):
        return vectors.astype(np.int8), "int8"
    rows = quantize(vectors)
    restored = dequantize(rows)
    zero = ~vectors.any(axis=1)
    restored[zero] = 0.0
    if np.array_equal(restored, vectors):
        return rows, "int8"
    return vectors, "float32"
