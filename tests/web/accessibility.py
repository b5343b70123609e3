"""axe-core (the npm package tests/web installs) run inside a Chromium page: the serious and
critical violations on the page as it is now, in the light or the dark colour scheme.

A page is checked in the dark scheme only when it has styles for it (``has_dark_styles``): a
page without any draws the same in both, and a second axe run over it (a CPU-second or so in
the browser) would find what the first found. fincap's own pages have none today; the GraphQL
explorer's do. That the scheme is read by stylesheets alone, never by fincap's scripts, is
checked by ``tests/web/test_color_scheme.py``."""

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


# Whether a stylesheet of the page (or a meta tag, or the root's style) can draw it differently in
# the dark: a media query on the scheme, a ``color-scheme`` declaration, ``light-dark()``. A sheet
# whose rules cannot be read (another origin) counts as one that can.
DARK_STYLES = """(() => {
  const scheme = /color-scheme|light-dark\\(/;
  if (document.querySelector('meta[name=color-scheme]')) return true;
  if (getComputedStyle(document.documentElement).colorScheme !== 'normal') return true;
  const any = rules => [...rules].some(rule =>
    scheme.test(rule.cssText) || (rule.styleSheet && sheet(rule.styleSheet)));
  const sheet = s => {
    if (scheme.test(s.media.mediaText)) return true;
    try { return any(s.cssRules); } catch { return true; }
  };
  return [...document.styleSheets].some(sheet)
    || [...document.querySelectorAll('[style]')].some(e => scheme.test(e.getAttribute('style')));
})()"""


def has_dark_styles(page: Page) -> bool:
    """Whether the page as it stands has styles that depend on the colour scheme."""
    return bool(page.js(DARK_STYLES))


def color_scheme(page: Page, scheme: str) -> None:
    """Emulate ``prefers-color-scheme: scheme`` ("light" or "dark") for the tab from now on."""
    page.call(
        "Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}]
    )
    assert page.js(f"matchMedia('(prefers-color-scheme: {scheme})').matches") is True


def report(found: dict[str, list[dict[str, Any]]]) -> str:
    """Violations by page, for a failing assertion: id, impact, targets and summaries."""
    return json.dumps({where: v for where, v in found.items() if v}, indent=1)


def schemes_of(page: Page) -> tuple[str, ...]:
    """The colour schemes in which the page can look different: light, and dark when it has
    styles for it."""
    return ("light", "dark") if has_dark_styles(page) else ("light",)


def assert_accessible(page: Page) -> None:
    """No serious or critical axe-core violation in the light and (when the page has styles for
    it) the dark colour scheme."""
    found: dict[str, list[dict[str, Any]]] = {}
    try:
        for scheme in schemes_of(page):
            color_scheme(page, scheme)
            found[scheme] = axe_violations(page)
    finally:
        page.call("Emulation.setEmulatedMedia", features=[])
    assert not any(found.values()), report(found)
