"""Connected mailboxes against a real IMAP server (Dovecot, started by the tests): connect,
poll into documents and activity, no double import after a restart, errors on the connection
and in activity, and activity.search through IMAP SEARCH. Wire tests (GridFS)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant
from tests.graphql.helpers import gql
from tests.requires import requires
from tests.sources.conftest import (
    SourceApp,
    call,
    document,
    fixture,
    open_source_app,
    source_settings,
)
from tests.sources.dovecot import Imap, running_dovecot
from tests.sources.mail import message

pytestmark = [
    pytest.mark.wire,
    requires("dovecot"),
]
USER, PASSWORD = "alice@mail.test", "app-password-1"


@pytest.fixture(scope="module")
def imap() -> Iterator[Imap]:
    # Not pytest's tmp_path: Dovecot's unprivileged processes must be able to reach the folder.
    root = Path(tempfile.mkdtemp(prefix="fincap-imap-"))
    os.chmod(root, 0o755)
    with running_dovecot(root, {USER: PASSWORD, "bob@mail.test": "bobs-password"}) as server:
        yield server


def connect_body(imap: Imap, **overrides: Any) -> dict[str, Any]:
    return {
        "server": imap.host,
        "port": imap.port,
        "security": "none",
        "username": USER,
        "password": PASSWORD,
        "importSince": "2000-01-01",
        **overrides,
    }


async def test_a_mailbox_is_polled_into_documents_without_double_imports(
    wire_app: SourceApp,
    imap: Imap,
    tenants: tuple[Tenant, Tenant],
    wire_store: Store,
    registry: Registry,
) -> None:
    alice, bob = tenants
    pdf = fixture("text-layer.pdf")
    imap.append(
        USER,
        message(
            to=USER,
            subject="Northwind invoice March",
            attachments=[("northwind.pdf", "application/pdf", pdf)],
            message_id="<nw-march@northwind.test>",
        ),
    )
    imap.append(
        USER,
        message(
            to=USER, subject="Team lunch", text="See you at noon", message_id="<lunch@team.test>"
        ),
    )

    mailbox = await call(wire_app.http, alice, "mailboxes.connect", connect_body(imap))
    assert mailbox["status"] == "active" and mailbox["server"] == imap.host
    assert "password" not in mailbox and mailbox["importSince"] == "2000-01-01"
    # The password is stored encrypted, not in clear.
    raw = await wire_store.db["mailboxes"].find_one({"_id": mailbox["id"]})
    assert raw is not None and PASSWORD not in str(raw) and raw["passwordEncrypted"]

    # The connect queued the poller; the workers run it, then the document.
    await wire_app.workers().run_until_idle()
    items = {
        i["messageId"]: i
        for i in await wire_store.db["activity"].find({"workspaceId": alice.org_id}).to_list(None)
    }
    assert set(items) == {"<nw-march@northwind.test>", "<lunch@team.test>"}
    invoice = items["<nw-march@northwind.test>"]
    assert invoice["sourceType"] == "email" and invoice["status"] == "processed", invoice[
        "reasoning"
    ]
    assert invoice["details"]["mailboxId"] == mailbox["id"] and invoice["details"]["uid"] == 1
    doc = await document(wire_app.http, alice, invoice["documentIds"][0])
    assert doc["source"] == "email" and doc["merchant"] == "Northwind Consulting GmbH"
    assert items["<lunch@team.test>"]["status"] == "skipped"

    listed = (await call(wire_app.http, alice, "mailboxes.list", {}))["mailboxes"]
    assert listed[0]["imported"] == 2 and listed[0]["lastPolledAt"] is not None
    assert (await call(wire_app.http, bob, "mailboxes.list", {}))["mailboxes"] == []

    # A restart: a new app and new workers over the same database read nothing twice...
    async for restarted in open_source_app(wire_store, registry, source_settings()):
        # (the keyring of the first app decrypts the password: the same server secret)
        restarted.app.state.services = wire_app.services
        polled = await call(restarted.http, alice, "mailboxes.poll", {"id": mailbox["id"]})
        assert polled["imported"] == 0
        # ...and a new message is taken once.
        imap.append(
            USER,
            message(
                to=USER,
                subject="Second invoice",
                attachments=[("again.pdf", "application/pdf", pdf)],
                message_id="<nw-april@northwind.test>",
            ),
        )
        polled = await call(restarted.http, alice, "mailboxes.poll", {"id": mailbox["id"]})
        assert polled["imported"] == 1 and polled["mailbox"]["imported"] == 3
        assert (await call(restarted.http, alice, "mailboxes.poll", {"id": mailbox["id"]}))[
            "imported"
        ] == 0
    # Even with the bookmark lost (a renumbered folder), message ids prevent a double import.
    await wire_store.db["mailboxes"].update_one({"_id": mailbox["id"]}, {"$set": {"lastUid": 0}})
    again = await call(wire_app.http, alice, "mailboxes.poll", {"id": mailbox["id"]})
    assert again["imported"] == 0
    assert await wire_store.activity.count(alice.org_id) == 3


async def test_a_wrong_password_is_refused_at_connect_and_nothing_is_saved(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant], wire_store: Store
) -> None:
    alice, _ = tenants
    response = await wire_app.http.post(
        "/v1/capabilities/mailboxes.connect",
        json=connect_body(imap, password="wrong"),
        headers=alice.headers(),
    )
    assert response.status_code == 400 and "Could not connect" in response.text
    assert "AUTHENTICATIONFAILED" in response.text or "failed" in response.text.lower()
    assert await wire_store.db["mailboxes"].count_documents({}) == 0
    assert await wire_store.db["jobs"].count_documents({}) == 0


async def test_connection_errors_show_on_the_mailbox_and_in_activity(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant], wire_store: Store
) -> None:
    alice, _ = tenants
    mailbox = await call(wire_app.http, alice, "mailboxes.connect", connect_body(imap))
    # The password changes on the server side (or the app password is revoked).
    await wire_store.db["mailboxes"].update_one(
        {"_id": mailbox["id"]},
        {
            "$set": {
                "passwordEncrypted": wire_app.services.keyring.encrypt(
                    "mailbox-password", b"revoked", mailbox["id"].encode()
                )
            }
        },
    )
    for _ in range(2):
        polled = await call(wire_app.http, alice, "mailboxes.poll", {"id": mailbox["id"]})
        assert polled["mailbox"]["status"] == "error"
        assert "refused" in polled["mailbox"]["lastError"]
        assert polled["mailbox"]["lastErrorReason"] == "sign_in_refused"
    failures = (
        await wire_store.db["activity"]
        .find({"workspaceId": alice.org_id, "status": "failed"})
        .to_list(None)
    )
    assert len(failures) == 1  # once per change of error, not once per poll
    assert failures[0]["sourceType"] == "email" and "refused" in failures[0]["reasoning"]
    # Back to a working password: the mailbox is active again.
    await wire_store.db["mailboxes"].update_one(
        {"_id": mailbox["id"]},
        {
            "$set": {
                "passwordEncrypted": wire_app.services.keyring.encrypt(
                    "mailbox-password", PASSWORD.encode(), mailbox["id"].encode()
                )
            }
        },
    )
    polled = await call(wire_app.http, alice, "mailboxes.poll", {"id": mailbox["id"]})
    assert polled["mailbox"]["status"] == "active" and polled["mailbox"]["lastError"] is None
    assert polled["mailbox"]["lastErrorReason"] is None


async def test_activity_search_asks_the_mailbox_then_the_log(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant], wire_store: Store
) -> None:
    alice, bob = tenants
    imap.append(
        "bob@mail.test",
        message(
            to="bob@mail.test",
            subject="Quarterly Fabrikam bill",
            attachments=[("f.pdf", "application/pdf", fixture("text-layer.pdf"))],
            message_id="<fabrikam-q1@fabrikam.test>",
            text="Fabrikam statement attached",
        ),
    )
    body = connect_body(imap, username="bob@mail.test", password="bobs-password")
    mailbox = await call(wire_app.http, bob, "mailboxes.connect", body)
    await wire_app.workers().run_until_idle()

    found = await call(wire_app.http, bob, "activity.search", {"query": "fabrikam"})
    assert found["providers"] == [
        {
            "mailboxId": mailbox["id"],
            "username": "bob@mail.test",
            "server": imap.host,
            "status": "ok",
            "matched": 1,
            "error": None,
        }
    ]
    assert found["total"] == 1
    item = found["items"][0]
    assert item["sourceType"] == "email" and item["status"] == "processed"
    assert item["messageId"] == "<fabrikam-q1@fabrikam.test>" and item["documentIds"]
    assert item["source"]["fromProvider"] is True
    assert item["source"]["subject"] == "Quarterly Fabrikam bill"
    assert item["source"]["sender"] == "carol@example.org"
    assert "Fabrikam statement attached" in item["source"]["snippet"]
    # Without source details, no reload.
    bare = await call(
        wire_app.http, bob, "activity.search", {"query": "fabrikam", "includeSourceDetails": False}
    )
    assert bare["items"][0]["source"] is None
    # Alice's workspace sees none of it.
    assert (await call(wire_app.http, alice, "activity.search", {"query": "fabrikam"}))[
        "total"
    ] == 0

    # The provider fails (the server is unreachable): reported, not a 500; stored activity still
    # answers.
    await wire_store.db["mailboxes"].update_one({"_id": mailbox["id"]}, {"$set": {"port": 1}})
    broken = await call(wire_app.http, bob, "activity.search", {"query": "fabrikam"})
    assert broken["providers"][0]["status"] == "error"
    assert broken["providers"][0]["error"] == f"could not connect to {imap.host}:1"
    assert broken["providers"][0]["errorReason"] == "unreachable"
    assert broken["total"] == 1  # from the stored subject
    graph = await gql(
        wire_app.http,
        '{ activitySearch(input: {query: "fabrikam", sourceTypes: [email]}) '
        "{ total providers { status } items { sourceType status } } }",
        headers=bob.headers(),
    )
    assert graph["data"]["activitySearch"]["providers"] == [{"status": "error"}]
    assert graph["data"]["activitySearch"]["items"] == [
        {"sourceType": "email", "status": "processed"}
    ]
    assert date.today()  # (the poll date is today's; nothing else is time-dependent)


async def test_disconnect_forgets_the_mailbox(
    wire_app: SourceApp, imap: Imap, tenants: tuple[Tenant, Tenant], wire_store: Store
) -> None:
    alice, bob = tenants
    mailbox = await call(wire_app.http, alice, "mailboxes.connect", connect_body(imap))
    other = await wire_app.http.post(
        "/v1/capabilities/mailboxes.disconnect", json={"id": mailbox["id"]}, headers=bob.headers()
    )
    assert other.status_code == 404
    listed = await gql(
        wire_app.http,
        "{ mailboxesList { mailboxes { id server username status importSince } } }",
        headers=alice.headers(),
    )
    assert listed["data"]["mailboxesList"]["mailboxes"] == [
        {
            "id": mailbox["id"],
            "server": imap.host,
            "username": USER,
            "status": "active",
            "importSince": "2000-01-01",
        }
    ]
    gone = await gql(
        wire_app.http,
        "mutation($id: String!) { mailboxesDisconnect(input: {id: $id}) { id disconnected } }",
        {"id": mailbox["id"]},
        headers=alice.headers(),
    )
    assert gone["data"]["mailboxesDisconnect"] == {"id": mailbox["id"], "disconnected": True}
    assert await wire_store.db["mailboxes"].count_documents({}) == 0
    # The scheduled poll finds no mailbox and ends.
    assert await wire_app.workers().run_until_idle() == 1
    assert await wire_store.jobs.pending_count() == 0
