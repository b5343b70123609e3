"""MongoDB round trips of a nested GraphQL query do not grow with the number of documents.

Counted with pymongo command monitoring on a real wire connection (SecantusDB).
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from pymongo import monitoring

from persistence.client import connect
from persistence.embedded import EmbeddedServer
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import asgi_client, make_tenant
from tests.documents.conftest import doc
from tests.graphql.helpers import gql

pytestmark = pytest.mark.wire

NESTED = """
query Nested($limit: Int!) {
  documentsSearch(input: {useSearch: false, limit: $limit}) {
    documents {
      id merchant
      duplicates { merchant duplicateOf { merchant } }
      duplicateOf { merchant }
      editHistory { field }
    }
  }
}
"""


class CommandCounter(monitoring.CommandListener):
    """The commands the driver sent, by name."""

    def __init__(self) -> None:
        self.commands: list[str] = []

    def started(self, event: monitoring.CommandStartedEvent) -> None:
        self.commands.append(event.command_name)

    def succeeded(self, event: monitoring.CommandSucceededEvent) -> None:
        pass

    def failed(self, event: monitoring.CommandFailedEvent) -> None:
        pass


@pytest.fixture
async def counted_store(
    embedded_server: EmbeddedServer,
) -> AsyncIterator[tuple[Store, CommandCounter]]:
    counter = CommandCounter()
    name = f"wire_{uuid.uuid4().hex[:10]}"
    client, db = connect(embedded_server.uri, name, event_listeners=[counter])
    store = Store(db)
    await store.ensure_indexes()
    yield store, counter
    await client.drop_database(name)
    client.close()


# Recent, as a dashboard's documents are: the newest-first read finds them in its first window.
RECENT = date.today() - timedelta(days=1)


def pairs(count: int) -> list[dict[str, Any]]:
    """``count`` originals (the newest: the page) and one older duplicate of each.

    Every document has two edits. Ids carry ``count``: unique across workspaces, like real ones.
    """
    edits = [
        {
            "field": name,
            "oldValue": None,
            "newValue": "x",
            "editedBy": "usr_test",
            "editedAt": datetime(2025, 1, 1, tzinfo=UTC),
            "via": "documents.update",
        }
        for name in ("merchant", "category")
    ]
    documents = []
    for i in range(count):
        original, duplicate = f"doc_{count}_{i:03}", f"dup_{count}_{i:03}"
        documents += [
            doc(
                original,
                merchant=f"Shop {i}",
                docDate=RECENT,
                editHistory=edits,
                duplicates=[duplicate],
            ),
            doc(
                duplicate,
                merchant=f"Copy {i}",
                docDate=RECENT - timedelta(days=2),
                editHistory=edits,
                duplicateOf=original,
            ),
        ]
    return documents


async def round_trips(
    store: Store, counter: CommandCounter, registry: Registry, count: int
) -> tuple[list[str], dict[str, Any]]:
    tenant = await make_tenant(store, f"user{count}@example.com", f"Org {count}")
    await store.documents.writes.insert_many(tenant.org_id, pairs(count))
    async with asgi_client(store, registry) as http:
        counter.commands.clear()
        body = await gql(http, NESTED, {"limit": count}, tenant.headers())
        sent = list(counter.commands)
    assert "errors" not in body, body
    return sent, body


async def test_round_trips_do_not_grow_with_the_list(
    counted_store: tuple[Store, CommandCounter], registry: Registry
) -> None:
    store, counter = counted_store
    small, small_body = await round_trips(store, counter, registry, 5)
    large, large_body = await round_trips(store, counter, registry, 50)
    assert len(large_body["data"]["documentsSearch"]["documents"]) == 50
    nested = {d["id"]: d for d in large_body["data"]["documentsSearch"]["documents"]}
    assert nested["doc_50_010"] == {
        "id": "doc_50_010",
        "merchant": "Shop 10",
        "duplicates": [{"merchant": "Copy 10", "duplicateOf": {"merchant": "Shop 10"}}],
        "duplicateOf": None,
        "editHistory": [{"field": "merchant"}, {"field": "category"}],
    }
    assert len(small_body["data"]["documentsSearch"]["documents"]) == 5
    # The same commands whatever the size: key, its use (each tenant's key is new here: its
    # first use is written; later ones at most once a minute, resolvers.framework.auth),
    # membership, the workspace's documents per month
    # (a first read in the process sizes its newest-first window from them) and page for the
    # capability (the links reuse key and membership from the auth cache; the page reads what
    # the query selects, the stored links included), the page's edit history (its own
    # collection); then one batch for the duplicates and one for their originals (the page's
    # documents, read whole this time), each a find of the documents and one of their edit
    # history.
    # The first call in the process also asks the server once whether it bounds a hinted read
    # (``persistence.plans``: buildInfo); never again.
    assert small.count("buildInfo") == 1 and "buildInfo" not in large, (small, large)
    small.remove("buildInfo")
    assert small == large, (small, large)
    assert len(large) == 10 and large.count("update") == 1, " ".join(large)
