"""The colour scheme is read by stylesheets only: no script, template or module of fincap's pages
looks at it. The accessibility checks rely on this (``tests/web/accessibility.py``): they check
a page in the dark scheme only when its stylesheets have dark styles, which they can see in the
browser; a script that drew the page differently in the dark would be invisible to them."""

from __future__ import annotations

import re
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
SCHEME = re.compile(r"color-scheme|colorScheme|light-dark\(")


def test_only_stylesheets_read_the_colour_scheme() -> None:
    readers = {
        path.relative_to(APP).as_posix()
        for path in APP.rglob("*")
        if path.is_file()
        and "__pycache__" not in path.parts
        and SCHEME.search(path.read_text(encoding="utf-8", errors="replace"))
    }
    assert readers, "the GraphQL explorer's stylesheets have dark styles"
    assert all(name.endswith(".css") for name in readers), sorted(readers)
