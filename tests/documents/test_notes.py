"""Notes on a document (issue 41 item 5): written, changed with their history, deleted by
whom may; their words find the document in documents.search (the stored search terms and the
ranked search's index); two notes written at once are both kept; the tenant wall; the wire."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from persistence.store import Store
from tests.conftest import Tenant, member_of
from tests.documents.conftest import call, doc, result

DOCS = [doc("doc_1", merchant="Shell"), doc("doc_2", merchant="Aral")]


@pytest.fixture
async def noted(store: Store, alice: Tenant) -> Tenant:
    await store.documents.writes.insert_many(alice.org_id, DOCS)
    return alice


async def add(client: httpx.AsyncClient, who: Tenant, text: str, document: str = "doc_1") -> Any:
    answer = await call(client, who, "notes.add", {"documentId": document, "text": text})
    assert answer.status_code == 200, answer.text
    return result(answer)["note"]


async def found(client: httpx.AsyncClient, who: Tenant, query: str) -> list[str]:
    """The ranked search's answer (its index re-reads what a write changed)."""
    body = {"query": query, "limit": 10}
    documents = result(await call(client, who, "documents.search", body))["documents"]
    return [d["id"] for d in documents]


async def listed(client: httpx.AsyncClient, who: Tenant, document: str = "doc_1") -> Any:
    answer = await call(client, who, "notes.list", {"documentId": document})
    assert answer.status_code == 200, answer.text
    return result(answer)["notes"]


async def terms(store: Store, who: Tenant, document: str = "doc_1") -> set[str]:
    """The stored search terms (what bulk edits' ``query`` and the lexical index read)."""
    record = await store.documents.reads.get(who.org_id, document)
    assert record is not None
    return set(record["searchTerms"])


async def test_a_notes_words_find_its_document(
    client: httpx.AsyncClient, store: Store, noted: Tenant
) -> None:
    assert await found(client, noted, "windscreen") == []
    assert "windscreen" not in await terms(store, noted)
    note = await add(client, noted, "Paid the windscreen repair\nwith the company card")
    assert note["author"] == noted.user_id and note["edits"] == 0
    assert await found(client, noted, "windscreen") == ["doc_1"]
    assert {"windscreen", "company"} <= await terms(store, noted)
    # Another field's correction keeps the note's words in the document's search terms.
    answer = await call(client, noted, "documents.update", {"id": "doc_1", "merchant": "BP"})
    assert answer.status_code == 200, answer.text
    assert await found(client, noted, "windscreen") == ["doc_1"]
    assert "windscreen" in await terms(store, noted)
    await call(client, noted, "notes.delete", {"documentId": "doc_1", "id": note["id"]})
    assert await found(client, noted, "windscreen") == []
    assert "windscreen" not in await terms(store, noted)


async def test_an_edit_keeps_the_earlier_text_and_who_changed_it(
    client: httpx.AsyncClient, noted: Tenant
) -> None:
    note = await add(client, noted, "Client lunch")
    body = {"documentId": "doc_1", "id": note["id"], "text": "Client lunch with ACME"}
    changed = result(await call(client, noted, "notes.update", body))["note"]
    assert changed["text"] == "Client lunch with ACME" and changed["edits"] == 1
    assert [(h["text"], h["editedBy"]) for h in changed["history"]] == [
        ("Client lunch", noted.user_id)
    ]
    again = result(await call(client, noted, "notes.update", body))["note"]
    assert again["edits"] == 1  # the same text again changes nothing
    assert await listed(client, noted) == [again]
    assert await found(client, noted, "acme") == ["doc_1"]


async def test_only_the_author_changes_a_note_and_a_manager_may_delete_it(
    client: httpx.AsyncClient, store: Store, noted: Tenant
) -> None:
    member = await member_of(store, noted, "m@example.com")
    admin = await member_of(store, noted, "a@example.com", "admin")
    mine = await add(client, member, "Member's note")
    body = {"documentId": "doc_1", "id": mine["id"], "text": "Rewritten by the owner"}
    refused = await call(client, noted, "notes.update", body)
    assert refused.status_code == 403 and "Only the author" in refused.text
    owners = await add(client, noted, "Owner's note")
    gone = await call(client, member, "notes.delete", {"documentId": "doc_1", "id": owners["id"]})
    assert gone.status_code == 403
    assert [n["text"] for n in await listed(client, noted)] == ["Member's note", "Owner's note"]
    # What each may do is in the answer (a screen shows only the buttons that work).
    seen = {
        who: [(n["authorEmail"], n["viewerCanEdit"], n["viewerCanDelete"]) for n in notes]
        for who, notes in [
            ("member", await listed(client, member)),
            ("admin", await listed(client, admin)),
        ]
    }
    assert seen == {
        "member": [("m@example.com", True, True), ("alice@example.com", False, False)],
        "admin": [("m@example.com", False, True), ("alice@example.com", False, True)],
    }
    deleted = await call(client, admin, "notes.delete", {"documentId": "doc_1", "id": mine["id"]})
    assert deleted.status_code == 200 and result(deleted) == {"id": mine["id"], "deleted": True}
    assert [n["text"] for n in await listed(client, noted)] == ["Owner's note"]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"documentId": "doc_1", "text": "   "}, "text"),
        ({"documentId": "doc_1", "text": "x" * 5001}, "text"),
        ({"documentId": "doc_1", "text": "bell\x07"}, "control characters"),
        ({"documentId": "doc_1"}, "text"),
    ],
)
async def test_a_bad_note_is_a_400_naming_the_field(
    client: httpx.AsyncClient, noted: Tenant, body: dict[str, Any], words: str
) -> None:
    answer = await call(client, noted, "notes.add", body)
    assert answer.status_code == 400 and words in answer.text
    assert await listed(client, noted) == []


async def test_unknown_documents_and_notes_are_404s(
    client: httpx.AsyncClient, noted: Tenant, bob: Tenant
) -> None:
    missing = await call(client, noted, "notes.add", {"documentId": "doc_9", "text": "hello"})
    assert missing.status_code == 404 and "doc_9" in missing.text
    note = await add(client, noted, "Alice's")
    # Another workspace sees neither the document nor its notes.
    assert (await call(client, bob, "notes.list", {"documentId": "doc_1"})).status_code == 404
    theirs = {"documentId": "doc_1", "id": note["id"]}
    assert (await call(client, bob, "notes.delete", theirs)).status_code == 404
    wrong = await call(client, noted, "notes.delete", {"documentId": "doc_2", "id": note["id"]})
    assert wrong.status_code == 404 and "Note" in wrong.text


async def test_a_document_holds_at_most_its_notes(
    client: httpx.AsyncClient, noted: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("resolvers.resources.notes.MAX_NOTES_PER_DOCUMENT", 2)
    await add(client, noted, "one")
    await add(client, noted, "two")
    over = await call(client, noted, "notes.add", {"documentId": "doc_1", "text": "three"})
    assert over.status_code == 400 and "at most 2 notes" in over.text
    assert [n["text"] for n in await listed(client, noted)] == ["one", "two"]


async def test_notes_written_at_once_are_all_kept(client: httpx.AsyncClient, noted: Tenant) -> None:
    texts = [f"parallel{n}" for n in range(8)]
    await asyncio.gather(*(add(client, noted, text) for text in texts))
    assert sorted(n["text"] for n in await listed(client, noted)) == texts
    for text in texts:  # every one's words are in the search terms
        assert await found(client, noted, text) == ["doc_1"]


@pytest.mark.wire
async def test_notes_over_the_wire(wire_store: Store) -> None:
    """The compare-and-set write and the search terms on the real protocol."""
    await wire_store.documents.writes.insert_many("org_w", [doc("doc_w")])

    def plus(text: str) -> Any:
        return lambda notes: [*notes, {"id": text, "text": text, "author": "usr_1"}]

    await asyncio.gather(
        *(wire_store.documents.notes.change("org_w", "doc_w", plus(f"word{n}")) for n in range(5))
    )
    notes = await wire_store.documents.notes.of("org_w", "doc_w")
    assert notes is not None and sorted(n["text"] for n in notes) == [f"word{n}" for n in range(5)]
    record = await wire_store.documents.reads.get("org_w", "doc_w")
    assert record is not None and {f"word{n}" for n in range(5)} <= set(record["searchTerms"])
    assert await wire_store.documents.notes.of("org_x", "doc_w") is None


async def test_notes_through_graphql(client: httpx.AsyncClient, noted: Tenant) -> None:
    """The same capability on the GraphQL face: written, then listed with its history."""
    from tests.graphql.helpers import gql

    added = await gql(
        client,
        "mutation($input: AddNoteInput!) { notesAdd(input: $input) { note { id author } } }",
        {"input": {"documentId": "doc_1", "text": "Graph note"}},
        noted.headers(),
    )
    assert "errors" not in added, added
    read = await gql(
        client,
        "query($input: ListNotesInput!) { notesList(input: $input) "
        "{ notes { text viewerCanEdit edits } } }",
        {"input": {"documentId": "doc_1"}},
        noted.headers(),
    )
    assert read["data"]["notesList"]["notes"] == [
        {"text": "Graph note", "viewerCanEdit": True, "edits": 0}
    ]
    refused = await gql(
        client,
        "mutation($input: AddNoteInput!) { notesAdd(input: $input) { note { id } } }",
        {"input": {"documentId": "doc_1", "text": "   "}},
        noted.headers(),
    )
    assert refused["errors"] and "text" in refused["errors"][0]["message"]
    assert len(await listed(client, noted)) == 1


async def test_a_documents_notes_in_the_graph(
    client: httpx.AsyncClient, noted: Tenant, bob: Tenant
) -> None:
    """Document.notes: each listed document's notes, under notes.list's scopes; another
    workspace's document is not reachable through it."""
    from tests.graphql.helpers import gql

    await add(client, noted, "Paid by card", "doc_1")
    await add(client, noted, "Ask for the invoice", "doc_1")
    query = (
        "{ workspace { documents(input: {limit: 10, sortBy: merchant, sortOrder: 1}) "
        "{ documents { id notes { text viewerCanDelete } } } } }"
    )
    answer = await gql(client, query, None, noted.headers())
    assert "errors" not in answer, answer
    listed_notes = {
        d["id"]: [n["text"] for n in d["notes"]]
        for d in answer["data"]["workspace"]["documents"]["documents"]
    }
    assert listed_notes == {"doc_1": ["Paid by card", "Ask for the invoice"], "doc_2": []}
    node = await gql(
        client, '{ node(id: "doc_1") { ... on Document { notes { text } } } }', None, bob.headers()
    )
    assert "errors" in node or node["data"]["node"] is None, node
