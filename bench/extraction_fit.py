"""Fitting the field models: candidate rankers and the calibration of their confidence.

For each scored field a logistic regression learns, from every candidate of every
training document, whether the candidate is the labelled value; its coefficients are the
field's weights. The calibration is a second logistic regression on the winner's score,
its lead over the runner-up and the OCR confidence, fitted on choices made by rankers that
did not see the document (an inner cross-validation), so confidences are not flattered.

Needs scikit-learn (``pip install -e '.[bench]'``); the product itself only evaluates the
fitted weights.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy
from extraction_data import Sample, matches
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GroupKFold

from engines.extraction.fields.decide import SCORED_FIELDS, decide
from engines.extraction.fields.parser import Context
from engines.extraction.fields.scoring import MAX_MARGIN, Candidate, FieldModel

# ParsedFields name → bench (label) name.
LABEL_OF = {
    "amount": "amount",
    "doc_date": "date",
    "merchant": "merchant",
    "invoice_id": "invoiceId",
}
# Inverse regularization strength, chosen by cross-validation (1, 3, 10, 30, 100 compared:
# 10 and above tie, lower loses accuracy on amounts and merchants). Every document weighs
# the same in the fit, so C is relative to ~300 documents.
C = 10.0
INNER_FOLDS = 4


@dataclass
class Prepared:
    """One document ready for fitting: its context, candidates and which are right."""

    sample: Sample
    context: Context
    candidates: dict[str, list[Candidate]]

    def truth(self, name: str) -> list[bool] | None:
        """Per candidate, whether it is the labelled value; None when the field has no label."""
        expected = self.sample.expected.get(LABEL_OF[name])
        if expected is None:
            return None
        return [matches(LABEL_OF[name], expected, c.value) for c in self.candidates[name]]


def fit_rankers(docs: Sequence[Prepared]) -> dict[str, FieldModel]:
    """One linear ranker per scored field, calibration left neutral."""
    return {name: _fit_ranker(docs, name) for name in SCORED_FIELDS}


def _fit_ranker(docs: Sequence[Prepared], name: str) -> FieldModel:
    """Pairwise logistic ranking: within each document, every right candidate against
    every wrong one (a wrong value equal to a right one is not wrong). What is learnt is
    which of two candidates of the *same* document is the field, the decision the parser
    makes; the absolute level is left to the calibration."""
    rows: list[dict[str, float]] = []
    targets: list[int] = []
    weights: list[float] = []
    for doc in docs:
        truth = doc.truth(name)
        if truth is None or not any(truth) or all(truth):
            continue  # nothing to learn where the right value is missing or alone
        candidates = doc.candidates[name]
        right = [c for c, ok in zip(candidates, truth, strict=True) if ok]
        right_values = {c.identity for c in right}
        wrong = [
            c
            for c, ok in zip(candidates, truth, strict=True)
            if not ok and c.identity not in right_values
        ]
        # Every document weighs the same, however many candidates it has.
        share = 1.0 / max(1, 2 * len(right) * len(wrong))
        for good in right:
            for bad in wrong:
                difference = _difference(good.features, bad.features)
                rows.append(difference)
                targets.append(1)
                rows.append({k: -v for k, v in difference.items()})
                targets.append(0)
                weights.extend((share, share))
    if len(set(targets)) < 2:
        return FieldModel({}, 0.0)
    vectorizer = DictVectorizer(sparse=False)
    matrix = vectorizer.fit_transform(rows)
    regression = LogisticRegression(C=C, max_iter=5000, fit_intercept=False)
    regression.fit(matrix, numpy.array(targets), sample_weight=numpy.array(weights))
    weights = dict(zip(vectorizer.get_feature_names_out(), regression.coef_[0], strict=True))
    return FieldModel({k: float(v) for k, v in weights.items()}, 0.0)


def _difference(first: dict[str, float], second: dict[str, float]) -> dict[str, float]:
    return {k: first.get(k, 0.0) - second.get(k, 0.0) for k in first.keys() | second.keys()}


Row = tuple[float, float, float, float, int]


def choice_rows(docs: Sequence[Prepared], models: dict[str, FieldModel], name: str) -> list[Row]:
    """(score, margin, ocr, contested, correct) of each document's chosen candidate."""
    rows = []
    for doc in docs:
        truth = doc.truth(name)
        if truth is None:
            continue
        # The final decision (model and rules), so the confidence is calibrated on what
        # the parser answers.
        choice = decide(
            models, doc.candidates, doc.context.cells, doc.context.today, doc.context.checks
        )[name]
        if choice is None:
            continue
        right = matches(LABEL_OF[name], doc.sample.expected[LABEL_OF[name]], choice.candidate.value)
        rows.append(
            (
                choice.score,
                min(choice.margin, MAX_MARGIN),
                choice.candidate.ocr_confidence,
                choice.contested,
                int(right),
            )
        )
    return rows


def fit_calibration(rows: list[Row]) -> tuple[float, float, float, float, float]:
    if len({row[-1] for row in rows}) < 2:
        # All right (or all wrong): a constant probability, slightly below certainty.
        share = sum(row[-1] for row in rows) / max(1, len(rows))
        logit = float(numpy.log(max(0.02, min(0.98, share)) / (1 - max(0.02, min(0.98, share)))))
        return (0.0, 0.0, 0.0, logit, 0.0)
    matrix = numpy.array([row[:-1] for row in rows])
    regression = LogisticRegression(C=C, max_iter=2000)
    regression.fit(matrix, numpy.array([row[-1] for row in rows]))
    a, b, c, e = (float(v) for v in regression.coef_[0])
    return (a, b, c, float(regression.intercept_[0]), e)


def fit_models(docs: Sequence[Prepared]) -> dict[str, FieldModel]:
    """Rankers fitted on all ``docs``, calibrated on inner out-of-fold choices."""
    rankers = fit_rankers(docs)
    rows: dict[str, list[Row]] = {name: [] for name in SCORED_FIELDS}
    groups = [doc.sample.group for doc in docs]
    folds = min(INNER_FOLDS, len(set(groups)))
    if folds >= 2:
        for train, test in GroupKFold(n_splits=folds).split(docs, groups=groups):
            inner = fit_rankers([docs[i] for i in train])
            for name in SCORED_FIELDS:
                rows[name].extend(choice_rows([docs[i] for i in test], inner, name))
    return {
        name: FieldModel(model.weights, model.bias, fit_calibration(rows[name]))
        for name, model in rankers.items()
    }


def out_of_fold_models(
    docs: Sequence[Prepared], folds: int
) -> list[tuple[list[int], dict[str, FieldModel]]]:
    """For each outer fold: the held-out document indexes and models fitted without them."""
    groups = [doc.sample.group for doc in docs]
    splits = GroupKFold(n_splits=min(folds, len(set(groups)))).split(docs, groups=groups)
    return [(list(test), fit_models([docs[i] for i in train])) for train, test in splits]
