"""Open the store the settings name: ``MONGODB_URI``, else the embedded server."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from app.host.config import Settings
from engines.ranking import embeddings
from persistence.client import connect
from persistence.embedded import shared_embedded_store
from persistence.embedded_supervisor import supervising
from persistence.health import StoreHealth
from persistence.store import Store
from resolvers.services.documents.search_indexes import model_vectorizer


@contextlib.asynccontextmanager
async def open_store(settings: Settings, *, publish: bool = True) -> AsyncIterator[Store]:
    """A connected ``Store`` with its indexes; the embedded server is stopped on exit.

    ``publish`` lets other fincap processes on the same data directory join an embedded server
    this process started (``fincap serve``), which this process then keeps running (started
    again when it dies or reports a fatal error); admin commands keep theirs private. The
    driver's waits are bounded by ``FINCAP_STORE_TIMEOUT_SECONDS``, and ``store.health``
    follows what the driver sees of the store.
    """
    health = StoreHealth()
    async with contextlib.AsyncExitStack() as stack:
        uri = settings.mongodb_uri
        if uri is None:
            shared = stack.enter_context(shared_embedded_store(settings.data_dir, publish=publish))
            uri = shared.uri
            await stack.enter_async_context(supervising(shared, health))
        client, db = connect(
            uri, timeout_s=settings.store_timeout_s, event_listeners=[health.listener]
        )
        stack.callback(client.close)
        store = Store(db, health=health)
        if settings.embeddings and embeddings.available():
            store.documents.collection.vectorize = model_vectorizer()
        await store.ensure_indexes()
        yield store
