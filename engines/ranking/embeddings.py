"""Sentence embeddings, computed offline from a pinned ONNX file in the installation.

The model is Google's Universal Sentence Encoder Multilingual v3 (Apache-2.0), as a quantized
ONNX export. Its SentencePiece tokenizer is part of the graph (an ``onnxruntime-extensions``
custom op), so raw strings go in and 512-dimensional vectors come out: no tokenizer files, no
hub, no network. It was trained on 16 languages, English and German among them, and its sub-word
vocabulary carries Malay words close to their English neighbours too (measured in
``bench/search.py``).

The file is fetched at install time into a private directory and checked by its sha256
(``engines/ranking/model_store.py``); the check runs again here when a process loads it.

``load_embedder()`` is process-cached: the session loads once (about 2.5 s) and is shared by
every caller; ``onnxruntime`` sessions are safe to run from several threads at once.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engines.ranking import model_store
from engines.ranking.model_store import EmbeddingUnavailable

__all__ = [
    "BATCH",
    "BATCH_CHARS",
    "DIM",
    "MODEL_NAME",
    "Embedder",
    "EmbeddingUnavailable",
    "available",
    "batches",
    "dequantize",
    "load_embedder",
    "model_path",
    "normalise",
    "quantize",
]

MODEL_NAME = "universal-sentence-encoder-multilingual-3 (quantized ONNX)"
DIM = 512
# Texts run through the model together, at most BATCH of them and at most BATCH_CHARS counted
# as the batch's size times its longest text: the graph's fixed cost (~20 ms for a text alone) is
# shared by a batch, but a run's memory grows with the batch times its longest text (attention
# over padded rows). 32 random 1,000-character texts as one batch peaked at +503 MB; in batches
# of 4 at +47 MB, and sooner (4.4 s against 5.2 s); short texts still go 32 at a time (a bulk
# edit's re-embedding raised the server's peak by ~400 MB: attacks M2 and M5 of issue 35).
BATCH = 32
BATCH_CHARS = 4_000
# Longer texts are cut: a receipt's meaning is in its first lines, and the cost grows with length.
MAX_CHARS = 2000

FloatMatrix = npt.NDArray[np.float32]


def model_path() -> Path:
    """Where the ONNX weights are (``EmbeddingUnavailable`` with the fetch command when absent)."""
    return model_store.installed_path()


class Embedder:
    """Turns texts into L2-normalised float32 vectors of ``dim`` dimensions."""

    def __init__(self, path: Path | None = None, threads: int = 1) -> None:
        try:
            import onnxruntime as ort
            from onnxruntime_extensions import get_library_path
        except ImportError as exc:  # pragma: no cover - both are dependencies
            raise EmbeddingUnavailable(str(exc)) from exc
        options = ort.SessionOptions()
        options.register_custom_ops_library(get_library_path())
        # One thread by default: the service runs on few cores, next to OCR and the API.
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        if path is None:
            path = model_path()
            # Checked by content, not only by size: a replaced file would silently change every
            # vector the store compares with (~0.07 s for the 72 MB file, once per process).
            model_store.verify(path, model_store.USE_MULTILINGUAL.sha256)
        self._session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        # onnxruntime's CPU arena grows to the peak of a run and keeps it: 32 texts of 1,000
        # characters kept +630 MB per process, and bulk edits took a server from 381 to
        # 2,170 MB (issue 35). Shrinking it when each run ends gives that back; measured here,
        # a long batch costs about the same (the arena still serves within the run), where
        # turning the arena off made it twice as slow.
        self._run_options = ort.RunOptions()
        self._run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        self._input = self._session.get_inputs()[0].name
        self._output = self._session.get_outputs()[0].name
        self.dim: int = DIM
        self.model_name: str = MODEL_NAME

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Vectors of ``texts``, shape ``(len(texts), dim)``, rows of length 1.

        The quantized graph scales its activations per run, so a text's vector moves a little
        with its batch-mates (cosine ≥ 0.998 to the vector of the text alone)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for batch in batches([(text or "")[:MAX_CHARS] for text in texts]):
            out = self._session.run([self._output], {self._input: batch}, self._run_options)[0]
            parts.append(np.asarray(out, dtype=np.float32))
        return normalise(np.concatenate(parts))


def batches(texts: Sequence[str]) -> list[list[str]]:
    """``texts`` in order, cut into runs of at most ``BATCH`` whose size times their longest
    text is at most ``BATCH_CHARS`` (a text longer than that runs alone)."""
    out: list[list[str]] = []
    current: list[str] = []
    longest = 0
    for text in texts:
        wider = max(longest, len(text))
        if current and (len(current) == BATCH or (len(current) + 1) * wider > BATCH_CHARS):
            out.append(current)
            current, wider = [], len(text)
        current.append(text)
        longest = wider
    if current:
        out.append(current)
    return out


def normalise(vectors: npt.ArrayLike) -> FloatMatrix:
    """Rows scaled to length 1 (rows of zeros stay zeros)."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


_lock = threading.Lock()
_cached: dict[int, Embedder] = {}


def load_embedder(threads: int = 1) -> Embedder:
    """The process's embedder (loaded on first use, then shared)."""
    with _lock:
        embedder = _cached.get(threads)
        if embedder is None:
            embedder = _cached[threads] = Embedder(threads=threads)
        return embedder


def available() -> bool:
    """Whether the model can be loaded here (its file and onnxruntime-extensions are installed)."""
    try:
        model_path()
        import onnxruntime_extensions  # noqa: F401
    except (EmbeddingUnavailable, ImportError):
        return False
    return True


# -- compact storage -------------------------------------------------------------------------


def quantize(vectors: npt.ArrayLike) -> npt.NDArray[np.int8]:
    """Unit vectors as int8 rows, each scaled so its largest component is ±127.

    Cosine similarity does not depend on a vector's length, so no scale is kept: a row is
    restored by ``dequantize`` to a unit vector (cosine to the original ≥ 0.999 for this model).
    The same layout is what MongoDB's vector search indexes as an int8 vector.
    """
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix[None, :]
    peak = np.abs(matrix).max(axis=1, keepdims=True)
    scaled = np.divide(matrix * 127.0, peak, out=np.zeros_like(matrix), where=peak > 0)
    return np.clip(np.rint(scaled), -127, 127).astype(np.int8)


def dequantize(rows: npt.ArrayLike) -> FloatMatrix:
    """Unit float32 vectors from int8 rows made by ``quantize``."""
    return normalise(np.asarray(rows, dtype=np.float32))
