"""``tests/conftest.py`` deals the longest scopes out first: each one it names must still exist,
or a renamed module would silently fall back to the end of the run."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import LONG_SCOPES

ROOT = Path(__file__).resolve().parents[1]


def test_every_long_scope_names_a_module_and_class_that_exist() -> None:
    missing = []
    for scope in LONG_SCOPES:
        path, _, name = scope.partition("::")
        module = ROOT / path
        if not module.is_file():
            missing.append(scope)
            continue
        classes = {
            node.name
            for node in ast.parse(module.read_text(encoding="utf-8")).body
            if isinstance(node, ast.ClassDef)
        }
        if name and name not in classes:
            missing.append(scope)
    assert not missing
    assert len(set(LONG_SCOPES)) == len(LONG_SCOPES)
