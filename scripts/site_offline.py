"""Fail when a page of the built docs site would fetch anything from another host.

The site is read by self-hosters, often offline: a web font, script, stylesheet or image from
elsewhere would make every page wait for it there, and tell that host who reads what. Links a
reader may follow (``<a href>``) are fine; what the browser loads by itself is not.

Usage: ``python scripts/site_offline.py site`` (``make docs`` runs it after the build).
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser
from pathlib import Path

# The attributes a browser fetches without a click, per tag.
FETCHED = {
    "script": "src",
    "img": "src",
    "iframe": "src",
    "source": "src",
    "audio": "src",
    "video": "src",
    "embed": "src",
    "link": "href",
}
# ``<link>`` relations that are only names for a reader, not requests.
NOT_FETCHED_RELS = {"canonical", "alternate", "author", "license", "next", "prev", "help"}
CSS_URL = re.compile(r"""(?:url\(|@import\s+)\s*["']?((?:https?:)?//[^"')\s]+)""")


def is_outside(url: str) -> bool:
    return url.startswith(("http://", "https://", "//"))


class Requests(HTMLParser):
    """The outside addresses one page makes the browser fetch."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name: value or "" for name, value in attrs}
        if tag == "link" and set(values.get("rel", "").split()) <= NOT_FETCHED_RELS:
            return
        attribute = FETCHED.get(tag)
        if attribute and is_outside(values.get(attribute, "")):
            self.found.append(f"<{tag} {attribute}={values[attribute]}>")
        self.found += CSS_URL.findall(values.get("style", ""))


def outside_requests(site: Path) -> list[str]:
    """``file: what`` for every request to another host the built site would make."""
    problems: list[str] = []
    for page in sorted(site.rglob("*.html")):
        parser = Requests()
        parser.feed(page.read_text(encoding="utf-8"))
        problems += [f"{page.relative_to(site)}: {what}" for what in parser.found]
    for sheet in sorted(site.rglob("*.css")):
        for url in CSS_URL.findall(sheet.read_text(encoding="utf-8", errors="replace")):
            problems.append(f"{sheet.relative_to(site)}: {url}")
    return problems


def main() -> int:
    site = Path(sys.argv[1] if len(sys.argv) > 1 else "site")
    problems = outside_requests(site)
    for problem in problems[:20]:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{len(problems)} request(s) to other hosts in {site}/", file=sys.stderr)
        return 1
    print(f"{site}/: no page fetches anything from another host")
    return 0


if __name__ == "__main__":
    sys.exit(main())
