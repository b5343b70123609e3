"""mongomock accepts what the project's pymongo code does: bulk writes, write concerns.

pymongo 4.9+ hands ``sort`` to every bulk builder's ``add_update``; mongomock's builder predates
the keyword and raises TypeError, so a ``bulk_write`` of ``UpdateOne`` fails on the in-memory
store only. The keyword is accepted here while unused (None); a sorted update stays refused.
Imported by ``tests/__init__.py``, so every test module and helper process has it.
"""

from __future__ import annotations

from typing import Any

from mongomock.collection import BulkOperationBuilder
from mongomock_motor import AsyncMongoMockCollection

_add_update = BulkOperationBuilder.add_update


def _add_update_without_sort(self: Any, *args: Any, sort: Any = None, **kwargs: Any) -> Any:
    if sort is not None:
        raise NotImplementedError("mongomock: sorted updates in bulk writes")
    return _add_update(self, *args, **kwargs)


BulkOperationBuilder.add_update = _add_update_without_sort  # type: ignore[method-assign]


def _same_collection(self: Any, *args: Any, **kwargs: Any) -> Any:
    return self


# mongomock has no durability to ask for: a collection with a journaled write concern
# (``persistence.durability``) is the collection itself, still async (mongomock-motor's own
# ``with_options`` would hand back a synchronous mongomock collection).
AsyncMongoMockCollection.with_options = _same_collection  # type: ignore[method-assign]
