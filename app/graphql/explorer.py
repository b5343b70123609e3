"""fincap's GraphQL explorer: GraphiQL with its explorer plugin (a query builder), the example
operations a dashboard builder starts from, and the dashboard's sign-in or a pasted API key.

The page is fincap's own (not strawberry's template): every script is a file served from
``ASSETS_PATH`` (the vendored GraphiQL files in ``graphiql/``, fincap's in ``page/``), so the
policy allows scripts from this server only, with no inline script. The examples travel in a
``<script type="application/json">`` block, which browsers never run. No header is filled in
by default: a placeholder such as ``Bearer sk_…`` holds a character browsers refuse to send in
a header, and every request, the schema's included, failed on it.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import json
from dataclasses import dataclass
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.routing import Route

from app.http.security_headers import graphiql_csp

PATH = "/v1/graphql"
ASSETS_PATH = PATH + "/assets"
VENDORED_DIR = Path(__file__).parent / "graphiql"
OWN_DIR = Path(__file__).parent / "page"
# The vendored files, in load order; the versions scripts/vendor-graphiql.sh fetches.
VENDORED_SCRIPTS = (
    "react@18.2.0/umd/react.production.min.js",
    "react-dom@18.2.0/umd/react-dom.production.min.js",
    "graphiql@3.8.3/graphiql.min.js",
    "@graphiql/plugin-explorer@1.0.2/dist/index.umd.js",
)
VENDORED_STYLES = (
    "graphiql@3.8.3/graphiql.min.css",
    "@graphiql/plugin-explorer@1.0.2/dist/style.css",
)
OWN_SCRIPT = "explorer.js"
OWN_STYLE = "explorer.css"


@dataclass(frozen=True)
class Example:
    """A named operation the explorer opens in a tab of its own."""

    name: str
    query: str


EXAMPLES = (
    Example(
        "Overview",
        """# The workspace at a glance: what the dashboard's first screen shows.
# Run with Ctrl-Enter. Click fields together in the Explorer (left), read every type in Docs.
query Overview {
  workspace {
    name
    preferredCurrency
    documentCount
    archivedCount
    counts {
      count
      preferredTotal { amount currency }
      totals { currency amount }
    }
  }
}
""",
    ),
    Example(
        "NewestDocuments",
        """# The ten newest documents by date, with their line items, as a connection: totalCount
# (counted only when selected), pageInfo and a cursor per edge. Every field you select is
# returned (and only those are read). Page forward with after: <endCursor>, back with
# last: 10, before: <startCursor>.
query NewestDocuments($after: String) {
  documentsConnection(orderBy: [{field: DOC_DATE, direction: DESC}], first: 10, after: $after) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges {
      cursor
      node {
        id merchant amount currency docDate category docType summary
        lineItems { description quantity unitPrice amount }
      }
    }
  }
}
""",
    ),
    Example(
        "FilteredDocuments",
        """# A typed filter: every field with the tests its type takes (type inside the braces and
# the editor completes field and test names), combined with and, or and not. Here: documents
# since $since, of 20 or more, or fuel and travel not bought at a Shell station.
query FilteredDocuments($since: Date = "2024-01-01") {
  documentsConnection(
    filter: {
      docDate: {gte: $since}
      or: [
        {amount: {gte: "20"}}
        {and: [{category: {in: ["Fuel", "Travel"]}}, {not: {merchant: {startsWith: "Shell"}}}]}
      ]
    }
    orderBy: [{field: AMOUNT, direction: DESC}]
    first: 10
  ) {
    totalCount
    nodes { id merchant amount currency category docDate }
  }
}
""",
    ),
    Example(
        "SpendByMonthAndCategory",
        """# Spend per month and category at once (several keys in one aggregation; currencies are
# never added together: each group is one currency). fillGaps fills the empty buckets of a
# single time key.
query SpendByMonthAndCategory {
  documentsAggregate(groupBy: [MONTH, CATEGORY]) {
    totalCount
    groupsTruncated
    groups {
      key { month category currency }
      count
      sum { amount taxAmount }
      avg { amount }
      max { amount docDate }
    }
  }
}
""",
    ),
    Example(
        "OneDocument",
        """# One record by its id (an id from NewestDocuments): node(id:) answers for any record
# with an id in this workspace, null when it has none; nodes(ids:) takes several.
query OneDocument($id: ID! = "paste a document id") {
  node(id: $id) {
    id
    ... on Document {
      merchant amount currency docDate
      duplicates { id merchant }
      editHistory { field oldValue newValue editedAt }
    }
  }
}
""",
    ),
    Example(
        "DocumentEvents",
        """# Live: what happens to the workspace's documents, as it happens (graphql-transport-ws on
# this same path). Run it, then upload a receipt on the dashboard: it arrives as created,
# then processed with what was read. Stop it with the same button. documentEvents(filter:
# {amount: {gte: "100"}}) takes the same filter as documentsConnection: only the events of
# documents that match.
subscription DocumentEvents {
  documentEvents {
    type
    documentId
    at
    document { merchant docDate amount currency processingStatus }
  }
}
""",
    ),
)


def _integrity(path: Path) -> str:
    """The file's ``integrity`` value. Hashing the vendored scripts (megabytes) took a tenth of
    a second for each app made; a file is hashed again only when its size or time changes (an
    edited ``explorer.js`` under a running server gets its new hash in the next app)."""
    stat = path.stat()
    return _sha384(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _sha384(path: Path, mtime_ns: int, size: int) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(path.read_bytes()).digest()).decode()


def explorer_files() -> dict[str, Path]:
    """The files the page loads, by their path under ``ASSETS_PATH``: the only ones served."""
    files = {name: VENDORED_DIR / name for name in (*VENDORED_SCRIPTS, *VENDORED_STYLES)}
    files.update({name: OWN_DIR / name for name in (OWN_SCRIPT, OWN_STYLE)})
    missing = [name for name, path in files.items() if not path.is_file()]
    if missing:  # a broken checkout: fail at start-up, not in a person's browser
        raise RuntimeError(f"GraphQL explorer files missing: {missing}")
    return files


def explorer_html(files: dict[str, Path]) -> str:
    """The page: stylesheets, the key bar, GraphiQL's root, the examples and the scripts (each
    with its ``integrity``, so a browser runs only the bytes this server holds)."""

    def tag(name: str) -> str:
        url, sri = html.escape(f"{ASSETS_PATH}/{name}"), _integrity(files[name])
        if name.endswith(".css"):
            return f'<link rel="stylesheet" href="{url}" integrity="{sri}">'
        return f'<script src="{url}" integrity="{sri}"></script>'

    examples = json.dumps([{"name": e.name, "query": e.query} for e in EXAMPLES])
    # "</" cannot end the data block early: JSON allows "<\/" for it.
    examples = examples.replace("</", "<\\/")
    styles = "\n    ".join(tag(name) for name in (*VENDORED_STYLES, OWN_STYLE))
    scripts = "\n    ".join(tag(name) for name in (*VENDORED_SCRIPTS, OWN_SCRIPT))
    return f"""<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>fincap GraphQL explorer</title>
    <link rel="icon" href="data:,">
    {styles}
  </head>
  <body>
    <header id="explorer-bar">
      <a class="brand" href="/">fincap</a>
      <span class="what">GraphQL explorer</span>
      <span id="explorer-signed" role="status"></span>
      <form id="explorer-key-form" hidden>
        <label for="explorer-key">API key</label>
        <input id="explorer-key" type="password" autocomplete="off" spellcheck="false"
               placeholder="sk_..." required>
        <button type="submit">Use key</button>
      </form>
      <label id="explorer-workspace-label" hidden>Workspace
        <select id="explorer-workspace"></select>
      </label>
      <button id="explorer-forget" type="button" hidden>Forget this key</button>
      <span id="explorer-error" role="alert"></span>
      <nav><a href="/app/">Dashboard</a> <a href="/api">API reference</a></nav>
    </header>
    <div id="graphiql">Loading the explorer...</div>
    <script type="application/json" id="explorer-examples">{examples}</script>
    {scripts}
  </body>
</html>
"""


def explorer_routes() -> tuple[str, str, list[Route]]:
    """The page, its policy, and the routes of its files and of ``/graphql`` (the address
    people try first: sent on to ``PATH`` with its query string, method and body kept)."""
    files = explorer_files()
    page = explorer_html(files)
    served = {f"{ASSETS_PATH}/{name}": path for name, path in files.items()}

    async def asset(request: Request) -> Response:
        # Only the page's own files are served: no path from the URL reaches the disk.
        path = served.get(request.url.path)
        if path is None:
            return Response(status_code=404)
        return FileResponse(path, headers={"cache-control": "public, max-age=86400"})

    async def to_endpoint(request: Request) -> Response:
        query = f"?{request.url.query}" if request.url.query else ""
        return RedirectResponse(PATH + query, status_code=308)

    routes = [
        Route(ASSETS_PATH + "/{path:path}", asset, methods=["GET"]),
        Route("/graphql", to_endpoint, methods=["GET", "HEAD", "POST"]),
    ]
    return page, graphiql_csp(page), routes
