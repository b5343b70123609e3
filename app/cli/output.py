"""How the CLI prints results: readable on a terminal, JSON for scripts.

JSON (``data.result``, indented) when stdout is not a terminal or with ``--json``; the whole
envelope with ``--raw``; otherwise a view for people: scalar fields as ``key: value`` lines,
lists of objects as tables (the columns their rows share, scalars only), nested objects one
level deep as ``parent.child``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from rich.console import Console
from rich.table import Table

MAX_COLUMNS = 9
MAX_CELL = 60


def wants_json(json_flag: bool) -> bool:
    return json_flag or not sys.stdout.isatty()


def print_json(value: Any) -> None:
    click.echo(json.dumps(value, indent=2, ensure_ascii=False))


def print_result(result: Any, *, as_json: bool, raw: dict[str, Any] | None = None) -> None:
    """``raw`` (the whole envelope) wins; then JSON; then the view for people."""
    if raw is not None:
        print_json(raw)
    elif as_json:
        print_json(result)
    else:
        render(result)


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, dict | list) else str(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def _flatten(record: dict[str, Any]) -> dict[str, Any]:
    """Scalars of ``record`` and of its nested objects (one level), as ``a.b``."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, dict):
            for inner, inner_value in value.items():
                if not isinstance(inner_value, dict | list):
                    flat[f"{key}.{inner}"] = inner_value
        elif not isinstance(value, list):
            flat[key] = value
    return flat


def table(rows: list[dict[str, Any]], title: str | None = None) -> Table:
    flat = [_flatten(row) for row in rows]
    columns: list[str] = []
    for row in flat:
        for key in row:
            if key not in columns:
                columns.append(key)
    # Columns that are empty everywhere say nothing.
    columns = [c for c in columns if any(row.get(c) is not None for row in flat)][:MAX_COLUMNS]
    view = Table(title=title, title_justify="left", show_lines=False)
    for column in columns:
        view.add_column(column, overflow="fold")
    for row in flat:
        view.add_row(*(_cell(row.get(column)) for column in columns))
    return view


def render(result: Any, console: Console | None = None) -> None:
    console = console or Console(highlight=False, soft_wrap=True)
    if isinstance(result, list):
        _render_list(console, result, None)
        return
    if not isinstance(result, dict):
        console.print(_cell(result))
        return
    scalars = _flatten(result)
    width = max((len(k) for k in scalars), default=0)
    for key, value in scalars.items():
        console.print(f"[bold]{key.ljust(width)}[/bold]  {_cell(value)}")
    for key, value in result.items():
        if isinstance(value, list):
            _render_list(console, value, key)
        elif isinstance(value, dict):
            for inner, inner_value in value.items():
                if isinstance(inner_value, list):
                    _render_list(console, inner_value, f"{key}.{inner}")


def _render_list(console: Console, items: list[Any], title: str | None) -> None:
    if not items:
        console.print(f"[bold]{title}[/bold]  (none)" if title else "(none)")
    elif all(isinstance(item, dict) for item in items):
        console.print(table(items, title))
    else:
        console.print(f"[bold]{title}[/bold]  " + ", ".join(_cell(i) for i in items))
