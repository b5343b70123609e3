"""Accuracy and speed of text + field extraction on the labelled dev set.

    .venv/bin/python bench/extraction.py [DATASET_DIR] [--engine auto|tesseract|rapidocr]
                                         [--limit N] [--folder sroie] [--verbose]

``--engine`` defaults to the product's default plan (``ocr_plan.DEFAULT_ENGINE``).
DATASET_DIR defaults to ``shared/datasets/receipts-dev`` beside the repository. For each
folder (sroie, de, invoices) it prints, per field, correct / labelled, and p50 / p95
seconds per document (text extraction + field parsing, models and date locale data
already loaded).

Matching rules:
- amount: exact to the cent (labels like "RM 29.70" or "$8.20" are parsed to 29.70, 8.20);
- date: the same calendar day (SROIE labels are printed as on the receipt, e.g.
  "05/03/18" or "02/JAN/2017", and are read day-first as Malaysian receipts are);
- merchant: normalized (lower case, letters and digits only) and fuzzy: equal, one
  containing the other, or a difflib similarity ratio ≥ 0.8;
- currency: equal ISO code; invoiceId: equal after removing a leading '#' and case.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engines.extraction import build_plan, extract_text, parse_fields
from engines.extraction.fields.dates import numeric_date, textual_date
from engines.extraction.known_merchants import normalize_merchant
from engines.extraction.ocr_plan import DEFAULT_ENGINE, ENGINE_NAMES

DEFAULT_DATASET = Path(__file__).resolve().parents[2] / "shared/datasets/receipts-dev"
FIELDS = ("amount", "date", "merchant", "currency", "invoiceId")


@dataclass
class Sample:
    path: Path
    mime: str
    expected: dict[str, Any]


@dataclass
class FolderResult:
    correct: dict[str, int] = field(default_factory=dict)
    labelled: dict[str, int] = field(default_factory=dict)
    seconds: list[float] = field(default_factory=list)
    engines: dict[str, int] = field(default_factory=dict)


def load_samples(root: Path, folder: str) -> list[Sample]:
    if folder == "sroie":
        samples = []
        for key in sorted((root / "sroie/key").glob("*.json")):
            label = json.loads(key.read_text())
            samples.append(
                Sample(
                    root / "sroie/img" / f"{key.stem}.jpg",
                    "image/jpeg",
                    {
                        "amount": _money(label["total"]),
                        "date": _printed_date(label["date"]),
                        "merchant": label["company"],
                    },
                )
            )
        return samples
    if folder == "de":
        return [
            Sample(
                root / "de" / row["file"],
                "image/jpeg",
                {
                    "amount": _money(str(row["total"])),
                    "date": date.fromisoformat(row["date"]),
                    "merchant": row["merchant"],
                    "currency": row["currency"],
                },
            )
            for row in json.loads((root / "de/labels.json").read_text())
        ]
    if folder == "invoices":
        samples = []
        for label_file in sorted((root / "invoices").glob("*.json")):
            label = json.loads(label_file.read_text())[0]
            expected: dict[str, Any] = {
                "date": date.fromisoformat(label["date"]),
                "merchant": label["issuer"],
                "currency": label["currency"],
                "invoiceId": label["invoice_number"],
            }
            if "amount" in label:
                expected["amount"] = _money(str(label["amount"]))
            samples.append(Sample(label_file.with_suffix(".pdf"), "application/pdf", expected))
        return samples
    raise ValueError(f"unknown folder {folder}")


def _money(text: str) -> Decimal:
    return Decimal(re.sub(r"[^\d.]", "", text)).quantize(Decimal("0.01"))


def _printed_date(text: str) -> date | None:
    today = date.today()
    match = re.fullmatch(r"(\d{1,2})[/-](\d{1,2})[/-](\d{2,4})", text.strip())
    if match:
        day, month, year = match.groups()
        return numeric_date(day, month, year, order="DMY", today=today)
    return textual_date(text, "DMY", today)


def matches(name: str, expected: Any, found: Any) -> bool:
    if found is None:
        return False
    if name == "merchant":
        want, got = normalize_merchant(expected), normalize_merchant(found)
        if not want or not got:
            return False
        if want in got or got in want:
            return True
        return difflib.SequenceMatcher(None, want, got).ratio() >= 0.8
    if name == "invoiceId":
        return str(expected).lstrip("#").lower() == str(found).lstrip("#").lower()
    return bool(expected == found)


def run_folder(samples: list[Sample], engine: str, verbose: bool) -> FolderResult:
    result = FolderResult()
    plan = build_plan(engine)
    for sample in samples:
        started = time.perf_counter()
        text = extract_text(sample.path.read_bytes(), sample.mime, engine=plan)
        fields = parse_fields(text.text)
        result.seconds.append(time.perf_counter() - started)
        result.engines[text.engine] = result.engines.get(text.engine, 0) + 1
        found = {
            "amount": fields.amount,
            "date": fields.doc_date,
            "merchant": fields.merchant,
            "currency": fields.currency,
            "invoiceId": fields.invoice_id,
        }
        misses = []
        for name in FIELDS:
            if name not in sample.expected or sample.expected[name] is None:
                continue
            result.labelled[name] = result.labelled.get(name, 0) + 1
            if matches(name, sample.expected[name], found[name]):
                result.correct[name] = result.correct.get(name, 0) + 1
            else:
                misses.append(f"{name}: want {sample.expected[name]!s} got {found[name]!s}")
        if verbose:
            status = "; ".join(misses) or "ok"
            print(f"  {sample.path.name} {result.seconds[-1]:.2f}s {text.engine}: {status}")
    return result


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(share * (len(ordered) - 1))))
    return ordered[index]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=DEFAULT_DATASET)
    # The default is the engine the product runs by default, so the bench measures it.
    parser.add_argument("--engine", default=DEFAULT_ENGINE, choices=ENGINE_NAMES)
    parser.add_argument("--limit", type=int, default=None, help="documents per folder")
    parser.add_argument("--folder", action="append", help="sroie, de or invoices (repeatable)")
    parser.add_argument("--verbose", action="store_true", help="print each document's misses")
    args = parser.parse_args(argv)
    build_plan(args.engine)  # load models before timing
    # dateparser loads its locale data (~2 s) on the first month name it parses; a worker
    # pays that once, so it is paid here before the clock starts.
    parse_fields("Shop\n05 MAR 2018\nTotal 1.00")
    print(f"engine={args.engine} dataset={args.dataset}")
    for folder in args.folder or ("sroie", "de", "invoices"):
        samples = load_samples(args.dataset, folder)[: args.limit]
        result = run_folder(samples, args.engine, args.verbose)
        accuracy = "  ".join(
            f"{name} {result.correct.get(name, 0)}/{result.labelled[name]}"
            f" ({100 * result.correct.get(name, 0) / result.labelled[name]:.0f}%)"
            for name in FIELDS
            if result.labelled.get(name)
        )
        print(
            f"{folder:9} n={len(samples):3}  {accuracy}  "
            f"p50={statistics.median(result.seconds):.2f}s "
            f"p95={percentile(result.seconds, 0.95):.2f}s  engines={result.engines}"
        )


if __name__ == "__main__":
    main()
