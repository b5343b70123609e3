"""The GraphQL explorer's page: its files (vendored, licensed, served alone), its policy, the
examples (each a valid operation that runs), ``/graphql`` and no header a browser refuses."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import FieldNode, GraphQLSchema, TypeInfo, TypeInfoVisitor, Visitor, parse, visit

from app.graphql.explorer import (
    ASSETS_PATH,
    EXAMPLES,
    OWN_DIR,
    VENDORED_DIR,
    _integrity,
    explorer_files,
)
from app.graphql.face import service_schema
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, asgi_client
from tests.documents.conftest import seeded as seeded  # a fixture
from tests.graphql.helpers import GRAPHQL, gql

HTML = {"accept": "text/html"}


@pytest.fixture
async def service(store: Store, registry: Registry) -> AsyncIterator[httpx.AsyncClient]:
    async with asgi_client(store, registry) as http:
        yield http


async def page_of(http: httpx.AsyncClient, path: str = GRAPHQL) -> httpx.Response:
    response = await http.get(path, headers=HTML, follow_redirects=True)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    return response


async def test_the_page_is_fincaps_and_loads_only_files_from_here(api: httpx.AsyncClient) -> None:
    page = (await page_of(api)).text
    assert "<title>fincap GraphQL explorer</title>" in page
    assert "Strawberry" not in page and "unpkg" not in page and "https://" not in page
    loaded = re.findall(r'(?:src|href)="([^"]+)" integrity="(sha384-[^"]+)"', page)
    assert {url for url, _ in loaded} == {f"{ASSETS_PATH}/{name}" for name in explorer_files()}
    for url, integrity in loaded:
        served = await api.get(url)
        assert served.status_code == 200
        digest = base64.b64encode(hashlib.sha384(served.content).digest()).decode()
        assert integrity == f"sha384-{digest}", url  # the browser would refuse anything else
    for outside in ("README.md", "graphiql@3.8.3/LICENSE", "../explorer.py", "%2e%2e/face.py"):
        assert (await api.get(f"{ASSETS_PATH}/{outside}")).status_code == 404


def test_an_edited_file_gets_its_new_integrity(tmp_path: Path) -> None:
    """Hashes are kept between apps, but a file edited under a running server (its size or
    time changed) is hashed again: a kept hash would make the browser refuse the new file."""
    script = tmp_path / "explorer.js"
    script.write_text("console.log(1)")
    first = _integrity(script)
    assert _integrity(script) == first
    script.write_text("console.log(22)")
    digest = base64.b64encode(hashlib.sha384(b"console.log(22)").digest()).decode()
    assert _integrity(script) == f"sha384-{digest}" != first


def test_every_vendored_package_carries_its_licence() -> None:
    packages = {path.parent for path in VENDORED_DIR.glob("**/*@*/LICENSE")}
    used = set()
    for name, path in explorer_files().items():
        if path.is_relative_to(VENDORED_DIR):
            parts = name.split("/")  # <package>@<version>/…, a scoped one @scope/<name>@…/…
            used.add(VENDORED_DIR.joinpath(*parts[: 2 if name.startswith("@") else 1]))
    assert used <= packages, used - packages
    assert (VENDORED_DIR / "@graphiql/plugin-explorer@1.0.2/LICENSE.graphiql-explorer").is_file()


async def test_no_header_is_filled_in_and_none_could_be_refused(api: httpx.AsyncClient) -> None:
    # Browsers refuse to send a header holding anything beyond ISO-8859-1 (the old "sk_…").
    page = (await page_of(api)).text
    script = (OWN_DIR / "explorer.js").read_text()
    for text in (page, script):
        assert "sk_…" not in text and "Bearer sk_" not in text
    assert all(ord(char) < 0x80 for char in script), "the script is plain ASCII"


async def test_graphql_is_sent_on_to_the_endpoint(api: httpx.AsyncClient) -> None:
    moved = await api.get("/graphql?query=%7B__typename%7D", headers=HTML)
    assert moved.status_code == 308
    assert moved.headers["location"] == f"{GRAPHQL}?query=%7B__typename%7D"
    assert "GraphQL explorer" in (await page_of(api, "/graphql")).text
    posted = await api.post("/graphql", json={"query": "{ __typename }"}, follow_redirects=True)
    assert posted.json() == {"data": {"__typename": "Query"}}


async def test_the_schema_is_documented_without_a_key(api: httpx.AsyncClient) -> None:
    # The Docs pane and the explorer plugin load the schema before anyone signs in.
    body = await gql(api, "{ __schema { queryType { name } } }")
    assert body == {"data": {"__schema": {"queryType": {"name": "Query"}}}}


async def test_every_example_is_a_named_operation_that_runs(
    service: httpx.AsyncClient, seeded: Tenant, registry: Registry
) -> None:
    names = [example.name for example in EXAMPLES]
    assert names == [
        "Overview",
        "NewestDocuments",
        "FilteredDocuments",
        "SpendByMonthAndCategory",
        "OneDocument",
        "DocumentEvents",
    ]
    # The subscription runs over the WebSocket (tests/web/test_explorer_browser.py); over HTTP it
    # is refused (tests/events/test_graphql_asgi.py).
    assert re.search(r"^subscription DocumentEvents\b", EXAMPLES[-1].query, re.MULTILINE)
    ran = {}
    for example in EXAMPLES[:-1]:
        assert re.search(rf"^query {example.name}\b", example.query, re.MULTILINE)
        variables = {"id": "doc_b"} if example.name == "OneDocument" else None
        body = await gql(service, example.query, variables, headers=seeded.headers())
        assert "errors" not in body, (example.name, body)
        assert body["data"], example.name
        ran[example.name] = body["data"]
    # No deprecated field in any example: they show the shape to build on.
    schema = service_schema(registry)._schema
    for example in EXAMPLES:
        assert not deprecated_fields(schema, example.query), example.name
    assert ran["Overview"]["workspace"]["counts"]["count"] == 6
    newest = ran["NewestDocuments"]["documentsConnection"]
    assert newest["totalCount"] == 6 and newest["pageInfo"]["hasNextPage"] is False
    documents = [edge["node"] for edge in newest["edges"]]
    assert documents[0]["docDate"] == "2024-02-03"
    assert any(d["lineItems"] for d in documents)
    # Since 2024: doc_b (60.20) and doc_d (59.99) are 20 or more; doc_c is fuel, but Shell's.
    filtered = ran["FilteredDocuments"]["documentsConnection"]
    assert [d["id"] for d in filtered["nodes"]] == ["doc_b", "doc_d"]
    assert filtered["totalCount"] == 2
    groups = ran["SpendByMonthAndCategory"]["documentsAggregate"]["groups"]
    keys = {(g["key"]["month"], g["key"]["category"], g["key"]["currency"]) for g in groups}
    assert ("2024-01", "Fuel", "EUR") in keys and ("2024-02", "Software", "USD") in keys
    assert ran["OneDocument"]["node"]["merchant"] == "Shell"


def deprecated_fields(schema: GraphQLSchema, query: str) -> list[str]:
    """The deprecated fields ``query`` selects."""
    found: list[str] = []
    info = TypeInfo(schema)

    def enter(node: Any, *_: Any) -> None:
        if isinstance(node, FieldNode):
            field = info.get_field_def()
            if field is not None and field.deprecation_reason:
                found.append(node.name.value)

    visit(parse(query), TypeInfoVisitor(info, _Visitor(enter)))
    return found


class _Visitor(Visitor):
    def __init__(self, enter: Any) -> None:
        super().__init__()
        self._enter = enter

    def enter(self, node: Any, *args: Any) -> None:
        self._enter(node, *args)


def test_the_docs_pane_describes_the_document_graph(registry: Registry) -> None:
    """What a dashboard builder reads in the Docs pane: the root types, the document and
    workspace types and every field of theirs carry a description (from the models and the
    capabilities' docstrings)."""
    schema = service_schema(registry)._schema
    explained = ["Query", "Mutation", "Document", "DocumentPage", "LineItem", "EditRecord"]
    explained += ["DocumentFile", "FieldEvidence", "Workspace", "WorkspaceSummary"]
    explained += ["WorkspaceList", "DocumentCount", "CountDocumentsInput", "WhereClauseInput"]
    undescribed = []
    for name in explained:
        graphql_type = schema.get_type(name)
        assert graphql_type is not None, name
        if not graphql_type.description:
            undescribed.append(name)
        for field_name, field in getattr(graphql_type, "fields", {}).items():
            # documents_count publishes its output schema on MCP, whose listing is at its byte
            # budget: DocumentCount's own fields wait for room there (its type is described).
            if not field.description and name != "DocumentCount":
                undescribed.append(f"{name}.{field_name}")
    assert undescribed == []
