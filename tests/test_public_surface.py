"""Each package's public surface is explicit (issue 36): a package whose ``__init__`` binds
names declares them in ``__all__``, and code outside the package imports from its ``__init__``
only those names (or its modules); a package whose ``__init__`` is only a docstring is a
namespace, its modules are its surface. Nothing imports another package's ``_private`` module,
nor a ``_private`` name from outside the package that defines it.

Read from the source with ``ast`` (nothing is imported), each file's facts kept and its tree
dropped: about a second.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("app", "domain", "engines", "persistence", "resolvers", "schema")
# Packages that bind names without ``__all__`` yet (none: a package that comes here must leave).
PENDING: set[str] = set()


@dataclass(frozen=True)
class Source:
    """What the checks need of one module."""

    path: Path
    is_package: bool
    imports: tuple[tuple[int, str, str], ...]  # (line, module, name); name "" for ``import m``
    declared: frozenset[str] | str | None  # ``__all__``; a module name when it is that one's
    binds: bool  # binds a name beyond its docstring and ``__future__``
    bound: frozenset[str]  # the names it binds at any depth
    star: bool  # has a ``from … import *``


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _declared(tree: ast.Module) -> frozenset[str] | str | None:
    for node in tree.body:
        if not isinstance(node, ast.Assign) or not any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            continue
        value = node.value
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name):
            # ``__all__ = errors.__all__``: the module imported as ``errors`` says.
            for other in tree.body:
                if isinstance(other, ast.ImportFrom):
                    for alias in other.names:
                        if (alias.asname or alias.name) == value.value.id:
                            return f"{other.module}.{alias.name}"
        return frozenset(ast.literal_eval(value))
    return None


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Every statement, nested ones included (imports sit in functions and ``if`` blocks), and
    no expression: walking those too would double the time."""
    for node in body:
        yield node
        for field in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(node, field, []))
        for handler in getattr(node, "handlers", []):
            yield from _statements(handler.body)
        for case in getattr(node, "cases", []):
            yield from _statements(case.body)


def _read(path: Path, module: str) -> Source:
    tree = ast.parse(path.read_text())
    is_package = path.name == "__init__.py"
    package = module if is_package else module.rpartition(".")[0]
    imports: list[tuple[int, str, str]] = []
    for node in _statements(tree.body):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            imports += [(node.lineno, base, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            imports += [(node.lineno, alias.name, "") for alias in node.names]
    bound: set[str] = set()
    for node in ast.walk(tree) if is_package else ():
        if isinstance(node, ast.ImportFrom | ast.Import):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
    binds = any(
        not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
        for node in tree.body
    )
    star = any(name == "*" for _, _, name in imports)
    return Source(path, is_package, tuple(imports), _declared(tree), binds, frozenset(bound), star)


@functools.cache
def sources() -> dict[str, Source]:
    """Every module of ``TOPS``, read once by the worker that runs these tests (not at import:
    each worker collects this module, and parsing the whole tree costs seconds)."""
    found = {}
    for top in TOPS:
        for path in sorted((ROOT / top).rglob("*.py")):
            module = _module_name(path)
            found[module] = _read(path, module)
    return found


def surface(package: str) -> frozenset[str] | None:
    """The package's ``__all__`` (following ``__all__ = module.__all__``), None without one."""
    declared = sources()[package].declared
    if isinstance(declared, str):
        declared = sources()[declared].declared
        assert not isinstance(declared, str)
    return declared


@functools.cache
def _children() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for name in sources():
        parent, _, child = name.rpartition(".")
        found.setdefault(parent, set()).add(child)
    return found


def children(package: str) -> set[str]:
    """The names of the package's modules and subpackages."""
    return _children().get(package, set())


def _inside(importer: str, package: str) -> bool:
    return importer == package or importer.startswith(package + ".")


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def surface_breaches() -> list[str]:
    """Each import that reaches past a package's surface, as ``path:line: why``."""
    breaches = []
    for importer, source in sources().items():
        where = source.path.relative_to(ROOT)
        for line, module, name in source.imports:
            if module.split(".")[0] not in TOPS:
                continue  # a library's surface is its own business
            parts = module.split(".")
            for depth in range(1, len(parts)):
                owner = ".".join(parts[:depth])
                if _private(parts[depth]) and not _inside(importer, owner):
                    breaches.append(f"{where}:{line}: {module} is private to {owner}")
            parent = module.rpartition(".")[0]
            if not name or _inside(importer, module):
                continue
            if _private(name) and not _inside(importer, parent):
                breaches.append(f"{where}:{line}: {module}.{name} is private to {parent}")
            if module not in sources() or not sources()[module].is_package or name == "*":
                continue
            if name in children(module):
                continue
            declared = surface(module)
            if declared is None and module not in PENDING:
                breaches.append(f"{where}:{line}: {module} declares no __all__ ({name})")
            elif declared is not None and name not in declared:
                breaches.append(f"{where}:{line}: {name} is not in {module}.__all__")
    return breaches


def test_no_import_reaches_past_a_package_surface() -> None:
    assert surface_breaches() == []


def test_a_package_that_binds_names_declares_them() -> None:
    undeclared = sorted(
        name
        for name, source in sources().items()
        if source.is_package and source.binds and surface(name) is None and name not in PENDING
    )
    assert undeclared == []
    # A pending package that declares its surface comes off the list.
    assert all(surface(name) is None for name in PENDING)


def test_every_declared_name_exists() -> None:
    """An ``__all__`` names only what its package binds (a stale entry would hide a removal)."""
    for name, source in sources().items():
        declared = surface(name)
        if not source.is_package or declared is None or source.star:
            continue
        missing = declared - source.bound - children(name)
        assert not missing, f"{name}.__all__ names {sorted(missing)}"
