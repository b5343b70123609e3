"""The authorization pages in headless Chromium with JavaScript off: sign in, consent, and
the browser lands on the client's redirect URI with a code and the state."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlparse

import httpx
import pytest

from persistence.embedded import free_port
from tests.browser import DevTools, start_chromium
from tests.mcp import oauth_client as oc
from tests.mcp.live import EMAIL, PASSWORD, Live
from tests.requires import requires

pytestmark = requires("chromium")


@pytest.fixture
def callback() -> Iterator[tuple[str, list[str]]]:
    """The client application's redirect URI: a local server that records what arrives."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<h1>Connected</h1>")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", free_port()), Handler)
    # shutdown() returns at the server's next poll: every 50 ms, not the default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/callback", seen
    finally:
        server.shutdown()


def screenshot(devtools: DevTools, session: str, path: Path) -> bytes:
    png = base64.b64decode(devtools.call("Page.captureScreenshot", session, format="png")["data"])
    path.write_bytes(png)
    return png


def type_into(devtools: DevTools, session: str, selector: str, text: str) -> None:
    """Focus a field and type, as a person would (page scripts are off)."""
    node = devtools.call("DOM.getDocument", session)["root"]["nodeId"]
    found = devtools.call("DOM.querySelector", session, nodeId=node, selector=selector)
    devtools.call("DOM.focus", session, nodeId=found["nodeId"])
    devtools.call("Input.insertText", session, text=text)


def click(devtools: DevTools, session: str, selector: str) -> None:
    devtools.evaluate(session, f"document.querySelector({json.dumps(selector)}).click()")


def test_sign_in_and_consent_pages_in_a_browser(
    live: Live, callback: tuple[str, list[str]], tmp_path: Path
) -> None:
    redirect_uri, seen = callback
    registered = httpx.post(
        f"{live.base}/v1/oauth/register",
        json={
            "client_name": "Browser Assistant",
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
        },
    ).json()
    _, challenge = oc.pkce_pair()
    query = urlencode({
        "response_type": "code", "client_id": registered["client_id"],
        "redirect_uri": redirect_uri, "code_challenge": challenge,
        "code_challenge_method": "S256", "state": "browser-state", "scope": "read_documents",
    })  # fmt: skip
    process, devtools = start_chromium(tmp_path / "profile")
    try:
        target = devtools.call("Target.createTarget", url="about:blank")["targetId"]
        session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        devtools.call("Emulation.setScriptExecutionDisabled", session, value=True)
        devtools.call("Page.navigate", session, url=f"{live.base}/v1/oauth/authorize?{query}")
        devtools.wait_for(
            session, "document.querySelector('h1')?.innerText === 'Sign in to fincap'"
        )
        assert "Browser Assistant" in devtools.evaluate(session, "document.body.innerText")
        # Labelled fields, for screen readers too.
        labels = devtools.evaluate(
            session, "[...document.querySelectorAll('label')].map(l => l.htmlFor).join(',')"
        )
        assert labels == "email,password"
        png = screenshot(devtools, session, tmp_path / "sign-in.png")
        assert png.startswith(b"\x89PNG") and len(png) > 8_000

        type_into(devtools, session, "#email", EMAIL)
        type_into(devtools, session, "#password", PASSWORD)
        click(devtools, session, "button[type=submit]")
        devtools.wait_for(
            session, "document.querySelector('h1')?.innerText === 'Allow Browser Assistant?'"
        )
        text = devtools.evaluate(session, "document.body.innerText")
        assert "Live Co" in text and "Read your receipts" in text and EMAIL in text
        png = screenshot(devtools, session, tmp_path / "consent.png")
        assert png.startswith(b"\x89PNG") and len(png) > 8_000

        click(devtools, session, "button[value=allow]")
        devtools.wait_for(session, "document.querySelector('h1')?.innerText === 'Connected'")
    finally:
        process.terminate()
        process.wait(10)
    arrivals = [path for path in seen if path.startswith("/callback")]
    assert len(arrivals) == 1  # the browser landed on the redirect URI once
    arrived = parse_qs(urlparse(arrivals[0]).query)
    assert arrived["state"] == ["browser-state"]
    assert arrived["code"][0].startswith("fac_")
