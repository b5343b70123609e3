"""GraphiQL in headless Chromium: the page loads (offline), runs a query and shows the result.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: JSON
messages separated by NUL on fds 3 and 4), so no websocket library is needed. Skipped when no
chromium binary is installed (Debian: ``apt-get install chromium``).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote, urlencode

from tests.browser import needs_chromium, start_chromium
from tests.graphql.helpers import LiveServer

QUERY = "{ workspacesList { workspaces { name role } } }"
pytestmark = needs_chromium


def test_graphiql_renders_and_runs_a_query(tmp_path: Path, graphql_live: LiveServer) -> None:
    server = graphql_live
    # The page decodes its parameters with decodeURIComponent: spaces as %20, not "+".
    parameters = {
        "q": QUERY,
        "headers": json.dumps({"Authorization": f"Bearer {server.api_key}"}),
    }
    page = server.url + "?" + urlencode(parameters, quote_via=quote)
    process, devtools = start_chromium(tmp_path / "profile")
    try:
        target = devtools.call("Target.createTarget", url="about:blank")["targetId"]
        session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        # Anything the page's Content-Security-Policy blocks is recorded from the start.
        devtools.call("Page.enable", session)
        devtools.call(
            "Page.addScriptToEvaluateOnNewDocument",
            session,
            source="window.__blocked = []; document.addEventListener("
            "'securitypolicyviolation', e => __blocked.push(e.violatedDirective + ' ' + "
            "e.blockedURI));",
        )
        devtools.call("Page.navigate", session, url=page)
        # The page rendered GraphiQL (its scripts came from this server: there is no CDN).
        devtools.wait_for(session, "!!document.querySelector('.graphiql-execute-button')")
        editor = devtools.wait_for(
            session, "document.querySelector('.graphiql-query-editor')?.innerText"
        )
        assert QUERY in editor.replace("\n", " ")
        devtools.evaluate(session, "document.querySelector('.graphiql-execute-button').click()")
        result = devtools.wait_for(
            session,
            "(t => t.includes('Live Co') && t)"
            "(document.querySelector('.result-window')?.innerText || '')",
        )
        # The result pane is a code editor (its text has gutters), so compare the lines.
        lines = [line.strip() for line in result.splitlines()]
        assert '"name": "Live Co",' in lines and '"role": "owner"' in lines, result
        # The policy (script hashes, this server only) blocked nothing GraphiQL needs.
        assert devtools.evaluate(session, "JSON.stringify(window.__blocked)") == "[]"
        shot = devtools.call("Page.captureScreenshot", session, format="png")["data"]
        png = base64.b64decode(shot)
        (tmp_path / "graphiql.png").write_bytes(png)
        assert png.startswith(b"\x89PNG") and len(png) > 20_000  # a real page, not blank
    finally:
        process.terminate()
        process.wait(10)
