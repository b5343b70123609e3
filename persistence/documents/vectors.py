"""A document's embedding as stored: the text it is made from, and its compact BSON form.

The embedding is a storage-only field (``embedding``) next to ``embeddingModel``, the id of the
model that made it (``fincap admin reindex`` redoes documents of another model). It is stored as
a BSON vector (binary subtype 9) of int8: 512 bytes plus a small header for this model, where a
list of doubles would take ~4.6 kB. Cosine similarity ignores a vector's length, so the int8
row needs no scale; MongoDB's vector search indexes this layout as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from bson.binary import Binary, BinaryVectorDtype

from engines.ranking.embeddings import quantize

# Fields whose text makes the embedding (API names; ``lineItems`` by their descriptions).
EMBEDDED_FIELDS = ("merchant", "summary", "category", "lineItems", "expenseLocation")
# The stored fields an embedding is computed from (for projections).
EMBEDDED_PATHS = ("merchant", "summary", "category", "lineItems.description", "expenseLocation")
MODEL_ID = "use-multilingual-3-q8"

# Texts → float32 unit rows, one per text (the model, run off the event loop).
Vectorize = Callable[[Sequence[str]], Awaitable[npt.NDArray[np.float32]]]


def changes_embedding(names: Iterable[str]) -> bool:
    """Whether changing the fields ``names`` changes the embedded text."""
    return bool(set(names) & set(EMBEDDED_FIELDS))


def embedding_text(fields: Mapping[str, Any]) -> str:
    """The text a document's embedding is made from: merchant, category, summary, line item
    descriptions and the place (city, region, country), one sentence each."""
    parts: list[str] = []
    for name in ("merchant", "category", "summary"):
        value = fields.get(name)
        if isinstance(value, str) and value.strip():
            parts.append(value.strip())
    lines = [
        item.get("description") or ""
        for item in fields.get("lineItems") or []
        if isinstance(item, Mapping)
    ]
    lines = [line.strip() for line in lines if line.strip()]
    if lines:
        parts.append(", ".join(lines))
    location = fields.get("expenseLocation")
    primary = location.get("primary") if isinstance(location, Mapping) else None
    if isinstance(primary, Mapping):
        place = [
            primary.get(key)
            for key in ("city", "stateOrProvince", "country")
            if isinstance(primary.get(key), str) and primary.get(key)
        ]
        if place:
            parts.append(", ".join(str(p) for p in place))
    return ". ".join(parts)


# A BSON vector is a dtype byte, a padding byte, then the elements (``Binary.from_vector``);
# the bytes are built and read directly because a list of 512 Python ints per document costs
# seconds when a workspace's index loads.
_INT8_HEADER = bytes([BinaryVectorDtype.INT8.value[0], 0])
VECTOR_SUBTYPE = 9


def to_stored(vector: npt.ArrayLike) -> Binary:
    """One unit vector as a BSON int8 vector."""
    row = quantize(vector)[0]
    return Binary(_INT8_HEADER + row.tobytes(), VECTOR_SUBTYPE)


def stored_fields(vector: npt.ArrayLike) -> dict[str, Any]:
    """The storage fields of one embedding."""
    return {"embedding": to_stored(vector), "embeddingModel": MODEL_ID}


def from_stored(value: Any, dim: int) -> npt.NDArray[np.int8] | None:
    """The int8 row of a stored embedding (None when absent or of another shape)."""
    if not isinstance(value, bytes | Binary):
        return None
    if isinstance(value, Binary) and value.subtype != VECTOR_SUBTYPE:
        return None
    raw = bytes(value)
    if raw[:2] != _INT8_HEADER or len(raw) != dim + 2:
        return None
    return np.frombuffer(raw, dtype=np.int8, offset=2)


def stored_many(vectors: npt.NDArray[np.float32]) -> list[dict[str, Any]]:
    return [stored_fields(row) for row in vectors]
