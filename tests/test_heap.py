"""The serving process's start-up heap is frozen while it serves, and collectable after."""

from __future__ import annotations

import gc

from app.host.heap import frozen_start_up_heap


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_the_heap_is_frozen_while_serving_and_collectable_after() -> None:
    gc.unfreeze()  # nothing frozen by an earlier test
    with frozen_start_up_heap():
        assert gc.get_freeze_count() > 0
        cycle = _Cycle()  # made after start-up: collected as usual
        del cycle
        assert gc.collect() > 0
    assert gc.get_freeze_count() == 0
