"""The serving process's start-up heap, kept out of the garbage collector's full passes.

A serving process holds a few hundred thousand objects from start-up for its whole life (the
GraphQL schema and its compiled types, the registry's models, the libraries' modules). Every
full (oldest-generation) collection walks them all, and an answer that allocates many objects
(documentsAggregate's 500 groups are 3,500 models) triggers such collections: measured in the
GraphQL graph bench at 20k documents, building that answer took 37 ms with the start-up heap
in the collector and 9 ms with it frozen (``gc.freeze``), at the same load. Frozen objects are
still freed by reference counting; only cycles among them wait for ``unfreeze``.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def frozen_start_up_heap() -> Iterator[None]:
    """While it is entered, every object alive at entry (after a collection) is left out of
    the collector's passes; on exit they are collectable again."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
