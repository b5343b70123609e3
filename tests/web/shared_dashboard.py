"""One ``fincap serve`` and one Chromium for all the browser modules an xdist worker runs, each
module in a workspace of its own, owned by an account of its own, and in a browser context of
its own (cookies, storage, cache and connections not shared): issue 36 item 7.

Before, each browser module started its own server (with its embedded store) and its own
Chromium: 13-18 s of set-up a module, more under load. The modules that restart the server or
need settings of their own (a fake provider) keep their own (``serving``, ``chromium``);
``test_live_browser.py`` keeps its own Chromium (its extra tabs share the default context)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.browser import DevTools, start_chromium
from tests.web.dashboard_live import PASSWORD, LiveDashboard, Page, cli, open_tab, serving


@dataclass
class SharedDashboard:
    """The worker's server (its address and data directory) and its browser."""

    base: str
    data_dir: Path
    devtools: DevTools


@contextmanager
def shared_dashboard(temp: Any) -> Iterator[SharedDashboard]:
    """The server (with no account yet) and the browser; ``temp`` is ``tmp_path_factory``."""
    data_dir = temp.mktemp("shared-dashboard") / "data"
    data_dir.mkdir()
    process, devtools = start_chromium(temp.mktemp("shared-chromium"))
    try:
        with serving(data_dir, {"apiKey": "", "orgId": ""}) as server:
            yield SharedDashboard(server.base, data_dir, devtools)
    finally:
        process.terminate()
        process.wait(10)


def workspace_on(
    shared: SharedDashboard, name: str, documents: int, password: bool = False
) -> LiveDashboard:
    """A new owner ``NAME@example.com`` with a workspace "Corner Shop" and ``documents`` demo
    documents (and ``PASSWORD`` when ``password``), made by the operator's commands on the
    running server's store (they join it, as they join any ``fincap serve``'s)."""
    email = f"{name}@example.com"
    boot = cli(
        shared.data_dir, "admin", "bootstrap", "--email", email, "--workspace", "Corner Shop"
    )
    if password:
        cli(shared.data_dir, "admin", "set-password", "--email", email, stdin=PASSWORD + "\n")
    if documents:
        cli(shared.data_dir, "demo", "load", "--org", boot["orgId"], "--count", str(documents))
    return LiveDashboard(shared.base, boot["apiKey"], boot["orgId"], shared.data_dir, email)


@contextmanager
def own_context(shared: SharedDashboard) -> Iterator[Page]:
    """A tab in a new browser context of the shared browser (nothing of another module's
    visits: no storage, cookies, cache or open connections), closed with the context. The
    browser's event log starts empty, as a new browser's does (the explorer's tests read it)."""
    context = shared.devtools.call("Target.createBrowserContext")["browserContextId"]
    shared.devtools.events.clear()
    try:
        yield open_tab(shared.devtools, context)
    finally:
        shared.devtools.call("Target.disposeBrowserContext", browserContextId=context)


@contextmanager
def signed_in_context(shared: SharedDashboard, live: LiveDashboard) -> Iterator[Page]:
    """A tab of its own browser context, signed in with the owner's key in ``live``."""
    with own_context(shared) as page:
        page.sign_in(live.base, live.api_key, live.org_id)
        yield page


@contextmanager
def workspace_with_tab(
    shared: SharedDashboard, name: str, documents: int
) -> Iterator[tuple[LiveDashboard, Page]]:
    """A module's workspace on the shared server and a tab signed in there with its owner's key."""
    live = workspace_on(shared, name, documents)
    with signed_in_context(shared, live) as page:
        yield live, page
