"""The mailbox poller's schedule on the in-memory store: it keeps running whatever a read meets
(no IMAP server needed: these reads fail before connecting)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from persistence.store import Store
from resolvers.resources.mailboxes import POLL_MAILBOX
from tests.clock import ManualClock
from tests.conftest import Tenant, worker_pool


async def add_mailbox(store: Store, tenant: Tenant, encrypted: str) -> str:
    mailbox_id = store.mailboxes.new_id()
    await store.mailboxes.create(
        tenant.org_id,
        {
            "_id": mailbox_id,
            "host": "imap.example.test",
            "port": 993,
            "security": "tls",
            "username": "ann@example.test",
            "folder": "INBOX",
            "importSince": datetime(2024, 1, 1, tzinfo=UTC),
            "passwordEncrypted": encrypted,
            "createdBy": tenant.user_id,
        },
    )
    await store.jobs.enqueue(
        tenant.org_id, POLL_MAILBOX, {"mailboxId": mailbox_id}, dedupe_key=f"mailbox:{mailbox_id}"
    )
    return mailbox_id


async def test_an_undecryptable_password_is_an_error_on_the_mailbox_and_the_poller_lives_on(
    store: Store, alice: Tenant
) -> None:
    mailbox_id = await add_mailbox(store, alice, "not-a-ciphertext")
    assert await worker_pool(store).run_until_idle() == 1
    mailbox = await store.mailboxes.get(alice.org_id, mailbox_id)
    assert mailbox is not None and mailbox["status"] == "error"
    assert "cannot be decrypted" in mailbox["lastError"]
    assert mailbox["lastErrorReason"] == "secret_unreadable"
    items = await store.db["activity"].find({"workspaceId": alice.org_id}).to_list(None)
    assert [(i["sourceType"], i["status"]) for i in items] == [("email", "failed")]
    assert items[0]["details"]["errorReason"] == "secret_unreadable"
    assert "FINCAP_SECRET_KEY" in items[0]["reasoning"]
    # The job is queued again for the next interval (300 s), not dead.
    job = await store.db["jobs"].find_one({"kind": POLL_MAILBOX})
    assert job is not None and job["status"] == "queued" and job["attempts"] == 0
    due = job["runAfter"].replace(tzinfo=UTC) - datetime.now(UTC)
    assert timedelta(seconds=250) < due <= timedelta(seconds=301)

    # The next run, the same error: the mailbox says so, the activity log does not repeat it.
    clock = ManualClock()
    clock.advance(301)
    later = Store(store.db, clock)
    assert await worker_pool(later).run_one("next-interval")
    assert await store.db["activity"].count_documents({"workspaceId": alice.org_id}) == 1


async def test_a_disconnected_mailbox_ends_its_schedule(store: Store, alice: Tenant) -> None:
    mailbox_id = await add_mailbox(store, alice, "x")
    assert await store.mailboxes.delete(alice.org_id, mailbox_id)
    assert await worker_pool(store).run_until_idle() == 1
    job = await store.db["jobs"].find_one({"kind": POLL_MAILBOX})
    assert job is not None and job["status"] == "done"
