"""Work counted, not timed: the Python function calls a block makes on its thread.

A test that guards against exponential work ("an alias bomb is refused fast") asserts a count of
calls instead of seconds: the count is the same on an idle and on a loaded machine, and the
block is stopped as soon as it goes over, so exponential work fails at once instead of hanging.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any


class OverBudget(Exception):
    """The block made more calls than its budget allows."""


class CallCounter:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.calls = 0
        self.exceeded = False

    def __call__(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.calls += 1
            if self.calls > self.limit and not self.exceeded:
                self.exceeded = True
                raise OverBudget(f"more than {self.limit} calls")


@contextlib.contextmanager
def call_budget(limit: int) -> Iterator[CallCounter]:
    """Count the Python calls made on this thread inside the block (an awaited ASGI request runs
    on it too); past ``limit`` the call in progress raises ``OverBudget``. Check
    ``counter.exceeded`` afterwards: the code under test may have caught the exception."""
    counter = CallCounter(limit)
    previous = sys.getprofile()
    sys.setprofile(counter)
    try:
        yield counter
    finally:
        sys.setprofile(previous)
