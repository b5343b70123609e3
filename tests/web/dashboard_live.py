"""A live ``fincap serve`` (embedded store, in-process workers) with a user, a password and demo
documents, and headless Chromium pages on it: what the dashboard tests and bench/web.py drive."""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from click.testing import CliRunner

from app.cli import main
from persistence.embedded import shared_embedded_store
from tests.browser import DevTools, start_chromium
from tests.live import discard, start_serve, stop

FINCAP = str(Path(sys.executable).with_name("fincap"))
EMAIL = "owner@example.com"
PASSWORD = "correct horse battery staple"


@dataclass
class LiveDashboard:
    base: str
    api_key: str
    org_id: str
    data_dir: Path
    email: str = EMAIL  # the workspace owner's

    def signed(self, boot: dict[str, Any]) -> LiveDashboard:
        """The same server, in the workspace of ``boot`` (``prepare``'s answer) with its key."""
        return replace(self, api_key=boot["apiKey"], org_id=boot["orgId"])

    def call(self, slug: str, body: dict[str, Any], key: str | None = None) -> httpx.Response:
        """A REST capability call with the owner's key (or ``key``) in the workspace."""
        return httpx.post(
            f"{self.base}/v1/capabilities/{slug}",
            json=body,
            headers={
                "Authorization": f"Bearer {key or self.api_key}",
                "X-Service-Org-Id": self.org_id,
            },
            timeout=30,
        )

    def connect_xero(self, key: str | None = None, org: str | None = None) -> None:
        """The OAuth dance with the fake Xero (our connect URL, its consent, our callback), as
        the owner (or ``key``) in the workspace (or ``org``)."""
        headers = {
            "Authorization": f"Bearer {key or self.api_key}",
            "X-Service-Org-Id": org or self.org_id,
            "Accept": "application/json",
        }
        started = httpx.get(
            f"{self.base}/v1/integrations/xero/connect", headers=headers, timeout=30
        )
        assert started.status_code == 200, started.text
        consent = httpx.get(started.json()["data"]["result"]["authorizationUrl"], timeout=30)
        assert consent.status_code == 302, consent.text
        back = urlsplit(consent.headers["location"])
        done = httpx.get(
            f"{self.base}{back.path}?{back.query}",
            headers={"Accept": "application/json"},
            timeout=30,
        )
        assert done.status_code == 200, done.text

    def join(self, person: dict[str, Any], email: str, role: str = "member") -> None:
        """``person`` (an account made with ``admin bootstrap`` before the server started)
        invited by the owner and joining the workspace with their own key, as ``role``."""
        invited = self.call("members.invite", {"email": email, "role": role})
        assert invited.status_code == 200, invited.text
        joined = httpx.post(
            f"{self.base}/v1/capabilities/members.accept-invite",
            json={"code": invited.json()["data"]["result"]["code"]},
            headers={"Authorization": f"Bearer {person['apiKey']}"},
            timeout=30,
        )
        assert joined.status_code == 200, joined.text


def fake_xero_env(url: str) -> dict[str, str]:
    """``serving``'s settings that point the server at a fake Xero listening at ``url``."""
    from tests.integrations.fakes import CLIENT_ID, CLIENT_SECRET
    from tests.outbound import LOOPBACK_FAKES

    return {
        "FINCAP_XERO_CLIENT_ID": CLIENT_ID,
        "FINCAP_XERO_CLIENT_SECRET": CLIENT_SECRET,
        "FINCAP_XERO_AUTHORIZE_URL": f"{url}/authorize",
        "FINCAP_XERO_TOKEN_URL": f"{url}/token",
        "FINCAP_XERO_API_URL": url,
        # The fake provider listens on loopback: admitted explicitly, as an operator would.
        "FINCAP_OUTBOUND_ALLOW": LOOPBACK_FAKES,
    }


def cli(data_dir: Path, *args: str, stdin: str | None = None) -> dict[str, Any]:
    """A server-side ``fincap`` command on ``data_dir`` (it starts a private store)."""
    env = {"FINCAP_DATA_DIR": str(data_dir), "MONGODB_URI": ""}
    result = CliRunner().invoke(main, list(args), env=env, input=stdin, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    parsed: dict[str, Any] = json.loads(result.output)
    return parsed


@contextmanager
def one_store(data_dir: Path) -> Iterator[None]:
    """``data_dir``'s embedded store running for the block, published as ``fincap serve``
    publishes it, so that the ``cli`` commands in the block join it instead of each starting
    and stopping a private one (a store start is a process of its own, seconds on a loaded
    machine). Inside another ``one_store`` of the same folder it joins that one."""
    with shared_embedded_store(data_dir, publish=True):
        yield


def prepare(data_dir: Path, documents: int) -> dict[str, Any]:
    """A user with a password, their workspace and ``documents`` demo documents.

    The commands join one store started here for them all (as they join a running ``fincap
    serve``), instead of each starting and stopping a private one: two store starts fewer for
    every browser module (issue 36 item 7). It stops before the module's server starts.
    ``one_store`` around it adds the module's own commands to the same store; run while a
    ``fincap serve`` of ``data_dir`` runs, the commands join that server's store."""
    with one_store(data_dir):
        boot = cli(data_dir, "admin", "bootstrap", "--email", EMAIL, "--workspace", "Corner Shop")
        cli(data_dir, "admin", "set-password", "--email", EMAIL, stdin=PASSWORD + "\n")
        if documents:
            cli(data_dir, "demo", "load", "--org", boot["orgId"], "--count", str(documents))
    return boot


@contextmanager
def serving(
    data_dir: Path,
    boot: dict[str, Any],
    extra_env: dict[str, str] | None = None,
    throwaway: bool = False,
) -> Iterator[LiveDashboard]:
    """``fincap serve`` on ``data_dir``; ``extra_env`` adds settings (a fake provider's URLs).

    ``throwaway``: nobody reads ``data_dir`` again (a bench's temporary folder), so the server
    is killed at the end (``tests.live.discard``, a fraction of a second) instead of stopped
    cleanly (2-5 s here, mostly its embedded store's). Otherwise a clean stop: a test may start
    another server on the same folder."""

    def env(base: str) -> dict[str, str]:
        return {
            **os.environ,
            "FINCAP_DATA_DIR": str(data_dir),
            "MONGODB_URI": "",
            "FINCAP_PUBLIC_URL": base,
            **(extra_env or {}),
        }

    server = start_serve([FINCAP, "serve"], env, data_dir / "serve.log")
    try:
        yield LiveDashboard(server.base, boot["apiKey"], boot["orgId"], data_dir)
    finally:
        (discard if throwaway else stop)(server.process)


@contextmanager
def prepared_and_serving(
    data_dir: Path, seed: Callable[[], dict[str, Any]], on_server: bool, throwaway: bool
) -> Iterator[LiveDashboard]:
    """``fincap serve`` on ``data_dir`` signed in to the workspace that ``seed()`` made
    (``prepare``, with what a bench adds around it): ``seed()`` first, then the server, as a
    deployment starts on data loaded before. ``on_server``: the server first, and ``seed()``'s
    commands join its store (as they join any running ``fincap serve``'s) instead of starting
    one of their own and stopping it cleanly before the server starts its own: one store start
    and one clean stop fewer, seconds on the shared machine (issue 36 item 7). ``throwaway``:
    see ``serving``."""
    if on_server:
        data_dir.mkdir(parents=True, exist_ok=True)  # for the server's log; seed() fills it
        with serving(data_dir, {"apiKey": "", "orgId": ""}, throwaway=throwaway) as bare:
            yield bare.signed(seed())
        return
    boot = seed()
    with serving(data_dir, boot, throwaway=throwaway) as live:
        yield live


def add_seed_on_server(parser: argparse.ArgumentParser) -> None:
    """The benches' ``--seed-on-server`` (``prepared_and_serving``'s ``on_server``)."""
    parser.add_argument(
        "--seed-on-server",
        action="store_true",
        help="start fincap serve first and make the workspaces on its store (one store start "
        "and stop fewer: the smoke test's tiny runs); by default they are made before the "
        "server starts, as a deployment starts on data loaded before",
    )


class Page:
    """One Chromium tab: navigate, evaluate, wait, type and press keys, take screenshots."""

    def __init__(self, devtools: DevTools, session: str) -> None:
        self.devtools = devtools
        self.session = session

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        return self.devtools.call(method, self.session, **params)

    def js(self, expression: str) -> Any:
        return self.devtools.evaluate(self.session, expression)

    def wait(self, expression: str, timeout: float = 60) -> Any:
        return self.devtools.wait_for(self.session, expression, timeout)

    def sign_in(self, base: str, secret: str, org_id: str) -> None:
        """Sign this tab in to the dashboard with the API key ``secret`` in ``org_id``."""
        page_url = f"{base}/app/"  # sessionStorage belongs to the origin: be on it first
        self.go(page_url)
        self.wait("document.readyState === 'complete'")
        signed_in = {"kind": "key", "secret": secret, "orgId": org_id}
        self.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(signed_in))})")

    def go(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def press(self, key: str) -> None:
        """A real key press (keyDown with its text, keyUp), as the keyboard sends it."""
        codes = {"Enter": (13, "\r"), "Tab": (9, ""), "Escape": (27, ""), " ": (32, " ")}
        code, text = codes[key]
        down: dict[str, Any] = {"type": "keyDown", "key": key, "windowsVirtualKeyCode": code}
        if text:
            down["text"] = text
        self.call("Input.dispatchKeyEvent", **down)
        self.call("Input.dispatchKeyEvent", type="keyUp", key=key, windowsVirtualKeyCode=code)

    def key(self, letter: str) -> None:
        """A real key press of a letter, as the keyboard sends it."""
        code = ord(letter.upper())
        down = {"key": letter, "code": f"Key{letter.upper()}", "windowsVirtualKeyCode": code}
        self.call("Input.dispatchKeyEvent", type="keyDown", text=letter, **down)
        self.call("Input.dispatchKeyEvent", type="keyUp", **down)

    def type_text(self, text: str) -> None:
        self.call("Input.insertText", text=text)

    def fill(self, selector: str, value: str) -> None:
        """Focus ``selector``, clear it and type ``value``."""
        element = f"document.querySelector({json.dumps(selector)})"
        self.js(f"(e => {{ e.focus(); e.select && e.select(); }})({element})")
        self.js(f"document.querySelector({json.dumps(selector)}).value = ''")
        self.type_text(value)

    def click(self, selector: str) -> None:
        """Click ``selector``; fails when nothing matches (an evaluation that throws is not an
        error over DevTools: a click on a button a render had just removed passed unseen)."""
        clicked = self.js(
            f"(e => {{ if (!e) return false; e.click(); return true; }})"
            f"(document.querySelector({json.dumps(selector)}))"
        )
        assert clicked, f"nothing to click at {selector}"

    def screenshot(self, path: Path) -> bytes:
        png = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        path.write_bytes(png)
        return png

    def viewport(self, width: int, height: int, mobile: bool = False) -> None:
        self.call(
            "Emulation.setDeviceMetricsOverride",
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=mobile,
        )


def open_tab(devtools: DevTools, context: str | None = None) -> Page:
    """A new tab on ``about:blank`` (in the browser context ``context``, else the default)."""
    where = {"browserContextId": context} if context else {}
    target = devtools.call("Target.createTarget", url="about:blank", **where)["targetId"]
    session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    page = Page(devtools, session)
    page.call("Page.enable")
    return page


@contextmanager
def chromium(profile: Path) -> Iterator[Page]:
    process, devtools = start_chromium(profile)
    try:
        yield open_tab(devtools)
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def signed_in_tab(live: LiveDashboard, profile: Path) -> Iterator[Page]:
    """A Chromium tab on the dashboard, signed in with the owner's API key in the workspace."""
    with chromium(profile) as page:
        page.sign_in(live.base, live.api_key, live.org_id)
        yield page


def colour_share(
    png: bytes, rgb: tuple[int, int, int], box: tuple[int, int, int, int] | None = None
) -> float:
    """The share of pixels of ``png`` (inside ``box``) within a small distance of ``rgb``."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    if box:
        image = image.crop(box)
    pixels = list(
        image.get_flattened_data() if hasattr(image, "get_flattened_data") else image.getdata()
    )
    near = sum(1 for p in pixels if sum(abs(a - b) for a, b in zip(p, rgb, strict=True)) < 40)
    return near / max(1, len(pixels))


def result(response: httpx.Response) -> Any:
    """A REST capability call's result, the call having succeeded."""
    assert response.status_code == 200, response.text
    return response.json()["data"]["result"]


@contextmanager
def in_locale(page: Page, locale: str) -> Iterator[Page]:
    """The tab in ``locale`` (en-US, de-DE…) from the next navigation on, then as it was."""
    page.call("Emulation.setLocaleOverride", locale=locale)
    page.go("about:blank")
    try:
        yield page
    finally:
        page.call("Emulation.setLocaleOverride")


def fits_a_phone(page: Page, ready: str, timeout: float = 30) -> None:
    """Once ``ready`` holds on a 390 px wide phone screen, the page scrolls no way but down."""
    page.viewport(390, 844, mobile=True)
    try:
        page.wait(ready, timeout)
        assert page.js("document.documentElement.scrollWidth") <= 390
    finally:
        page.call("Emulation.clearDeviceMetricsOverride")


def own_key(page: Page, live: LiveDashboard, name: str) -> str:
    """Sign the tab in with a new key of the owner's, and return it: each test its own budget
    of expensive calls (statements.import, transactions.candidates, matches.confirm,
    rules.prepare and rules.execute cost one each; a key has 10 a minute)."""
    secret = str(result(live.call("api-keys.create", {"name": name}))["apiKey"])
    signed_in = {"kind": "key", "secret": secret, "orgId": live.org_id}
    page.go(f"{live.base}/app/")
    page.wait("document.readyState === 'complete'")
    page.js(f"sessionStorage.setItem('fincap.session', {json.dumps(json.dumps(signed_in))})")
    return secret
