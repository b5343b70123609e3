"""``indexedAt`` is stamped in one place: a setter that forgets it cannot exist.

Search indexes re-read the documents whose ``indexedAt`` moved since they last looked
(``persistence/documents/stamp.py``). Every write of the documents collection goes through the
write methods of ``DocumentCollection``, which stamp through ``stamped``; the first test fails
on any other write of the collection (a new setter calling ``update_one`` itself), the others
pin what the one helper does and that each repository write moves the stamp.
"""

from __future__ import annotations

import ast
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from persistence.documents import FieldUpdate, stamp
from persistence.documents import collection as documents_clock
from persistence.documents.stamp import INDEXED_PATHS, STAMP, stamped, touches_index
from persistence.store import Store
from tests.clock import ManualClock
from tests.conftest import Tenant
from tests.documents.conftest import doc

PACKAGE = Path(stamp.__file__).parent
WRITES = {
    "insert_one",
    "insert_many",
    "update_one",
    "update_many",
    "replace_one",
    "find_one_and_update",
    "find_one_and_replace",
    "find_one_and_delete",
    "delete_one",
    "delete_many",
    "bulk_write",
}
# The documents collection as the repository holds it (rollups hold it to read only).
HANDLES = {"docs", "_durable", "_documents"}
# The write methods of ``DocumentCollection``: the only places allowed to write.
FUNNEL = {"insert", "update_one", "update_many", "update_before", "delete_queued"}


def writes_outside_the_funnel(path: Path) -> list[str]:
    """Calls of a collection write on the documents collection outside the write methods."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    allowed: set[int] = set()
    for node in ast.walk(tree):
        if (
            path.name == "collection.py"
            and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name in FUNNEL
        ):
            allowed |= {id(inner) for inner in ast.walk(node)}
    found = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITES
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr in HANDLES
            and id(node) not in allowed
        ):
            found.append(f"{path.name}:{node.lineno} {node.func.value.attr}.{node.func.attr}")
    return found


def test_every_write_goes_through_the_stamping_methods() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert any(path.name == "writes.py" for path in modules)
    assert [w for path in modules for w in writes_outside_the_funnel(path)] == []


def test_the_scan_sees_a_setter_that_writes_by_itself(tmp_path: Path) -> None:
    forgetful = tmp_path / "forgetful.py"
    forgetful.write_text(
        "class Forgetful:\n"
        "    async def set_merchant(self, workspace_id, document_id, merchant):\n"
        "        await self._coll.docs.update_one(\n"
        "            {'_id': document_id}, {'$set': {'merchant': merchant}}\n"
        "        )\n"
    )
    assert writes_outside_the_funnel(forgetful) == ["forgetful.py:3 docs.update_one"]


def test_only_the_stamp_module_names_the_stamp_as_a_key() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "stamp.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                keys = [k.value for k in node.keys if isinstance(k, ast.Constant)]
                assert STAMP not in keys, f"{path.name}:{node.lineno} sets {STAMP} by hand"


NOW = datetime(2026, 1, 2, tzinfo=UTC)


@pytest.mark.parametrize("path", INDEXED_PATHS)
def test_writing_an_indexed_path_stamps(path: str) -> None:
    assert stamped({"$set": {path: "x"}}, NOW)["$set"][STAMP] == NOW


def test_a_path_holding_or_inside_an_indexed_one_stamps() -> None:
    assert touches_index(["lineItems"])  # holds lineItems.description
    assert touches_index(["embedding.0"])
    assert stamped({"$pull": {"searchTerms": "shell"}}, NOW) == {
        "$pull": {"searchTerms": "shell"},
        "$set": {STAMP: NOW},
    }


def test_other_writes_leave_the_stamp_alone() -> None:
    # duplicateOf is one a where-clause reads (the index keeps it); duplicates no filter reads.
    update = {"$set": {"thumbnailAt": NOW}, "$addToSet": {"duplicates": "doc_2"}}
    assert stamped(update, NOW) == update
    assert STAMP in stamped({"$set": {"duplicateOf": "doc_1"}}, NOW)["$set"]
    with pytest.raises(ValueError, match="stamped by the write"):
        stamped({"$set": {"merchant": "Shell", STAMP: NOW}}, NOW)


async def test_each_repository_write_moves_the_stamp(
    store: Store, alice: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = ManualClock()
    monkeypatch.setattr(documents_clock, "utcnow", clock)
    documents = store.documents
    workspace = alice.org_id
    await documents.writes.insert_many(workspace, [doc("doc_1"), doc("doc_2"), doc("doc_3")])

    async def stamp_of(document_id: str) -> datetime:
        record = await documents.reads.get(workspace, document_id)
        assert record is not None
        moment = record[STAMP]
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    assert await stamp_of("doc_1") == clock()
    record = await documents.reads.loaded(workspace, "doc_1")
    assert record is not None
    vector = {"embedding": None, "embeddingModel": "m"}
    summary = [FieldUpdate(record, {"summary": "x"})]
    writes: list[tuple[str, Callable[[], Awaitable[object]]]] = [
        ("doc_1", lambda: documents.writes.set_processing(workspace, "doc_1", "processing")),
        (
            "doc_2",
            lambda: documents.writes.set_export_status(workspace, "doc_2", "exported", "exp_1"),
        ),
        ("doc_3", lambda: documents.writes.set_archived(workspace, ["doc_3"], True)),
        ("doc_1", lambda: documents.writes.update_fields(workspace, record, {"merchant": "Aral"})),
        (
            "doc_1",
            lambda: documents.bulk.update(workspace, summary),
        ),
        ("doc_2", lambda: documents.search.set_embeddings(workspace, {"doc_2": vector})),
    ]
    for document_id, write in writes:
        clock.advance(10)
        await write()
        assert await stamp_of(document_id) == clock(), document_id

    clock.advance(10)
    unmoved = await stamp_of("doc_1")
    # The original's list of duplicates is no indexed path; the duplicate's duplicateOf is one
    # a where-clause reads.
    await documents.writes.link_duplicate(workspace, "doc_1", "doc_2")
    assert await stamp_of("doc_1") == unmoved
    assert await stamp_of("doc_2") == clock()
