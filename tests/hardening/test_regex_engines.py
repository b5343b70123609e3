"""Attack M3 (issue 35): a regex that passes the checks must not run past its time budget where
fincap matches it itself. The in-memory matcher (ranked search evaluates a where-clause on the
search index's fields) used Python's backtracking ``re``: it now uses RE2, whose matching time
is linear in the text whatever the pattern. A catastrophic pattern is given to it directly
(the where compiler would refuse it first): with ``re`` it runs for minutes."""

from __future__ import annotations

import subprocess
import sys

from persistence.documents.matching import matches

# Run in a child process: Python's ``re`` holds the GIL while it backtracks, so a thread of
# this process could not even time out.
CATASTROPHIC = """
from persistence.documents.matching import matches
selector = {"summary": {"$regex": "(a+)+$", "$options": "i"}}
print(matches(selector, {"summary": "a" * 30 + "!"}))
"""


def test_the_in_memory_matcher_is_linear_whatever_the_pattern() -> None:
    # A hang guard, not a speed bound: RE2 answers in microseconds, re in hours.
    done = subprocess.run(
        [sys.executable, "-c", CATASTROPHIC], capture_output=True, text=True, timeout=60
    )
    assert done.stdout.strip() == "False", done.stderr  # no match: "!" is in the way of "$"


def test_the_in_memory_matcher_is_case_insensitive_like_the_store() -> None:
    assert matches({"merchant": {"$regex": "^STAR", "$options": "i"}}, {"merchant": "Starbucks"})
    assert not matches({"merchant": {"$regex": "^bucks", "$options": "i"}}, {"merchant": "Star"})
