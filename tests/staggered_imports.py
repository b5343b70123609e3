"""Each xdist worker imports the test modules starting from a different point of the list.

In a fresh clone no test module has its assert-rewritten bytecode yet (pytest writes it beside
the source, ``__pycache__/*-pytest-*.pyc``, and reads it from then on). The workers start
together and collect the same modules in the same order, so each rewrote every one of them:
5.4 CPU-s of a worker's 10 to collect, three times over on two cores. Started a third of the list
apart, a worker mostly finds what the one ahead of it has just written, and the rewriting is done
about once. Collection then finds every module imported and collects in its usual order: what is
collected and how it runs do not change. Where the bytecode is there already, this only moves
the imports earlier.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def module_names(args: Sequence[str]) -> list[str]:
    """The test modules and conftests under ``tests/`` that the run's ``args`` (its paths and
    node ids) reach, by their import names, in path order."""
    roots = [Path(arg.split("::", 1)[0]).resolve() for arg in args]
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if "node_modules" in path.parts or not (
            path.name == "conftest.py" or path.name.startswith("test_")
        ):
            continue
        if any(path.is_relative_to(root) for root in roots):  # a module is relative to itself
            found.append(".".join(path.relative_to(TESTS.parent).with_suffix("").parts))
    return found


def import_from_this_workers_share(args: Sequence[str]) -> None:
    """In an xdist worker (``gw<N>`` of ``PYTEST_XDIST_WORKER_COUNT``), import every test module
    the run collects (``args``: ``tests``, or a folder or module named on the command line),
    starting at the worker's share of the list and wrapping around. A module that fails to
    import is left alone: collection imports it again and reports the error where it belongs."""
    worker, count = (
        os.environ.get("PYTEST_XDIST_WORKER"),
        os.environ.get("PYTEST_XDIST_WORKER_COUNT"),
    )
    if not worker or not count or int(count) < 2:
        return
    modules = module_names(args)
    start = len(modules) * int(worker.removeprefix("gw")) // int(count)
    for name in modules[start:] + modules[:start]:
        try:
            importlib.import_module(name)
        except KeyboardInterrupt:
            raise
        except BaseException:  # pytest.skip at import time is a BaseException
            continue
