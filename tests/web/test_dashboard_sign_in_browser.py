"""Signing in to the dashboard from several browsers, in headless Chromium against a live
``fincap serve``: the dashboard is the server's own OAuth client, so no browser registers one,
and, being the person, it never shows a consent page (one workspace: nothing to choose), in the
first browser, the next, and after a restart."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pymongo
import pytest

from persistence.client import DEFAULT_DATABASE
from persistence.embedded import running_server_uri
from tests.requires import requires
from tests.web.dashboard_live import EMAIL, PASSWORD, Page, chromium, prepare, serving

pytestmark = [requires("chromium"), pytest.mark.wire]


@contextmanager
def fresh_browser(page: Page) -> Iterator[Page]:
    """A tab in a browser context of its own (no cookies nor storage shared: another
    browser, as far as the server can tell)."""
    devtools = page.devtools
    context = devtools.call("Target.createBrowserContext")["browserContextId"]
    try:
        created = devtools.call("Target.createTarget", url="about:blank", browserContextId=context)
        target = created["targetId"]
        session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)
        tab = Page(devtools, session["sessionId"])
        tab.call("Page.enable")
        yield tab
    finally:
        devtools.call("Target.disposeBrowserContext", browserContextId=context)


def sign_in(tab: Page, base: str) -> bool:
    """Sign in on the dashboard as a person does; whether a consent page was shown (it is
    then allowed)."""
    tab.go(f"{base}/app/")
    tab.wait("!!document.querySelector('#oauth-sign-in')")
    tab.click("#oauth-sign-in")
    tab.wait("location.pathname === '/v1/oauth/sign-in' && !!document.querySelector('#email')")
    tab.fill("#email", EMAIL)
    tab.fill("#password", PASSWORD)
    tab.js("document.querySelector('form').submit()")
    signed_in = (
        "location.pathname === '/app/' && !!document.querySelector('#sign-out') "
        "&& document.querySelector('h1')?.innerText === 'Corner Shop'"
    )
    tab.wait(f"!!document.querySelector('button[value=allow]') || ({signed_in})")
    asked = bool(tab.js("!!document.querySelector('button[value=allow]')"))
    if asked:
        tab.click("button[value=allow]")
        tab.wait(signed_in)
    assert tab.js("location.search") == ""  # the code left the address bar
    return asked


def oauth_clients(data_dir: Path) -> list[dict[str, Any]]:
    """The stored OAuth clients, read from the running server's store."""
    uri = running_server_uri(data_dir)
    assert uri is not None
    with pymongo.MongoClient(uri, directConnection=True) as client:
        return list(client[DEFAULT_DATABASE]["oauth_clients"].find({}))


def test_browsers_share_one_client_and_no_consent_across_a_restart(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    data_dir = tmp_path_factory.mktemp("sign-in") / "data"
    boot = prepare(data_dir, 0)
    with chromium(tmp_path_factory.mktemp("chromium")) as page:
        with serving(data_dir, boot) as live:
            with fresh_browser(page) as first:
                assert not sign_in(first, live.base)  # no consent page (seen asking before)
            with fresh_browser(page) as second:
                assert not sign_in(second, live.base)
                assert second.js("window.__fincapRequests") >= 1
            stored = oauth_clients(data_dir)
            assert len(stored) == 1, stored
            assert stored[0]["metadata"]["redirect_uris"] == [f"{live.base}/app/"]
            client_id = stored[0]["_id"]
        with serving(data_dir, boot) as restarted:
            with fresh_browser(page) as third:
                assert not sign_in(third, restarted.base)
            after = oauth_clients(data_dir)
    assert [c["_id"] for c in after] == [client_id]
    assert after[0]["metadata"]["redirect_uris"] == [f"{restarted.base}/app/"]
