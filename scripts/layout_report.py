"""Measure the code's layout: lines per folder, the largest modules, and the import graph
between folders (which floor imports which).

    .venv/bin/python scripts/layout_report.py            # the whole report
    .venv/bin/python scripts/layout_report.py --depth 1  # top-level packages only

Only the standard library (``ast``): no graph tool to install. Lines are physical lines of the
``.py`` files of the service's packages (tests, benchmarks and scripts are counted apart).
An import edge is one ``import``/``from … import`` statement in a module of folder A naming a
module of folder B, at the top of the module or inside a function (both are dependencies);
``if TYPE_CHECKING:`` imports are counted apart, since they do not run.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("app", "resolvers", "schema", "persistence", "engines", "domain")
OTHERS = ("tests", "bench", "scripts")


def python_files(top: str) -> Iterator[Path]:
    base = ROOT / top
    if base.is_dir():
        yield from sorted(p for p in base.rglob("*.py") if ".venv" not in p.parts)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def folder_of(module: str, depth: int) -> str:
    """The folder holding ``module``, cut to ``depth`` parts: ``resolvers.framework.invoke`` →
    ``resolvers.framework`` at depth 2; a package's ``__init__`` belongs to the package itself
    (``engines.extraction`` → ``engines.extraction``)."""
    parts = module.split(".")
    if not ROOT.joinpath(*parts).is_dir():
        parts = parts[:-1]  # a module: its folder
    return ".".join(parts[:depth]) or module


def line_count(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


def is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path) -> Iterator[tuple[str, bool]]:
    """(imported module, only under TYPE_CHECKING) for each import naming our packages."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    typing_only: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and is_type_checking(node):
            for child in node.body:
                for inner in ast.walk(child):
                    typing_only.add(id(inner))
    here = module_name(path).split(".")
    is_package = path.name == "__init__.py"
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = here if is_package else here[:-1]
                base = base[: len(base) - (node.level - 1)]
                prefix = ".".join(base)
                names = [f"{prefix}.{node.module}" if node.module else prefix]
            else:
                names = [node.module or ""]
            # ``from resolvers import documents`` names the module resolvers.resources.documents.
            names = [
                f"{names[0]}.{alias.name}"
                if (ROOT / Path(*f"{names[0]}.{alias.name}".split("."))).with_suffix(".py").exists()
                or (ROOT / Path(*f"{names[0]}.{alias.name}".split("."))).is_dir()
                else names[0]
                for alias in node.names
            ]
        for name in dict.fromkeys(names):  # one statement naming one module counts once
            if name.split(".")[0] in PACKAGES:
                yield name, id(node) in typing_only


def lines_per_folder(depth: int) -> None:
    per: dict[str, list[int]] = defaultdict(list)
    for top in (*PACKAGES, *OTHERS):
        for path in python_files(top):
            per[folder_of(module_name(path), depth)].append(line_count(path))
    print(f"{'folder':34} {'files':>5} {'lines':>7} {'median':>7} {'largest':>8}")
    for folder in sorted(per):
        sizes = per[folder]
        print(
            f"{folder:34} {len(sizes):5} {sum(sizes):7} "
            f"{int(statistics.median(sizes)):7} {max(sizes):8}"
        )
    service = [n for f, s in per.items() if f.split(".")[0] in PACKAGES for n in s]
    print(
        f"{'service packages':34} {len(service):5} {sum(service):7} "
        f"{int(statistics.median(service)):7} {max(service):8}"
    )


def largest_modules(count: int) -> None:
    sizes = [
        (line_count(path), str(path.relative_to(ROOT)))
        for top in PACKAGES
        for path in python_files(top)
    ]
    print(f"\nlargest {count} modules of the service")
    for lines, name in sorted(sizes, reverse=True)[:count]:
        print(f"{lines:7}  {name}")


def import_graph(depth: int) -> None:
    edges: Counter[tuple[str, str]] = Counter()
    typing_edges: Counter[tuple[str, str]] = Counter()
    for top in PACKAGES:
        for path in python_files(top):
            source = folder_of(module_name(path), depth)
            for target_module, typing_only in imports_of(path):
                target = folder_of(target_module, depth)
                if target == source:
                    continue
                (typing_edges if typing_only else edges)[(source, target)] += 1
    print(f"\nimports between folders (depth {depth}): importer → imported: statements")
    for (source, target), n in sorted(edges.items()):
        extra = typing_edges.pop((source, target), 0)
        note = f" (+{extra} under TYPE_CHECKING)" if extra else ""
        print(f"  {source:30} → {target:30} {n:4}{note}")
    for (source, target), n in sorted(typing_edges.items()):
        print(f"  {source:30} → {target:30} {0:4} (+{n} under TYPE_CHECKING)")
    tops = Counter()
    for (source, target), n in edges.items():
        a, b = source.split(".")[0], target.split(".")[0]
        if a != b:
            tops[(a, b)] += n
    print("\nimports between top-level packages (run-time statements)")
    for (source, target), n in sorted(tops.items()):
        print(f"  {source:12} → {target:12} {n:4}")


def module_edges(package: str) -> None:
    """Module → module imports inside ``package`` (e.g. resources importing each other)."""
    fan_in: Counter[str] = Counter()
    fan_out: Counter[str] = Counter()
    for path in python_files(package):
        source = module_name(path)
        for target, typing_only in imports_of(path):
            if typing_only or not target.startswith(package + ".") or target == source:
                continue
            if ROOT.joinpath(*target.split(".")).is_dir():
                continue  # a package's __init__: not a module edge
            fan_out[source] += 1
            fan_in[target] += 1
    print(f"\nimports between modules inside {package}: {sum(fan_out.values())} statements")
    for title, counts in (("most imported: ", fan_in), ("most importing:", fan_out)):
        top = ", ".join(
            f"{module.removeprefix(package + '.')} {n}" for module, n in counts.most_common(8)
        )
        print(f"  {title} {top}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--depth", type=int, default=2, help="folder depth (1: top level)")
    parser.add_argument("--largest", type=int, default=15, help="how many large modules")
    parser.add_argument(
        "--inside",
        action="append",
        default=None,
        help="list module-to-module imports inside this package (default: app, resolvers)",
    )
    args = parser.parse_args(argv)
    lines_per_folder(args.depth)
    largest_modules(args.largest)
    import_graph(args.depth)
    for package in args.inside or ("app", "resolvers"):
        module_edges(package)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
