"""One ``fincap serve`` and one Chromium for all the browser modules an xdist worker runs, each
module in a workspace of its own, owned by an account of its own, and in a browser context of
its own (cookies, storage, cache and connections not shared): issue 36 item 7.

Before, each browser module started its own server (with its embedded store) and its own
Chromium: 13-18 s of set-up a module, more under load. The server is pointed at a fake Xero of
the worker's (``XeroPerWorkspace``), in which each module's workspaces have a Xero of their own
(``xero_of``): what it received, the bills it holds, the failures it is told to inject. The
modules that restart the server or need other settings keep their own (``serving``,
``chromium``); ``test_live_browser.py`` keeps its own Chromium (its extra tabs share the default
context)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.browser import DevTools, start_chromium
from tests.integrations.fakes import FakeProvider, FakeXero
from tests.integrations.fakes import serving as fake_serving
from tests.web.dashboard_live import (
    PASSWORD,
    LiveDashboard,
    Page,
    cli,
    fake_xero_env,
    open_tab,
    serving,
)


def workspace_in(state: str) -> str:
    """The workspace a connect flow's ``state`` names ("" for none): fincap signs the state
    readable, not secret (URL-safe base64 of a JSON payload whose ``w`` is the workspace, a dot,
    the tag)."""
    payload = state.rpartition(".")[0]
    try:
        named = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (binascii.Error, ValueError):
        return ""
    return str(named.get("w", "")) if isinstance(named, dict) else ""


@dataclass
class XeroPerWorkspace(FakeProvider):
    """One fake Xero server for all the modules an xdist worker runs, each workspace that asked
    (``of``) with a ``FakeXero`` of its own: its own grants, calls, bills, contacts and injected
    failures. A request goes to the fake of the workspace it belongs to: the consent by the
    workspace its state names, a token exchange by the code or refresh token one of them
    issued, an API call by the access token. So a module's assertions and failures see its own
    traffic only, also the requests the server still sends for another module's workspace (a
    queued export, a retry) while it runs. What belongs to no workspace is refused (400 or 401,
    as Xero would) and recorded in ``calls``."""

    name: str = "xero"
    workspaces: dict[str, FakeXero] = field(default_factory=dict)

    def of(self, *workspace_ids: str) -> FakeXero:
        """A fake Xero of their own for ``workspace_ids`` (one module's workspaces)."""
        own = FakeXero(self.name, url=self.url)
        for workspace_id in workspace_ids:
            assert workspace_id not in self.workspaces, f"{workspace_id} has a fake Xero already"
            self.workspaces[workspace_id] = own
        return own

    async def owner(self, request: Request) -> FakeXero | None:
        """The workspace's fake that ``request`` belongs to, if any."""
        fakes = list(self.workspaces.values())
        if request.url.path == "/authorize":
            return self.workspaces.get(workspace_in(request.query_params.get("state", "")))
        if request.url.path == "/token":
            form = await request.form()  # read once: the fake's handler reads the cached form
            code, refresh = str(form.get("code")), str(form.get("refresh_token"))
            return next((f for f in fakes if code in f.codes or refresh in f.refresh_tokens), None)
        token = request.headers.get("authorization", "").removeprefix("Bearer ")
        return next((f for f in fakes if token in f.access), None)

    def app(self) -> Starlette:
        """FakeXero's routes (taken from a ``FakeXero``'s app, not repeated), each answered by
        the same handler of the fake the request belongs to."""

        def dispatched(handler: str) -> Callable[[Request], Awaitable[Response]]:
            async def endpoint(request: Request) -> Response:
                own = await self.owner(request)
                if own is None:
                    self.calls.append((request.method, request.url.path))
                    if request.url.path in ("/authorize", "/token"):
                        return JSONResponse({"error": "invalid_grant"}, status_code=400)
                    return JSONResponse({"Title": "Unauthorized", "Status": 401}, status_code=401)
                answer: Response = await _maybe_awaited(getattr(own, handler)(request))
                return answer

            return endpoint

        template = FakeXero(self.name).app()
        return Starlette(
            routes=[
                Route(route.path, dispatched(route.endpoint.__name__), methods=route.methods)
                for route in template.routes
                if isinstance(route, Route)
            ]
        )


async def _maybe_awaited(answer: Any) -> Any:
    """A handler's answer: FakeXero's ``authorize`` answers at once, the others are async."""
    return await answer if isinstance(answer, Awaitable) else answer


@dataclass
class SharedDashboard:
    """The worker's server (its address and data directory), its browser and the fake Xero the
    server is pointed at."""

    base: str
    data_dir: Path
    devtools: DevTools
    xero: XeroPerWorkspace


@contextmanager
def shared_dashboard(temp: Any) -> Iterator[SharedDashboard]:
    """The server (with no account yet, pointed at the fake Xero) and the browser; ``temp`` is
    ``tmp_path_factory``."""
    data_dir = temp.mktemp("shared-dashboard") / "data"
    data_dir.mkdir()
    process, devtools = start_chromium(temp.mktemp("shared-chromium"))
    xero = XeroPerWorkspace()
    try:
        with (
            fake_serving(xero),
            serving(data_dir, {"apiKey": "", "orgId": ""}, fake_xero_env(xero.url)) as server,
        ):
            yield SharedDashboard(server.base, data_dir, devtools, xero)
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
def own_context(shared: SharedDashboard, downloads: Path | None = None) -> Iterator[Page]:
    """A tab in a new browser context of the shared browser (nothing of another module's
    visits: no storage, cookies, cache or open connections), closed with the context. The
    browser's event log starts empty, as a new browser's does (the explorer's tests read it).
    Files the context's pages save land in ``downloads`` (a setting of this context only)."""
    context = shared.devtools.call("Target.createBrowserContext")["browserContextId"]
    shared.devtools.events.clear()
    try:
        if downloads is not None:
            shared.devtools.call(
                "Browser.setDownloadBehavior",
                behavior="allow",
                downloadPath=str(downloads),
                browserContextId=context,
            )
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
