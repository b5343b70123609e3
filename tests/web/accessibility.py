"""axe-core (the npm package tests/web installs) run inside a Chromium page: the serious and
critical violations on the page as it is now, in the light or the dark colour scheme."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.node_tools import npm_file
from tests.web.dashboard_live import Page

AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
# What each violation keeps: its rule, impact and summary, and the first nodes it names (their
# selector, the start of their HTML and axe's account of what fails, contrast ratios included).
RUN = (
    "axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
    ".filter(v => ['serious', 'critical'].includes(v.impact))"
    ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
    " nodes: v.nodes.slice(0, 5).map(n => [n.target.join(' '), n.html.slice(0, 300),"
    " (n.failureSummary || '').slice(0, 300)].join(' | '))})))"
)


def axe_violations(page: Page) -> list[dict[str, Any]]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.js("typeof axe !== 'undefined'"):
        page.js(npm_file(AXE).read_text())
    result = page.call("Runtime.evaluate", expression=RUN, awaitPromise=True, returnByValue=True)
    violations: list[dict[str, Any]] = result["result"]["value"]
    return violations


def color_scheme(page: Page, scheme: str) -> None:
    """Emulate ``prefers-color-scheme: scheme`` ("light" or "dark") for the tab from now on."""
    page.call(
        "Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}]
    )
    assert page.js(f"matchMedia('(prefers-color-scheme: {scheme})').matches") is True


def report(found: dict[str, list[dict[str, Any]]]) -> str:
    """Violations by page, for a failing assertion: id, impact, targets and summaries."""
    return json.dumps({where: v for where, v in found.items() if v}, indent=1)


def assert_accessible(page: Page) -> None:
    """No serious or critical axe-core violation in the light and the dark colour scheme."""
    found: dict[str, list[dict[str, Any]]] = {}
    try:
        for scheme in ("light", "dark"):
            color_scheme(page, scheme)
            found[scheme] = axe_violations(page)
    finally:
        page.call("Emulation.setEmulatedMedia", features=[])
    assert not any(found.values()), report(found)
