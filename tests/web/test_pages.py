"""The pages for people: landing, API reference, the dashboard's shell and assets, thumbnails,
and GraphiQL opening on fincap's example query with the header names filled in."""

from __future__ import annotations

import io
import json
from pathlib import Path

import httpx
import pytest
from PIL import Image

from app.graphql.face import EXAMPLE_QUERY
from app.web.routes import CSP, dashboard_assets
from engines.thumbnail import NotPreviewable, thumbnail
from tests.browser import needs_chromium, start_chromium
from tests.conftest import Tenant
from tests.graphql.helpers import LiveServer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "extraction"


async def test_landing_page_links_everything_a_newcomer_needs(client: httpx.AsyncClient) -> None:
    response = await client.get("/")
    assert response.status_code == 200
    assert response.headers["content-security-policy"] == CSP
    page = response.text
    for link in (
        'href="/app/"',
        'href="/v1/graphql"',
        'href="/api"',
        'href="/help"',
        'href="/openapi.json"',
        'id="api-keys"',
    ):
        assert link in page, link
    assert "fincap admin bootstrap" in page and "<script" not in page


async def test_api_reference_renders_every_capability(client: httpx.AsyncClient) -> None:
    openapi = (await client.get("/openapi.json")).json()
    page = (await client.get("/api")).text
    for path, item in openapi["paths"].items():
        for operation in item.values():
            assert f'id="{operation["operationId"]}"' in page, path
    # Inputs are tables of their fields with constraints; schemas link to each other.
    assert 'id="schema-CreateApiKey"' in page and "maxLength 100" in page
    assert 'href="#schema-DocumentPage"' in page and "<script" not in page


async def test_dashboard_shell_and_assets(client: httpx.AsyncClient) -> None:
    shell = await client.get("/app/")
    assert shell.status_code == 200 and shell.headers["content-security-policy"] == CSP
    assert '<script type="module" src="/app/assets/main.js">' in shell.text
    assert "<script>" not in shell.text  # no inline script: the CSP would refuse it
    assert (await client.get("/app", follow_redirects=False)).headers["location"] == "/app/"
    for name in dashboard_assets():
        if name == "index.html":
            continue
        asset = await client.get(f"/app/assets/{name}")
        assert asset.status_code == 200, name
        assert asset.headers["content-type"].split(";")[0] in ("text/javascript", "text/css")
    # Only the listed files: no path from the URL reaches the disk.
    for bad in ("index.html", "..%2Fweb.py", "nope.js"):
        assert (await client.get(f"/app/assets/{bad}")).status_code == 404


def test_every_module_the_dashboard_imports_is_served() -> None:
    served = set(dashboard_assets())
    for name in served:
        if name.endswith(".js"):
            text = (Path("app/web/dashboard") / name).read_text()
            for line in text.splitlines():
                if line.startswith("import ") and ' from "./' in line:
                    target = line.split(' from "./', 1)[1].split('"', 1)[0]
                    assert target in served, (name, target)


def test_thumbnails_of_images_and_pdfs() -> None:
    png = thumbnail((FIXTURES / "receipt.png").read_bytes(), "image/png")
    pdf = thumbnail((FIXTURES / "text-layer.pdf").read_bytes(), "application/pdf")
    for data in (png, pdf):
        image = Image.open(io.BytesIO(data))
        assert image.format == "JPEG" and max(image.size) == 320
        # A page with dark print on it, not a blank or black square.
        histogram = image.convert("L").histogram()
        dark, light = sum(histogram[:100]), sum(histogram[200:])
        assert 0.002 < dark / sum(histogram) < 0.5 and light > dark
    with pytest.raises(NotPreviewable):
        thumbnail(b"%PDF-1.4 broken", "application/pdf")


async def test_thumbnail_route_is_authenticated_and_scoped(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    assert (await client.get("/v1/files/doc_x/thumbnail")).status_code == 401
    missing = await client.get("/v1/files/doc_x/thumbnail", headers=alice.headers())
    assert missing.status_code == 404


async def test_graphiql_page_carries_the_example_and_the_header_names(
    client: httpx.AsyncClient,
) -> None:
    page = (await client.get("/v1/graphql", headers={"accept": "text/html"})).text
    assert json.dumps(EXAMPLE_QUERY) in page
    assert "X-Service-Org-Id" in page and "Welcome to GraphiQL" not in page


@needs_chromium
def test_graphiql_opens_on_the_example_query(tmp_path: Path, graphql_live: LiveServer) -> None:
    server = graphql_live
    process, devtools = start_chromium(tmp_path / "profile")
    try:
        target = devtools.call("Target.createTarget", url=server.url)["targetId"]
        session = devtools.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        editor = devtools.wait_for(
            session,
            "(t => t.includes('query Dashboard') && t)"
            "(document.querySelector('.graphiql-query-editor')?.innerText || '')",
        )
        assert "byMonth: counts" in editor and "latest: documents" in editor
        # The headers editor is open with the header names to fill in.
        devtools.evaluate(
            session,
            "[...document.querySelectorAll('button')].find(b "
            "=> b.innerText.trim() === 'Headers')?.click()",
        )
        headers = devtools.wait_for(
            session,
            "(t => t.includes('X-Service-Org-Id') && t)"
            "([...document.querySelectorAll('.graphiql-editor-tool .graphiql-editor')]"
            ".map(e => e.innerText).join(' '))",
        )
        assert "Authorization" in headers and "Bearer sk_" in headers
    finally:
        process.terminate()
        process.wait(10)
