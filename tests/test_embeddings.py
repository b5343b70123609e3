"""The embedding model: offline, multilingual, normalised, batched, and compact when stored."""

from __future__ import annotations

import numpy as np
import pytest

from engines.ranking.embeddings import BATCH, dequantize, load_embedder, quantize
from tests.requires import requires

pytestmark = requires("model")

DOCS = [
    "Starbucks Coffee. Caffe Latte Grande, Blueberry Muffin. Food & Drink",
    "GitHub, Inc. GitHub Team monthly subscription. Software",
    "Shell. Unleaded 95. Fuel",
    "Deutsche Bahn. ICE Fahrkarte Berlin Hbf - München Hbf. Travel",
]


def test_shape_dtype_and_unit_rows() -> None:
    embedder = load_embedder()
    vectors = embedder.embed(DOCS)
    assert vectors.shape == (len(DOCS), embedder.dim) == (4, 512)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 512)
    assert "universal-sentence-encoder-multilingual" in embedder.model_name


def test_process_cached() -> None:
    assert load_embedder() is load_embedder()


def test_batches_give_the_same_directions_as_single_texts() -> None:
    """The quantized graph scales activations per run, so batch-mates move a vector a little
    (cosine ≥ 0.999 here), never its meaning."""
    embedder = load_embedder()
    texts = [f"{DOCS[i % len(DOCS)]} #{i}" for i in range(BATCH + 3)]
    together = embedder.embed(texts)
    alone = np.concatenate([embedder.embed([t]) for t in (texts[0], texts[-1])])
    assert np.all(np.sum(together[[0, -1]] * alone, axis=1) > 0.998)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("coffee", 0),
        ("software subscriptions", 1),
        ("petrol", 2),
        ("train ticket", 3),
        ("Kaffee", 0),  # German
        ("Tankstelle", 2),  # German: petrol station
    ],
)
def test_meaning_ranks_the_right_document_first(query: str, expected: int) -> None:
    embedder = load_embedder()
    scores = embedder.embed(DOCS) @ embedder.embed([query])[0]
    assert int(np.argmax(scores)) == expected, scores


def test_int8_storage_keeps_the_direction() -> None:
    vectors = load_embedder().embed(DOCS)
    rows = quantize(vectors)
    assert rows.dtype == np.int8 and rows.shape == vectors.shape
    assert np.abs(rows).max() == 127
    restored = dequantize(rows)
    assert np.all(np.sum(restored * vectors, axis=1) > 0.999)
    assert not dequantize(np.zeros((1, 512))).any()  # a zero row stays zero, no NaN
