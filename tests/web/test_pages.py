"""The pages for people: landing, API reference, the dashboard's shell and assets, thumbnails
(the GraphQL explorer's page: tests/graphql/test_explorer_page.py and the browser tests)."""

from __future__ import annotations

import io
from pathlib import Path

import httpx
import pytest
from PIL import Image

from app.web.routes import CSP, dashboard_assets
from engines.thumbnail import NotPreviewable, thumbnail
from tests.conftest import Tenant

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
        assert asset.headers["content-type"].split(";")[0] in (
            "text/javascript",
            "text/css",
            "image/svg+xml",
        )
    # The favicon, also where browsers look for it unasked.
    for path in ("/favicon.svg", "/favicon.ico"):
        icon = await client.get(path)
        assert icon.status_code == 200 and icon.text.startswith("<svg"), path
        assert icon.headers["content-type"].startswith("image/svg+xml")
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
