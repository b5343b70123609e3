"""The public help pages: ``GET /help`` (the articles, and a search box) and ``GET /help/{id}``.

The articles are public, so these pages need no key. Articles are rendered from their Markdown
with markdown-it-py (raw HTML in a source is shown as text, link schemes are checked by the
parser); every other value is escaped here. The CSP allows no script, no frame and no foreign
resource: the pages are text and one inline style sheet.
"""

from __future__ import annotations

import asyncio
from html import escape

from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from app.http.security_headers import page_headers
from engines.help_center import HelpCenter, default_help_center
from engines.help_center.articles import render_html
from engines.help_center.fulltext import MARK_OPEN
from schema.help_center import MAX_QUERY

STYLE = """
body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;
color:#1a1a1a;line-height:1.55}
a{color:#0b57a4}nav{margin-bottom:1.5rem}h1{font-size:1.8rem}h2{margin-top:2rem}
code{background:#f3f3f3;padding:0 .2em;border-radius:3px;font-size:.92em}
pre{background:#f3f3f3;padding:.75rem;overflow-x:auto}pre code{padding:0}
table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:.3rem .5rem;
text-align:left;vertical-align:top}mark{background:#ffe48a}
.summary{color:#444;margin-top:.2rem}ul.articles li{margin-bottom:.8rem}
input[type=search]{width:70%;padding:.45rem;font-size:1rem}button{padding:.45rem .9rem;
font-size:1rem}.snippet{color:#333;margin:.2rem 0 .2rem 1rem}
"""
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def page(title: str, body: str, status: int = 200) -> HTMLResponse:
    text = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · fincap help</title><style>{STYLE}</style></head>"
        f'<body><nav><a href="/help">fincap help center</a></nav><main>{body}</main>'
        "</body></html>"
    )
    return HTMLResponse(
        text,
        status_code=status,
        headers={
            **page_headers(CSP),
            # Articles change only with a release: a short shared cache is safe.
            "Cache-Control": "public, max-age=300" if status == 200 else "no-store",
        },
    )


def marked_html(snippet: str) -> str:
    """A search snippet as HTML: text escaped, each ``**word**`` a ``<mark>``."""
    parts = snippet.split(MARK_OPEN)
    if len(parts) % 2 == 0:  # an unpaired mark (a literal ** in the text): show it as text
        return escape(snippet)
    return "".join(
        f"<mark>{escape(part)}</mark>" if index % 2 else escape(part)
        for index, part in enumerate(parts)
    )


def search_form(query: str = "") -> str:
    return (
        '<form method="get" action="/help" role="search">'
        '<label for="q">Search the help center</label><br>'
        f'<input id="q" name="q" type="search" maxlength="{MAX_QUERY}" '
        f'value="{escape(query)}"> <button type="submit">Search</button></form>'
    )


def index_body(center: HelpCenter) -> str:
    items = "".join(
        f'<li><a href="/help/{escape(a.id)}">{escape(a.title)}</a>'
        f'<div class="summary">{escape(a.summary)}</div></li>'
        for a in center.articles
    )
    return (
        f"<h1>fincap help center</h1>{search_form()}"
        f'<h2>Articles</h2><ul class="articles">{items}</ul>'
    )


async def results_body(center: HelpCenter, query: str) -> str:
    if len(query) < 2:
        return f"<h1>Search</h1>{search_form(query)}<p>Type at least 2 characters to search.</p>"
    hits = await asyncio.to_thread(center.search, query, limit=10, snippets=2)
    if not hits:
        listing = "<p>No article answers that. Try other words, or browse the articles.</p>"
    else:
        listing = (
            "<ol>"
            + "".join(
                f'<li><a href="/help/{escape(hit.article.id)}">{escape(hit.article.title)}</a>'
                + "".join(
                    f'<p class="snippet">'
                    f'<a href="/help/{escape(hit.article.id)}'
                    f'{"#" + escape(s.anchor) if s.anchor else ""}">'
                    f"{escape(s.section or hit.article.title)}</a>: {marked_html(s.text)}</p>"
                    for s in hit.snippets
                )
                + "</li>"
                for hit in hits
            )
            + "</ol>"
        )
    return f"<h1>Search: {escape(query)}</h1>{search_form(query)}{listing}"


async def help_index(request: Request) -> HTMLResponse:
    # In a thread: the first request after start-up may wait for the index being built.
    center = await asyncio.to_thread(default_help_center)
    query = request.query_params.get("q", "").strip()[:MAX_QUERY]
    if "q" in request.query_params:
        return page(f"Search: {query}" if query else "Search", await results_body(center, query))
    return page("Help center", index_body(center))


async def help_article(request: Request) -> Response:
    article_id = request.path_params["article_id"]
    if not article_id.strip("/"):
        # "/help/" is the index, as "/api/" is the reference: redirected, the search kept.
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(f"/help{query}", status_code=308)
    center = await asyncio.to_thread(default_help_center)
    article = center.by_id.get(article_id)
    if article is None:
        return page(
            "Article not found",
            "<h1>Article not found</h1><p>There is no help article with that name. "
            '<a href="/help">See all articles</a>.</p>',
            status=404,
        )
    # A code block wider than the page scrolls inside itself: focusable, so the keyboard can
    # scroll it too (axe-core's scrollable-region-focusable). Raw HTML in an article is shown as
    # text, so every "<pre>" here is the renderer's own.
    body = render_html(article).replace("<pre>", '<pre tabindex="0">')
    return page(article.title, body)


def help_routes() -> list[Route]:
    return [
        Route("/help", help_index, methods=["GET"]),
        Route("/help/{article_id:path}", help_article, methods=["GET"]),
    ]
