"""Extraction accuracy (cross-validated and on the held-out part), confidence, time.

    .venv/bin/python bench/extraction.py [DATASET_DIR] [--folds 5] [--synthetic 120]
        [--fit] [--today YYYY-MM-DD] [--timing] [--repeat 3] [--engine rapidocr]
        [--folder sroie] [--verbose]

Needs the bench extra: ``pip install -e '.[test,bench]'`` (scikit-learn fits the models; the
extra pins every library the figures depend on).

Documents: the dev set (DATASET_DIR, default ``shared/datasets/receipts-dev`` beside the
repository: photographed Malaysian receipts, German scans, real invoice PDFs) and
``--synthetic`` invoice PDFs made by ``tests/extraction/synthetic`` (several layouts, seven
languages). The dev set is split once, by merchant, into a *tuning* part and a *held-out*
part (``extraction_data.held_out_groups``, recorded in ``extraction_holdout.json``): no
rule, word list or weight is tuned on the held-out documents. OCR results are cached in
``bench/.cache`` for the accuracy runs.

It prints, per folder and field, correct / labelled:

1. *cross-validated*: ``--folds`` folds by merchant over the tuning part (and the generated
   invoices): for each fold the models are fitted on the other folds only;
2. *held-out*: the models fitted on the whole tuning part, on the held-out documents —
   the honest estimate for merchants and layouts nobody looked at;
3. per field, the share of wrong values whose confidence is under the warning threshold
   (flagged for a person to check) and the share of right values flagged (the cost), and
   the calibration bands and Brier score.

``--fit`` refits the shipped models on the tuning part and the generated invoices and
writes ``model.json`` with its provenance (commit, OCR engine, library versions, a hash of
the training data); the same command on the same commit, dataset and ``--today`` writes the
same file. ``--timing`` reads every document afresh (no cache) through
``engines.analysis.analyze`` (text or OCR, fields, category), ``--repeat`` times, and
prints p50 / p95 per folder of the per-document median, in CPU seconds of this process
(``time.process_time``: one core, robust to other load) and in wall seconds (meaningful
only on a quiet machine), with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from extraction_data import (
    DEFAULT_DATASET,
    DEV_FOLDERS,
    FIELDS,
    Sample,
    is_held_out,
    labelled,
    load_dev,
    matches,
    read_text,
    recorded_split,
    split_record,
    synthetic_receipt_samples,
    synthetic_samples,
)
from extraction_fit import LABEL_OF, Prepared, fit_models, out_of_fold_models
from extraction_provenance import provenance

from engines.analysis import analyze
from engines.extraction import build_plan, parse_fields
from engines.extraction.fields.decide import SCORED_FIELDS, decide
from engines.extraction.fields.field_types import ParsedFields, ParseHints
from engines.extraction.fields.parser import assemble, field_candidates, read_context
from engines.extraction.fields.scoring import (
    MODEL_FILE,
    FieldModel,
    load_models,
    model_to_json,
)
from engines.extraction.ocr_plan import DEFAULT_ENGINE, ENGINE_NAMES
from engines.extraction.review import WARNING_CONFIDENCE

FOLDERS = ("sroie", "de", "invoices", "synthetic", "receipts")
GENERATED = frozenset({"synthetic", "receipts"})
EVALUATED_ONLY = frozenset({"receipts"})
BANDS = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.8), (0.8, 0.95), (0.95, 1.01))
Result = tuple[ParsedFields, dict[str, bool]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINE_NAMES)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--synthetic", type=int, default=120, help="generated invoices")
    parser.add_argument("--receipts", type=int, default=300, help="generated till slips")
    parser.add_argument("--folder", action="append", help="limit to these folders")
    parser.add_argument("--fit", action="store_true", help="refit and write model.json")
    parser.add_argument(
        "--today",
        type=date.fromisoformat,
        default=date.today(),
        help="the parser's today (dates after it are not the document's)",
    )
    parser.add_argument("--timing", action="store_true", help="time documents, no cache")
    parser.add_argument("--repeat", type=int, default=3, help="timing runs per document")
    parser.add_argument("--verbose", action="store_true", help="print each document's misses")
    args = parser.parse_args(argv)
    folders = args.folder or list(FOLDERS)
    if args.fit and set(folders) != set(FOLDERS):
        parser.error("--fit fits on every folder: leave out --folder")
    samples = load_samples(args.dataset, folders, args.synthetic, args.receipts)
    print(f"engine={args.engine} documents={len(samples)} today={args.today} load={_load()}")
    if args.timing:
        timing(samples, args.engine, args.repeat)
        return
    split = checked_split(samples, folders)
    plan = build_plan(args.engine)
    docs = prepare(samples, plan, args.today)
    # Generated till slips are a test only: never fitted on, nor calibrated on (their
    # made-up layouts would teach the models the generator, and would move the folds).
    slips = [doc for doc in docs if doc.sample.folder in EVALUATED_ONLY]
    docs = [doc for doc in docs if doc.sample.folder not in EVALUATED_ONLY]
    tuning = [doc for doc in docs if not is_held_out(doc.sample, split)]
    held = [doc for doc in docs if is_held_out(doc.sample, split)]
    print(
        f"tuning part: {len(tuning)} documents; held out: {len(held)} "
        f"({', '.join(f'{n} {f}' for f, n in _count(held).items())})"
    )
    fitted = fit_models(tuning)
    if args.fit:
        MODEL_FILE.write_text(
            json.dumps(
                {
                    "provenance": provenance(
                        [doc.sample for doc in tuning], args, summary_of(tuning)
                    ),
                    "fields": {name: model_to_json(fitted[name]) for name in SCORED_FIELDS},
                },
                indent=1,
            )
            + "\n"
        )
        load_models.cache_clear()
        print(f"wrote {MODEL_FILE}")
    crossed: list[Any] = [None] * len(tuning)
    for indexes, models in out_of_fold_models(tuning, args.folds):
        for index in indexes:
            crossed[index] = evaluate(tuning[index], models)
    report(
        f"cross-validated: tuning part, {args.folds} folds by merchant",
        tuning,
        crossed,
        args.verbose,
    )
    held_results = [evaluate(doc, fitted) for doc in held]
    report("held out: models fitted on the tuning part", held, held_results, args.verbose)
    slip_results = [evaluate(doc, fitted) for doc in slips]
    if slips:
        report("generated till slips (the seed rules were written with): models fitted on the "
               "tuning part", slips, slip_results, args.verbose)  # fmt: skip
    unseen: list[Prepared] = []
    unseen_results: list[Result] = []
    if "receipts" in folders and args.receipts:
        # Till slips from another seed: shops, layouts and troubles no rule was written with.
        unseen = prepare(synthetic_receipt_samples(args.receipts // 2, seed=1), plan, args.today)
        unseen_results = [evaluate(doc, fitted) for doc in unseen]
        report("generated till slips of an unseen seed: models fitted on the tuning part",
               unseen, unseen_results, args.verbose)  # fmt: skip
    shipped = load_models()
    pairs = zip(held, held_results, strict=True)
    if any(evaluate(doc, shipped)[0] != result[0] for doc, result in pairs):
        print("  (the shipped model.json differs from a fit on the tuning part: run --fit)")
    flagged("cross-validated", tuning, crossed)
    flagged("held out", held, held_results)
    flagged("generated invoices (fitted on)", tuning, crossed, only="synthetic")
    if slips:
        flagged("generated till slips", slips, slip_results, only="receipts")
    if unseen:
        flagged("generated till slips of an unseen seed", unseen, unseen_results, only="receipts")


def load_samples(
    root: Path, folders: Sequence[str], synthetic: int, receipts: int = 0
) -> list[Sample]:
    samples: list[Sample] = []
    for folder in folders:
        if folder == "synthetic":
            samples.extend(synthetic_samples(synthetic))
        elif folder == "receipts":
            samples.extend(synthetic_receipt_samples(receipts))
        else:
            samples.extend(load_dev(root, folder))
    return samples


def checked_split(samples: Sequence[Sample], folders: Sequence[str]) -> dict[str, Any]:
    """The recorded held-out split, after checking the rule still gives it."""
    recorded = recorded_split()
    drawn = split_record([s for s in samples if s.folder in DEV_FOLDERS])
    for folder in drawn["folders"]:
        if drawn["folders"][folder] != recorded["folders"].get(folder):
            raise SystemExit(
                f"the held-out rule no longer gives the split recorded for {folder!r} "
                "(bench/extraction_holdout.json): the dev set changed. Record a new split "
                "deliberately, never to move a figure."
            )
    return recorded


def summary_of(docs: Sequence[Prepared]) -> dict[str, int]:
    return _count(docs)


def _count(docs: Sequence[Prepared]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for doc in docs:
        counts[doc.sample.folder] += 1
    return dict(counts)


def prepare(samples: Sequence[Sample], plan: Any, today: date) -> list[Prepared]:
    docs = []
    hints = ParseHints(today=today)
    for sample in samples:
        text = read_text(sample, plan)
        context = read_context(text.layouts, hints)
        docs.append(Prepared(sample, context, field_candidates(context)))
    return docs


def evaluate(doc: Prepared, models: dict[str, FieldModel]) -> Result:
    choices = decide(
        models, doc.candidates, doc.context.cells, doc.context.today, doc.context.checks
    )
    fields = assemble(doc.context, choices)
    verdicts = {
        name: matches(name, expected, found_value(fields, name))
        for name, expected in labelled(doc.sample)
    }
    return fields, verdicts


def found_value(fields: ParsedFields, name: str) -> object:
    """What a bench field is compared with: the merchant counts as either of the seller's
    names (``matches``)."""
    if name == "merchant":
        return (fields.merchant, fields.merchant_legal_name)
    return getattr(fields, FIELDS[name])


def report(
    title: str,
    docs: Sequence[Prepared],
    results: Sequence[Result],
    verbose: bool,
) -> None:
    print(f"\n{title}")
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for folder in FOLDERS:
        rows = [(d, r) for d, r in zip(docs, results, strict=True) if d.sample.folder == folder]
        if not rows:
            continue
        counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for doc, (fields, verdicts) in rows:
            for name, ok in verdicts.items():
                counts[name][0] += int(ok)
                counts[name][1] += 1
                if folder not in GENERATED:
                    totals[name][0] += int(ok)
                    totals[name][1] += 1
            misses = [
                f"{name}: want {doc.sample.expected[name]!s} got {getattr(fields, FIELDS[name])!s}"
                f" ({_confidence(fields, name)})"
                for name, ok in verdicts.items()
                if not ok
            ]
            if verbose and misses:
                print(f"    {doc.sample.name}: " + "; ".join(misses))
        print(f"  {folder:9} n={len(rows):3}  " + _figures(counts))
    if totals:
        print(f"  {'dev total':9} {'':5}  " + _figures(totals))


def _confidence(fields: ParsedFields, label: str) -> str:
    name = next((n for n, lab in LABEL_OF.items() if lab == label), None)
    confidence = fields.confidence(name) if name else None
    return "-" if confidence is None else f"{confidence:.2f}"


def _figures(counts: dict[str, list[int]]) -> str:
    shown = [name for name in FIELDS if counts.get(name) and counts[name][1]]
    return "  ".join(f"{name} {_percent(*counts[name])}" for name in shown)


def _percent(right: int, total: int) -> str:
    return f"{right}/{total} ({100 * right / total:.1f}%)"


# Bench field name → the key of its evidence (where its confidence and warning are).
EVIDENCE_OF = {
    "amount": "amount",
    "date": "doc_date",
    "merchant": "merchant",
    "invoiceId": "invoice_id",
    "subtotal": "subtotal",
    "taxAmount": "tax_amount",
    "lineItems": "line_items",
    "merchantTaxId": "merchant_tax_id",
}


def flagged(
    title: str, docs: Sequence[Prepared], results: Sequence[Result], only: str | None = None
) -> None:
    """Per field of the dev documents (or the generated ones): wrong values flagged (a
    warning, a confidence under the warning threshold, or no value), right values flagged,
    calibration bands (right / all per confidence band: a reliability diagram), Brier."""
    print(f"\nconfidence, {title} (flagged: a warning, under {WARNING_CONFIDENCE} or missing)")
    for label, name in EVIDENCE_OF.items():
        pairs = []
        for doc, (fields, verdicts) in zip(docs, results, strict=True):
            generated = doc.sample.folder in GENERATED
            if label not in verdicts or (doc.sample.folder != only if only else generated):
                continue
            found = fields.evidence.get(name)
            if name == "line_items" and found is None and fields.line_items:
                confidence: float | None = 1.0  # lines read, nothing disputes them
            else:
                confidence = None if found is None else found.confidence
            if found is not None and found.warning:
                confidence = min(confidence or 0.0, 0.5)
            pairs.append((0.0 if confidence is None else confidence, verdicts[label]))
        if not pairs:
            continue
        wrong = [c < WARNING_CONFIDENCE for c, ok in pairs if not ok]
        right = [c < WARNING_CONFIDENCE for c, ok in pairs if ok]
        brier = statistics.fmean((c - ok) ** 2 for c, ok in pairs)
        bands = "  ".join(
            f"[{low:.2f},{min(high, 1):.2f}) {sum(ok for c, ok in pairs if low <= c < high)}/"
            f"{sum(1 for c, _ in pairs if low <= c < high)}"
            for low, high in BANDS
        )
        print(
            f"  {label:9} wrong flagged {_share(wrong)}  right flagged {_share(right)}  "
            f"brier {brier:.3f}  {bands}"
        )


def _share(flags: list[bool]) -> str:
    if not flags:
        return "0/0"
    return f"{sum(flags)}/{len(flags)} ({100 * sum(flags) / len(flags):.0f}%)"


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def timing(samples: Sequence[Sample], engine: str, repeat: int) -> None:
    build_plan(engine)  # models load once per worker process, before any document
    # dateparser's language data and the brand list load on first use; a worker pays that
    # once, so it is paid here before the clock starts.
    parse_fields("Shop\n05 MAR 2018\nTotal 1.00")
    by_folder: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for sample in samples:
        cpu_runs, wall_runs = [], []
        for _ in range(repeat):
            started_cpu, started_wall = time.process_time(), time.perf_counter()
            analyze(sample.data, sample.mime, today=date.today())
            cpu_runs.append(time.process_time() - started_cpu)
            wall_runs.append(time.perf_counter() - started_wall)
        by_folder[sample.folder].append((statistics.median(cpu_runs), statistics.median(wall_runs)))
    print(f"load average after timing: {_load()}")
    for folder, runs in by_folder.items():
        cpu = [c for c, _ in runs]
        wall = [w for _, w in runs]
        print(
            f"  {folder:9} n={len(runs):3}  cpu p50={percentile(cpu, 0.5):.3f}s "
            f"p95={percentile(cpu, 0.95):.3f}s max={max(cpu):.3f}s   "
            f"wall p50={percentile(wall, 0.5):.3f}s p95={percentile(wall, 0.95):.3f}s"
        )


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


if __name__ == "__main__":
    main()
