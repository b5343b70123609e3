"""A person's first hour with keys, in headless Chromium (en-US and de-DE) against a live
``fincap serve`` with a fake Xero on loopback (issue 38, items 1, 2 and 6):

- the one-time link ``fincap admin sign-in-link`` prints signs in once (no password, no consent
  page) and a second use is refused with a plain reason;
- the owner sends a document to Xero from the Documents page (the dashboard's sign-in holds
  every scope the role allows: the old six-scope sign-in failed with "This credential lacks the
  scope: read_integrations");
- the keys screen lists each key's origin, scopes, workspace and last use, makes a key with
  chosen scopes, and revokes the bootstrap key;
- a key made in the dashboard still works after signing out (it was refused with 401 before).

The owner has two workspaces, each made by ``fincap admin bootstrap`` with its own bootstrap
key: each locale's run works in one of them and revokes that one's bootstrap key.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integrations.fakes import FakeXero
from tests.requires import requires
from tests.web.dashboard_live import LiveDashboard, Page, cli
from tests.web.shared_dashboard import SharedDashboard, own_context, workspace_on
from tests.web.test_dashboard_sign_in_browser import fresh_browser

pytestmark = [requires("chromium"), pytest.mark.wire]
LOCALES = {"en-US": "Corner Shop", "de-DE": "Eckladen"}
SIGNED_IN = (
    "location.pathname === '/app/' && !!document.querySelector('#sign-out') "
    "&& !document.querySelector('#nav').hidden"
)


def key_row(text: str) -> str:
    """The keys table's row that shows ``text`` (a JavaScript expression)."""
    return (
        "[...document.querySelectorAll('#keys tbody tr')]"
        f".find(r => r.innerText.includes({json.dumps(text)}))"
    )


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    """The owner (with a password) and the en-US run's workspace on the shared server."""
    return workspace_on(dashboard, "keys", 3, password=True)


@pytest.fixture(scope="module")
def workspaces(live: LiveDashboard, dashboard: SharedDashboard) -> dict[str, Any]:
    """The data directory and, per locale, the workspace and bootstrap output it works with:
    the owner's second workspace made by the operator's command on the running server's store."""
    boots = {"en-US": {"apiKey": live.api_key, "orgId": live.org_id}}
    boots["de-DE"] = cli(
        dashboard.data_dir, "admin", "bootstrap", "--email", live.email, "--workspace", "Eckladen"
    )
    cli(dashboard.data_dir, "demo", "load", "--org", boots["de-DE"]["orgId"], "--count", "3")
    return {"data_dir": dashboard.data_dir, "boots": boots}


@pytest.fixture(scope="module", autouse=True)
def xero(workspaces: dict[str, Any], dashboard: SharedDashboard) -> FakeXero:
    """The owner's two workspaces' own fake Xero (what it receives is theirs alone)."""
    return dashboard.xero.of(*(boot["orgId"] for boot in workspaces["boots"].values()))


@pytest.fixture(scope="module")
def page(dashboard: SharedDashboard) -> Iterator[Page]:
    """A tab of the module's browser context: the tests open contexts of their own from it."""
    with own_context(dashboard) as tab:
        yield tab


def call(live: LiveDashboard, slug: str, body: dict[str, Any], key: str, org: str) -> Any:
    response = httpx.post(
        f"{live.base}/v1/capabilities/{slug}",
        json=body,
        headers={"Authorization": f"Bearer {key}", "X-Service-Org-Id": org},
        timeout=30,
    )
    return response


def connect_xero(live: LiveDashboard, key: str, org: str) -> None:
    """The OAuth dance with the fake Xero, and the approval gate on sends switched off, so a
    send goes out at once."""
    live.connect_xero(key, org)
    ungated = call(
        live,
        "approvals.configure",
        {"capabilitySlug": "integrations.send", "gated": False},
        key,
        org,
    )
    assert ungated.status_code == 200, ungated.text


def link_token(data_dir: Path, email: str, org: str) -> str:
    """A fresh one-time link from the operator's command for ``email`` in ``org``; its token
    (the fragment's end)."""
    made = cli(data_dir, "admin", "sign-in-link", "--email", email, "--org", org)
    return str(made["signInUrl"]).rsplit("/", 1)[1]


def rows_text(tab: Page) -> list[str]:
    return list(tab.js("[...document.querySelectorAll('#keys tbody tr')].map(r => r.innerText)"))


@pytest.mark.parametrize("locale", list(LOCALES))
def test_link_sign_in_send_to_xero_keys_and_sign_out(
    live: LiveDashboard, page: Page, workspaces: dict[str, Any], xero: FakeXero, locale: str
) -> None:
    data_dir, boot = workspaces["data_dir"], workspaces["boots"][locale]
    name, org, boot_key = LOCALES[locale], boot["orgId"], boot["apiKey"]
    connect_xero(live, boot_key, org)
    token = link_token(data_dir, live.email, org)
    with fresh_browser(page) as tab:
        tab.call("Emulation.setLocaleOverride", locale=locale)
        # The link: signed in, in the link's workspace, asked nothing; the token left the address.
        tab.go(f"{live.base}/app/#/sign-in-link/{token}")
        tab.wait(f"{SIGNED_IN} && document.querySelector('h1')?.innerText === {json.dumps(name)}")
        assert token not in tab.js("location.href")
        assert tab.js("JSON.parse(sessionStorage.getItem('fincap.session')).kind") == "oauth"

        # Send one document to the fake Xero from the Documents page.
        tab.go(f"{live.base}/app/#/documents")
        tab.wait("document.querySelectorAll('#doc-rows tr').length > 0")
        before = xero.calls.count(("PUT", "/api.xro/2.0/Invoices"))
        tab.js(
            "(b => { b.checked = true; b.dispatchEvent(new Event('change')); })"
            "(document.querySelector('.doc-table .pick-row'))"
        )
        tab.wait("!document.querySelector('#bulk-send').disabled")
        assert not tab.js("!!document.querySelector('#bulk-blocked')")  # nothing held back
        tab.click("#bulk-send")
        tab.wait("!!document.querySelector('#bulk-integration option')")
        assert "Xero: Acme Ltd" in tab.js("document.querySelector('#bulk-integration').innerText")
        tab.js("document.querySelector('#bulk-send-form').requestSubmit()")
        tab.wait("document.querySelector('#bulk-status').innerText.includes('1 queued')")
        assert "lacks the scope" not in tab.js("document.body.innerText")
        deadline = time.monotonic() + 60
        while xero.calls.count(("PUT", "/api.xro/2.0/Invoices")) == before:
            assert time.monotonic() < deadline, xero.calls
            time.sleep(0.2)

        # The keys screen: the bootstrap key is there, with where it came from and its use.
        tab.go(f"{live.base}/app/#/keys")
        tab.wait("!!document.querySelector('#keys') && !!document.querySelector('#key-scopes')")
        boot_prefix = boot_key[:7]
        row = key_row(boot_prefix)
        assert tab.js(f"!!{row}"), rows_text(tab)
        assert tab.js(f"{row}.querySelector('[data-col=origin]').innerText") == "CLI bootstrap"
        assert tab.js(f"{row}.querySelector('[data-col=scopes]').innerText") == "everything"
        assert tab.js(f"{row}.querySelector('[data-col=where]').innerText") == "all workspaces"
        assert tab.js(f"{row}.querySelector('[data-col=last-used]').innerText") != "never"

        # A key with chosen scopes.
        tab.fill("#key-name", f"reader {locale}")
        tab.click("#scopes-some")
        tab.js(
            "(b => { b.checked = true; })(document.querySelector('[data-scope=read_documents]'))"
        )
        tab.js("document.querySelector('#create-key').requestSubmit()")
        secret = tab.wait("document.querySelector('#new-secret')?.innerText")
        assert secret.startswith("sk_")
        mine = key_row(f"reader {locale}")
        assert tab.js(f"{mine}.querySelector('[data-col=scopes]').innerText") == "read_documents"
        assert tab.js(f"{mine}.querySelector('[data-col=origin]').innerText") == "the dashboard"
        assert tab.js(f"{mine}.querySelector('[data-col=where]').innerText") == "this workspace"

        # Revoke the bootstrap key from here.
        tab.js(f"{row}.querySelector('[data-revoke]').click()")
        tab.wait("document.activeElement?.id === 'confirm-revoke'")
        tab.press("Enter")
        tab.wait(f"!{row}")
        assert call(live, "workspaces.list", {}, boot_key, org).status_code == 401

        # Sign out: the session ends, the key made in it does not.
        tab.click("#sign-out")
        tab.wait("!!document.querySelector('#key-form')")
    searched = call(live, "documents.search", {"limit": 1}, secret, org)
    assert searched.status_code == 200, searched.text
    assert call(live, "rules.list", {}, secret, org).status_code == 403  # only what was chosen

    # The same link again, in another browser: refused, saying so, on the sign-in page.
    with fresh_browser(page) as again:
        again.call("Emulation.setLocaleOverride", locale=locale)
        again.go(f"{live.base}/app/#/sign-in-link/{token}")
        again.wait("!!document.querySelector('.sign-in .error')")
        said = again.js("document.querySelector('.sign-in .error').innerText")
        assert "already used or has expired" in said and "sign-in-link" in said
        # Opened again in a tab already on the dashboard (only the fragment changes): the same.
        again.js("document.querySelector('.sign-in .error').remove()")
        again.js(f"location.hash = '#/sign-in-link/{token}'")
        again.wait("!!document.querySelector('.sign-in .error')")
        assert "already used" in again.js("document.querySelector('.sign-in .error').innerText")
        assert not again.js(
            "!!document.querySelector('#sign-out') && !document.querySelector('#nav').hidden"
        )
