"""model.json says where it comes from, and what it says is true: the training data hash
is recomputed here from the dev set and the generated invoices, the library versions are
the bench extra's pins, the held-out split is the recorded one."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from extraction_data import (  # noqa: E402
    DEFAULT_DATASET,
    DEV_FOLDERS,
    HOLDOUT_FILE,
    data_fingerprint,
    is_held_out,
    load_dev,
    recorded_split,
    synthetic_samples,
)
from extraction_provenance import LIBRARIES  # noqa: E402

from engines.extraction.fields.scoring import MODEL_FILE, load_models  # noqa: E402
from tests.requires import requires  # noqa: E402

MODEL = json.loads(MODEL_FILE.read_text())
PROVENANCE = MODEL["provenance"]


def test_provenance_names_commit_command_engine_and_libraries() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", PROVENANCE["commit"])
    assert PROVENANCE["uncommitted_changes"] is False
    assert "bench/extraction.py --fit" in PROVENANCE["command"]
    assert f"--today {PROVENANCE['today']}" in PROVENANCE["command"]
    assert PROVENANCE["ocr_engine"]["plan"] in PROVENANCE["command"]
    assert PROVENANCE["ocr_engine"]["rapidocr"]
    assert set(LIBRARIES) <= set(PROVENANCE["libraries"])


def test_libraries_are_the_bench_extras_pins() -> None:
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["bench"]
    pins = dict(requirement.split("==") for requirement in extra)
    for name in LIBRARIES:
        assert PROVENANCE["libraries"][name] == pins[name], name


def test_the_held_out_split_is_the_recorded_one() -> None:
    digest = hashlib.sha256(HOLDOUT_FILE.read_bytes()).hexdigest()
    assert PROVENANCE["training_data"]["held_out_split_sha256"] == digest


@requires("dev-set")
def test_training_data_hash_matches_the_dev_set_and_generated_invoices() -> None:
    split = recorded_split()
    counts = PROVENANCE["training_data"]["documents"]
    samples = [
        sample
        for folder in DEV_FOLDERS
        for sample in load_dev(DEFAULT_DATASET, folder)
        if not is_held_out(sample, split)
    ]
    samples += synthetic_samples(counts["synthetic"], render=False)
    assert {f: sum(s.folder == f for s in samples) for f in counts} == counts
    assert data_fingerprint(samples) == PROVENANCE["training_data"]["sha256"]


def test_every_scored_field_has_fitted_weights() -> None:
    models = load_models()
    assert set(models) == {"amount", "doc_date", "merchant", "invoice_id"}
    assert all(model.weights for model in models.values())
