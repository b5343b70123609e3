"""mongomock accepts what the project's pymongo code does: bulk writes, write concerns, hints.

pymongo 4.9+ hands ``sort`` to every bulk builder's ``add_update``; mongomock's builder predates
the keyword and raises TypeError, so a ``bulk_write`` of ``UpdateOne`` fails on the in-memory
store only. The keyword is accepted here while unused (None); a sorted update stays refused.

Hot reads name their index (``hint``) on a server whose ``buildInfo`` says it is a MongoDB
(``persistence.plans``). mongomock implements no ``buildInfo`` (NotImplementedError), its
``aggregate`` ignores a hint and its ``find`` refuses one ("Unrecognized field 'hint'"); here it
answers ``buildInfo`` as a MongoDB does (no ``secantusVersion``) and ``find`` takes a hint that
names a declared index (and ignores it, as its ``aggregate`` does), so unit tests take the
hinted path, as a deployment on MongoDB does.
Imported by ``tests/__init__.py``, so every test module and helper process has it.
"""

from __future__ import annotations

from typing import Any

from mongomock.collection import BulkOperationBuilder, Collection
from mongomock.database import Database
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


_command = Database.command
# What a MongoDB 8 answers, in the fields anyone reads.
BUILD_INFO = {"version": "8.0.0", "versionArray": [8, 0, 0, 0], "ok": 1.0}


def _command_with_build_info(self: Any, command: Any, **kwargs: Any) -> Any:
    name = command if isinstance(command, str) else next(iter(command), None)
    if name in ("buildInfo", "buildinfo"):
        return dict(BUILD_INFO)
    return _command(self, command, **kwargs)


Database.command = _command_with_build_info  # type: ignore[method-assign]


_find = Collection.find


def _find_with_hint(self: Any, *args: Any, hint: Any = None, **kwargs: Any) -> Any:
    if hint is not None and hint not in self.index_information():
        raise NotImplementedError(f"mongomock: no index {hint!r} to hint")
    return _find(self, *args, **kwargs)


Collection.find = _find_with_hint  # type: ignore[method-assign]
