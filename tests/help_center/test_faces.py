"""help-center.search through REST and GraphQL, and the public pages GET /help and /help/{id}."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest

from tests.conftest import Tenant

SEARCH = "/v1/capabilities/help-center.search"


async def search(client: httpx.AsyncClient, tenant: Tenant, body: Any) -> httpx.Response:
    # No X-Service-Org-Id: the capability needs no workspace.
    return await client.post(SEARCH, json=body, headers=tenant.headers(org=None))


async def test_rest_returns_grouped_articles_with_marked_snippets(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    response = await search(client, alice, {"query": "regex case-insensitive"})
    assert response.status_code == 200, response.text
    result = response.json()["data"]["result"]
    assert result["highlight"] == "**"
    hits = result["results"]
    assert 1 <= len(hits) <= 3  # default limit
    assert hits[0]["id"] == "where-clauses"
    assert hits[0]["url"] == "http://127.0.0.1:8000/help/where-clauses"
    assert len({hit["id"] for hit in hits}) == len(hits)  # grouped: each article once
    assert [hit["score"] for hit in hits] == sorted((hit["score"] for hit in hits), reverse=True)
    assert 0 < hits[-1]["score"] <= hits[0]["score"] <= 1
    first = hits[0]
    assert "words" in first["matchedBy"]
    assert 1 <= len(first["snippets"]) <= 2  # default snippetsPerResult
    marked = re.findall(r"\*\*(.+?)\*\*", " ".join(s["text"] for s in first["snippets"]))
    assert marked and all(re.search(r"regex|case|insensitive", m, re.I) for m in marked)
    assert first["snippets"][0]["url"].startswith(first["url"] + "#")


async def test_limit_and_snippets_per_result_are_honoured(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    response = await search(
        client, alice, {"query": "document", "limit": 10, "snippetsPerResult": 3}
    )
    hits = response.json()["data"]["result"]["results"]
    assert len(hits) == 10
    assert max(len(hit["snippets"]) for hit in hits) == 3
    response = await search(
        client, alice, {"query": "document", "limit": 1, "snippetsPerResult": 1}
    )
    hits = response.json()["data"]["result"]["results"]
    assert len(hits) == 1 and len(hits[0]["snippets"]) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "query"),
        ({"query": "a"}, "query"),
        ({"query": "  a  "}, "query"),
        ({"query": "x" * 501}, "query"),
        ({"query": 42}, "query"),
        ({"query": "upload", "limit": 0}, "limit"),
        ({"query": "upload", "limit": 11}, "limit"),
        ({"query": "upload", "limit": "3"}, "limit"),
        ({"query": "upload", "snippetsPerResult": 0}, "snippetsPerResult"),
        ({"query": "upload", "snippetsPerResult": 4}, "snippetsPerResult"),
        ({"query": "upload", "orgId": "org_x"}, "orgId"),
    ],
)
async def test_bad_input_is_a_400_naming_the_field(
    client: httpx.AsyncClient, alice: Tenant, body: dict[str, Any], field: str
) -> None:
    response = await search(client, alice, body)
    assert response.status_code == 400
    message = response.json()["error"]["errorMessage"]
    assert message.startswith(f"Invalid request: {field}"), message


async def test_a_key_is_needed_but_no_workspace(client: httpx.AsyncClient, alice: Tenant) -> None:
    anonymous = await client.post(SEARCH, json={"query": "upload"})
    assert anonymous.status_code == 401
    in_workspace = await client.post(SEARCH, json={"query": "upload"}, headers=alice.headers())
    assert in_workspace.status_code == 200


async def test_nonsense_finds_nothing(client: httpx.AsyncClient, alice: Tenant) -> None:
    response = await search(client, alice, {"query": "zzqx vvbnm"})
    assert response.json()["data"]["result"]["results"] == []


async def test_graphql_returns_the_same_results(client: httpx.AsyncClient, alice: Tenant) -> None:
    query = """query($input: SearchHelpCenterInput!) {
      helpCenterSearch(input: $input) {
        query highlight
        results { id title url score matchedBy snippets { section text url } }
      }
    }"""
    body = {"query": "duplicate invoice number", "limit": 2, "snippetsPerResult": 1}
    response = await client.post(
        "/v1/graphql",
        json={"query": query, "variables": {"input": body}},
        headers=alice.headers(org=None),
    )
    assert response.status_code == 200, response.text
    graph = response.json()["data"]["helpCenterSearch"]
    rest = (await search(client, alice, body)).json()["data"]["result"]
    assert graph["results"] == rest["results"]
    assert graph["results"][0]["id"] == "duplicates"


async def test_graphql_bad_limit_names_the_field(client: httpx.AsyncClient, alice: Tenant) -> None:
    response = await client.post(
        "/v1/graphql",
        json={"query": '{ helpCenterSearch(input: {query: "upload", limit: 11}) { query } }'},
        headers=alice.headers(org=None),
    )
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "BAD_REQUEST"
    assert "limit" in error["message"]


async def test_article_page_is_html_with_a_strict_policy(client: httpx.AsyncClient) -> None:
    response = await client.get("/help/where-clauses")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    csp = response.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert "script-src" not in csp
    page = response.text
    assert "<h1>Filtering with where-clauses</h1>" in page
    assert '<h2 id="regular-expressions">Regular expressions</h2>' in page
    assert "<table>" in page and "<code>" in page
    assert "<script" not in page


async def test_unknown_article_is_a_404_page(client: httpx.AsyncClient) -> None:
    for path in ("/help/no-such-article", "/help/..%2Fetc%2Fpasswd", "/help/<script>"):
        response = await client.get(path)
        assert response.status_code == 404
        assert response.headers["content-type"].startswith("text/html")
        assert "Article not found" in response.text
        assert "<script>" not in response.text


async def test_help_index_lists_every_article(client: httpx.AsyncClient) -> None:
    from engines.help_center import default_help_center

    response = await client.get("/help")
    assert response.status_code == 200
    for article in default_help_center().articles:
        assert f'href="/help/{article.id}"' in response.text


async def test_help_with_a_trailing_slash_is_the_index(client: httpx.AsyncClient) -> None:
    """``/help/`` was an "Article not found" 404 while ``/api/`` redirected."""
    response = await client.get("/help/", params={"q": "regex"})
    assert response.status_code == 308
    assert response.headers["location"] == "/help?q=regex"
    followed = await client.get("/help/", follow_redirects=True)
    assert followed.status_code == 200 and "fincap help center" in followed.text


async def test_help_index_search_marks_and_escapes(client: httpx.AsyncClient) -> None:
    response = await client.get("/help", params={"q": "regex <b>"})
    assert response.status_code == 200
    assert "<mark>" in response.text
    assert "<b>" not in response.text and "&lt;b&gt;" in response.text


async def test_german_question_is_answered_by_meaning(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    response = await search(client, alice, {"query": "Wie lade ich eine Rechnung hoch?"})
    hits = response.json()["data"]["result"]["results"]
    assert hits[0]["id"] == "uploading-files"
    assert hits[0]["matchedBy"] == ["meaning"]  # no word of the question is in the articles
    assert hits[0]["snippets"][0]["text"].startswith("Upload a photo")  # the article's opening


async def test_graphql_answers_a_paraphrase_by_meaning(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    response = await client.post(
        "/v1/graphql",
        json={
            "query": '{ helpCenterSearch(input: {query: "I removed a receipt by mistake", '
            "limit: 1}) { results { id matchedBy snippets { section text } } } }"
        },
        headers=alice.headers(org=None),
    )
    hits = response.json()["data"]["helpCenterSearch"]["results"]
    assert [hit["id"] for hit in hits] == ["archiving-documents"]
    assert "meaning" in hits[0]["matchedBy"]


async def test_help_page_search_answers_german_and_short_queries(client: httpx.AsyncClient) -> None:
    response = await client.get("/help", params={"q": "Welche Dateiformate werden unterstützt?"})
    assert response.status_code == 200
    assert 'href="/help/uploading-files"' in response.text
    short = await client.get("/help", params={"q": "a"})
    assert short.status_code == 200 and "at least 2 characters" in short.text
    nothing = await client.get("/help", params={"q": "zzqx vvbnm"})
    assert "No article answers that" in nothing.text
