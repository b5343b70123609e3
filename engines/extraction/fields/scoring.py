"""Candidates, their scores, and the confidence of the chosen one.

Every field finder proposes candidates: a value, where it was read, and features that say
why it might be the field (a total label on its row, its position, its text height, whether
it equals subtotal + tax, ...). A linear model per field turns the features into a score;
the best-scored value wins, and a calibration turns its score, its lead over the runner-up,
the OCR's own confidence and whether the document contests the value (``decide``) into a
probability of being right.

The weights are fitted, not hand-set: ``bench/extraction.py --fit`` fits them on the dev
set and on generated invoices and writes ``model.json`` beside this module; its
cross-validation (folds by merchant) measures how well they generalize.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..layout import TextLine
from .view import DocView

MODEL_FILE = Path(__file__).with_name("model.json")
# A value with no competitor leads by this much (a lone candidate is not a certainty:
# its own score still counts).
MAX_MARGIN = 8.0


@dataclass(frozen=True)
class FieldEvidence:
    """Where a field's value was read, and how likely it is to be right.

    ``box`` is [x0, y0, x1, y1] as fractions of the page's width and height (origin top
    left); ``text`` is the row it was read from.
    """

    confidence: float
    page: int | None = None
    box: tuple[float, ...] | None = None
    text: str | None = None
    source: str | None = None
    # Why a person should check the value, when the document disputes it (the lines do not
    # add up to the total, a tax larger than its net …).
    warning: str | None = None


@dataclass
class Candidate:
    """One possible value of a field, where it was read, and its features."""

    value: Any
    line: TextLine | None
    start: int = 0
    end: int = 0
    features: dict[str, float] = field(default_factory=dict)
    source: str = "text"
    key: Hashable | None = None  # candidates with equal keys are the same value
    payload: Any = None  # what else the finder learnt (the brand a merchant name is)

    @property
    def identity(self) -> Hashable:
        return self.key if self.key is not None else self.value

    @property
    def ocr_confidence(self) -> float:
        if self.line is None:
            return 1.0
        return self.line.confidence_at(self.start, self.end)

    def evidence(self, view: DocView, confidence: float) -> FieldEvidence:
        if self.line is None:
            return FieldEvidence(round(confidence, 3), source=self.source)
        page = next((p for p in view.pages if p.number == self.line.page), None)
        box = None
        if page is not None:
            box = page.page_box(self.line.box_at(self.start, max(self.end, self.start + 1)))
        return FieldEvidence(round(confidence, 3), self.line.page, box, self.line.text, self.source)


@dataclass(frozen=True)
class FieldModel:
    """A linear scorer for one field's candidates and the calibration of its winner."""

    weights: Mapping[str, float]
    bias: float = 0.0
    # confidence = sigmoid(c[0]·score + c[1]·margin + c[2]·ocr + c[3] + c[4]·contested)
    calibration: tuple[float, float, float, float, float] = (1.0, 0.0, 0.0, 0.0, 0.0)

    def score(self, features: Mapping[str, float]) -> float:
        return self.bias + sum(
            self.weights.get(name, 0.0) * value for name, value in features.items()
        )

    def confidence(self, score: float, margin: float, ocr: float, contested: float = 0.0) -> float:
        a, b, c, d, e = self.calibration
        return sigmoid(a * score + b * min(margin, MAX_MARGIN) + c * ocr + d + e * contested)


@dataclass(frozen=True)
class Choice:
    """The winning candidate of a field and how sure the model is of it."""

    candidate: Candidate
    score: float
    margin: float
    confidence: float
    contested: float = 0.0  # another reading of the document disputes the value (decide)
    # Why a person should check it: the document's other amounts dispute the value, or agree
    # on another figure that was taken instead (``consensus``).
    warning: str | None = None


def choose(model: FieldModel, candidates: Iterable[Candidate]) -> Choice | None:
    """The best-scored value; a value read in several places counts its best reading."""
    best: dict[Hashable, tuple[float, Candidate]] = {}
    for candidate in candidates:
        score = model.score(candidate.features)
        current = best.get(candidate.identity)
        if current is None or score > current[0]:
            best[candidate.identity] = (score, candidate)
    if not best:
        return None
    ranked = sorted(best.values(), key=lambda item: item[0], reverse=True)
    top_score, winner = ranked[0]
    margin = top_score - ranked[1][0] if len(ranked) > 1 else MAX_MARGIN
    confidence = model.confidence(top_score, margin, winner.ocr_confidence)
    return Choice(winner, top_score, margin, confidence)


def sigmoid(value: float) -> float:
    if value >= 0:
        return 1 / (1 + math.exp(-value))
    exp = math.exp(value)
    return exp / (1 + exp)


@lru_cache(maxsize=4)
def load_models(path: Path = MODEL_FILE) -> dict[str, FieldModel]:
    """The fitted models, by field name (read once per process)."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return {name: model_from_json(spec) for name, spec in data["fields"].items()}


def model_from_json(spec: Mapping[str, Any]) -> FieldModel:
    # Four numbers: a model fitted before the "contested" input (it weighs nothing).
    calibration = [float(v) for v in spec.get("calibration", (1.0, 0.0, 0.0, 0.0))]
    calibration += [0.0] * (5 - len(calibration))
    return FieldModel(
        weights={str(k): float(v) for k, v in spec["weights"].items()},
        bias=float(spec.get("bias", 0.0)),
        calibration=(
            calibration[0],
            calibration[1],
            calibration[2],
            calibration[3],
            calibration[4],
        ),
    )


def model_to_json(model: FieldModel) -> dict[str, Any]:
    return {
        "bias": round(model.bias, 5),
        "weights": {name: round(value, 5) for name, value in sorted(model.weights.items())},
        "calibration": [round(value, 5) for value in model.calibration],
    }
