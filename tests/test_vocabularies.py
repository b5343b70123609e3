"""Each closed vocabulary is declared once, in ``domain/``, and only imported elsewhere.

The scan reads every Python module outside ``domain/`` (the packages, ``bench/``, ``scripts/``)
and reports a collection written out by hand — a tuple, list, set, dict's keys or a
``Literal[…]`` — made mostly of one vocabulary's values, at least two of them: a second list of
roles, of statuses (or a hand-made part of them, ``{"processed", "warning"}``), of sources,
weekdays or OAuth scopes. Such a list drifts from the declaration the day a value is added; use
the declaration or one of its named parts (``domain.documents.SAVED``, ``MANAGERS``, …).
A single value (``role == "owner"``) is a use of the vocabulary, not a copy of it.
"""

from __future__ import annotations

import ast
import functools
import importlib
import pkgutil
from pathlib import Path
from typing import Literal, get_args

import pytest

import domain
from domain.documents import SOURCES, STATUSES, ActivitySource, ActivityStatus
from domain.roles import ROLES
from domain.rules import WEEKDAYS
from domain.scopes import SCOPES
from domain.vocabulary import Vocabulary, vocabulary
from schema.value_meanings import DECLARED, meaning_of

ROOT = Path(__file__).resolve().parent.parent
SCANNED = ("app", "resolvers", "schema", "persistence", "engines", "bench", "scripts")
SCANNED_FOR: dict[str, frozenset[str]] = {
    "roles": frozenset(ROLES),
    "statuses": frozenset(STATUSES),
    "sources": frozenset(SOURCES),
    "weekdays": frozenset(WEEKDAYS),
    "scopes": frozenset(SCOPES),
}


def _strings(node: ast.AST) -> list[str] | None:
    """The string constants written in ``node`` when it is a collection, else None."""
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        elements: list[ast.expr | None] = list(node.elts)
    elif isinstance(node, ast.Dict):
        elements = list(node.keys)
    else:
        return None
    return [e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)]


def copies(source: str, values: frozenset[str]) -> list[tuple[int, list[str]]]:
    """Each collection of ``source`` that is mostly ``values``, two of them or more."""
    return [(line, strings) for line, strings in _collections(source) if _copy(strings, values)]


def _copy(strings: list[str], values: frozenset[str]) -> bool:
    hits = [s for s in strings if s in values]
    return len(set(hits)) >= 2 and 2 * len(hits) >= len(strings)


def _collections(source: str) -> list[tuple[int, list[str]]]:
    """Every collection written in ``source``, by line, with its string constants."""
    found = []
    for node in ast.walk(ast.parse(source)):
        strings = _strings(node)
        if strings:
            found.append((getattr(node, "lineno", 0), strings))
    return sorted(found)


@functools.cache
def _scanned() -> tuple[tuple[str, int, tuple[str, ...]], ...]:
    """Every collection of the scanned modules (read once for all the vocabularies)."""
    return tuple(
        (str(path.relative_to(ROOT)), line, tuple(strings))
        for package in SCANNED
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, strings in _collections(path.read_text(encoding="utf-8"))
    )


def second_lists(values: frozenset[str]) -> list[str]:
    return [
        f"{path}:{line}: {list(strings)}"
        for path, line, strings in _scanned()
        if _copy(list(strings), values)
    ]


@pytest.mark.parametrize("name", sorted(SCANNED_FOR))
def test_each_vocabulary_is_listed_only_where_it_is_declared(name: str) -> None:
    assert second_lists(SCANNED_FOR[name]) == []


def test_the_scan_finds_a_second_list() -> None:
    """The check itself: a copy, whole or in part, in any spelling of a collection is found;
    one value, or values of another vocabulary that share a word, are not."""
    roles = SCANNED_FOR["roles"]
    copied = 'Role = Literal["owner", "admin", "member"]\nX = {"owner": 1, "admin": 2}\n'
    assert [line for line, _ in copies(copied, roles)] == [1, 2]
    statuses = SCANNED_FOR["statuses"]
    assert len(list(copies('if s in {"processed", "warning"}: pass', statuses))) == 1
    assert list(copies('if role == "owner": pass', roles)) == []
    # An export record's statuses share queued and failed with processing, and are their own.
    other = 'S = Literal["queued", "sending", "exported", "failed", "unlinked"]'
    assert list(copies(other, statuses)) == []


def test_the_descriptions_read_the_declared_meanings() -> None:
    """The GraphQL enum values are described from the declarations, every one of them."""
    made = {
        id(found): f"{module.__name__}.{name}"
        for module in (
            importlib.import_module(f"domain.{info.name}")
            for info in pkgutil.iter_modules(domain.__path__)
        )
        for name, found in vars(module).items()
        if isinstance(found, Vocabulary)
    }
    assert set(made) == {id(declared) for declared in DECLARED}, sorted(made.values())
    for declared in DECLARED:
        for value in declared:
            assert meaning_of(declared.values, value) == declared.meaning(value)
    # The activity fields list the same values in their own order, with the same meanings.
    assert meaning_of(get_args(ActivitySource), "upload") == SOURCES.meaning("upload")
    assert meaning_of(get_args(ActivityStatus), "skipped") == STATUSES.meaning("skipped")


def test_a_declaration_is_checked_when_it_is_made() -> None:
    with pytest.raises(ValueError, match="do not match"):
        vocabulary(Literal["a", "b"], {"a": "A"})
    with pytest.raises(ValueError, match="not of the vocabulary"):
        ROLES.subset(Literal["owner", "guest"])
    with pytest.raises(ValueError, match="is not the vocabulary"):
        SOURCES.spelled(Literal["email", "upload"])
