"""Every page a person meets, checked by axe-core in headless Chromium, in the light and (where
the page has styles for it) the dark colour scheme: no serious or critical violation (contrast,
names, labels, landmarks…).

The dashboard's pages are reached as a person reaches them: signed out, through the OAuth
sign-in and consent pages, then each view of the navigation, a document with its correction form
open; then the public pages (landing, API reference, GraphQL explorer) and the help center.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.requires import requires
from tests.web.accessibility import axe_violations, color_scheme, report, schemes_of
from tests.web.dashboard_live import (
    PASSWORD,
    LiveDashboard,
    Page,
)
from tests.web.shared_dashboard import SharedDashboard, own_context, workspace_on

pytestmark = [requires("chromium"), pytest.mark.wire]
# The dashboard has drawn a view: no render in flight and the view's heading in place.
RENDERED = (
    "!document.querySelector('#main').hasAttribute('aria-busy') "
    "&& !!document.querySelector('main h1')"
)


@pytest.fixture(scope="module")
def live(dashboard: SharedDashboard) -> LiveDashboard:
    return workspace_on(dashboard, "accessibility", 40, password=True)


@pytest.fixture
def page(dashboard: SharedDashboard) -> Iterator[Page]:
    with own_context(dashboard) as tab:
        yield tab


def view(page: Page, base: str, route: str, ready: str) -> None:
    """Open the dashboard view at ``route`` (its hash) and wait until ``ready`` holds."""
    page.go(f"{base}/app/#{route}")
    page.wait(f"location.hash === '#{route}' && {RENDERED} && ({ready})")


def test_every_page_passes_axe_in_light_and_dark(live: LiveDashboard, page: Page) -> None:
    """One pass as a person would go (the consent page shows once per user), each page checked
    in both schemes when it has dark styles: the emulated scheme applies to the page as it
    stands, no reload."""
    found: dict[str, list[dict[str, Any]]] = {}

    def check(name: str) -> None:
        for scheme in schemes_of(page):
            color_scheme(page, scheme)
            found[f"{name} ({scheme})"] = axe_violations(page)

    # Signed out: the dashboard's sign-in, fincap's sign-in page, the consent page.
    page.go(f"{live.base}/app/")
    page.wait("!!document.querySelector('#oauth-sign-in') && !!document.querySelector('#key-form')")
    check("dashboard sign-in")
    # As "Another workspace…" signs in (prompt=consent), so the page that chooses the
    # workspace is shown too (a plain sign-in of a person with one workspace skips it).
    page.js("import('/app/assets/api.js').then(api => api.startSignIn({chooseWorkspace: true}))")
    page.wait("location.pathname === '/v1/oauth/sign-in' && !!document.querySelector('#email')")
    check("OAuth sign-in")
    page.fill("#email", live.email)
    page.fill("#password", "not the password")
    page.js("document.querySelector('form').submit()")
    page.wait(
        "!!document.querySelector('.error[role=alert]') && !!document.querySelector('#email')"
    )
    check("OAuth sign-in, refused")
    page.fill("#email", live.email)
    page.fill("#password", PASSWORD)
    page.js("document.querySelector('form').submit()")
    page.wait("!!document.querySelector('button[value=allow]')")
    check("OAuth consent")
    page.click("button[value=allow]")

    # Signed in: each view of the navigation.
    page.wait("document.querySelectorAll('#chart-months .bar').length > 0")
    check("overview")
    view(
        page, live.base, "/documents", "document.querySelectorAll('.doc-table tbody tr').length > 0"
    )
    check("documents")
    page.js(
        "(b => { b.checked = true; b.dispatchEvent(new Event('change')); })"
        "(document.querySelector('.doc-table .pick-row'))"
    )
    page.wait("document.querySelector('#selected-count').innerText.startsWith('1 ')")
    check("documents, a row selected")
    link = page.js("document.querySelector('.doc-table a.doc-name').getAttribute('href')")
    view(page, live.base, link[1:], "!!document.querySelector('#fields [data-edit=amount]')")
    check("document")
    page.click("[data-edit=amount]")
    page.wait("document.activeElement?.id === 'edit-amount'")
    check("document, correcting its amount")
    page.press("Escape")
    page.click("#archive")
    page.wait("location.hash.startsWith('#/documents') && !!document.querySelector('#toast #undo')")
    check("documents, the undo toast after archiving")
    page.click("#toast #undo")
    page.wait("document.querySelector('#toast')?.innerText === 'Restored'")
    view(page, live.base, "/upload", "!!document.querySelector('.drop-zone')")
    check("upload")
    view(page, live.base, "/bank", "!!document.querySelector('#missing-box h2')")
    check("bank (no statement yet)")
    view(page, live.base, "/keys", "!!document.querySelector('#create-key')")
    check("API keys")
    page.fill("#key-name", "accessibility check")
    page.js("document.querySelector('#create-key').requestSubmit()")
    page.wait("!!document.querySelector('#new-secret')")
    check("API keys, a new key shown once")
    view(page, live.base, "/members", "!!document.querySelector('#invite-email')")
    check("members")

    # The public pages and the help center.
    for name, path, ready in [
        ("landing", "/", "!!document.querySelector('main h1')"),
        ("API reference", "/api", "!!document.querySelector('.op')"),
        # The query builder drawn (it comes once the schema is read) and the page's labels put
        # on it (a frame after each change): axe at load ~10 once ran between the two.
        (
            "GraphQL explorer",
            "/v1/graphql",
            "!!document.querySelector('.graphiql-execute-button') "
            "&& !!document.querySelector('.graphiql-explorer-actions') "
            "&& !document.querySelector('.variable-editor-title > select:not([aria-label])')",
        ),
        ("help center", "/help", "!!document.querySelector('ul.articles a')"),
        ("help search", "/help?q=receipt", "!!document.querySelector('main h1')"),
    ]:
        page.go(f"{live.base}{path}")
        page.wait(f"location.pathname === '{path.split('?')[0]}' && {ready}")
        check(name)
    page.go(f"{live.base}/help")
    page.wait("!!document.querySelector('ul.articles a')")
    articles = page.js("[...document.querySelectorAll('ul.articles a')].map(a => a.pathname)")
    assert len(articles) > 10, articles
    for path in articles:
        page.go(f"{live.base}{path}")
        page.wait(f"location.pathname === '{path}' && !!document.querySelector('main h1')")
        check(f"help {path}")

    # On a phone's width the layout changes (the documents become cards, the filters fold).
    page.viewport(390, 844, mobile=True)
    for route, ready in [
        ("/", "document.querySelectorAll('#chart-months .bar').length > 0"),
        ("/documents", "document.querySelectorAll('.doc-table tbody tr').length > 0"),
        (link[1:], "!!document.querySelector('#fields [data-edit=amount]')"),
    ]:
        view(page, live.base, route, ready)
        check(f"phone {route}")

    assert not any(found.values()), report(found)
    # The explorer has dark styles, so the check of the dark scheme still runs where it matters.
    assert "GraphQL explorer (dark)" in found, sorted(found)
