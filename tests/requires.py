"""What some tests need beyond the Python packages: programs of the system (Chromium, Dovecot,
tesseract), the embedding model's file, data beside the repository.

A test that needs one is marked ``@requires("chromium")`` (or ``pytestmark = requires(...)``).
When it is missing, the test fails in CI and skips elsewhere, in both cases saying what is
missing and how to install it (``make install-test`` installs all but the data set): a CI run
never passes because a check did not run, and a laptop without Chromium can still run the rest.

CI is recognised by the ``CI`` environment variable (``.ci/run`` exports ``CI=true``, as CI
services do); ``CI=0``, ``false`` or ``no`` count as outside CI.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache

import pytest


@dataclass(frozen=True)
class Dependency:
    """Something outside the Python packages that tests need."""

    present: Callable[[], bool]
    missing: str  # what is missing, as the skip or failure says it
    install: str  # how to get it
    # Whether CI must have it. The dev data set is not the project's to install: a clone has it
    # only where the machine keeps it beside the repository.
    in_ci: bool = True


def _chromium() -> bool:
    from tests.browser import CHROMIUM

    return CHROMIUM is not None


def _dovecot() -> bool:
    from tests.sources.dovecot import dovecot_binary

    return dovecot_binary() is not None


def _tesseract() -> bool:
    from engines.extraction.ocr_plan import available_engines

    return "tesseract" in available_engines()


def _model() -> bool:
    from engines.ranking import embeddings

    return embeddings.available()


def _dev_set() -> bool:
    from bench.extraction_data import DEFAULT_DATASET

    return DEFAULT_DATASET.is_dir()


DEPENDENCIES: dict[str, Dependency] = {
    "chromium": Dependency(
        _chromium,
        "no chromium binary on PATH",
        "make browser-deps (Debian: chromium-headless-shell)",
    ),
    "dovecot": Dependency(
        _dovecot, "dovecot is not installed", "make imap-deps (Debian: dovecot-imapd)"
    ),
    "tesseract": Dependency(
        _tesseract, "tesseract OCR is not installed", "make system-deps (Debian: tesseract-ocr)"
    ),
    "model": Dependency(
        _model,
        "the embedding model or onnxruntime-extensions is not installed",
        "make model, and pip install -e '.[test]'",
    ),
    "dev-set": Dependency(
        _dev_set,
        "the dev set is not beside the repository (../shared/datasets/receipts-dev)",
        "a data set of the team's machines, not installed by make",
        in_ci=False,
    ),
}


def requires(*names: str) -> pytest.MarkDecorator:
    """Mark a test (or a module, as ``pytestmark``) as needing ``names`` of ``DEPENDENCIES``."""
    unknown = sorted(set(names) - set(DEPENDENCIES))
    if unknown:
        raise ValueError(f"unknown dependencies {unknown}; known: {sorted(DEPENDENCIES)}")
    return pytest.mark.requires(*names)


def in_ci() -> bool:
    """Whether this run is CI's (the ``CI`` environment variable)."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


@cache
def _present(name: str) -> bool:
    return DEPENDENCIES[name].present()


def _missing(item: pytest.Item) -> Dependency | None:
    for mark in item.iter_markers("requires"):
        for name in mark.args:
            if not _present(name):
                return DEPENDENCIES[name]
    return None


def _message(dependency: Dependency) -> str:
    return f"{dependency.missing}: {dependency.install}"


def skip_missing(items: list[pytest.Item]) -> None:
    """At collection: mark the tests whose requirement is missing to skip, with what is
    missing as the reason, unless CI needs it (``tests/conftest.py`` calls it)."""
    for item in items:
        dependency = _missing(item)
        if dependency is not None and not (dependency.in_ci and in_ci()):
            item.add_marker(pytest.mark.skip(reason=_message(dependency)))


def fail_missing(item: pytest.Item) -> None:
    """Before ``item`` sets up: in CI, fail it when something it requires is missing."""
    dependency = _missing(item)
    if dependency is not None and dependency.in_ci and in_ci():
        pytest.fail(f"CI needs it and it is missing: {_message(dependency)}", pytrace=False)
