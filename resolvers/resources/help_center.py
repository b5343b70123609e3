"""Capabilities of the help-center resource (public articles; no workspace)."""

from __future__ import annotations

import asyncio

from engines.help_center.fulltext import MARK_OPEN
from resolvers.framework.context import Context
from resolvers.framework.registry import capability
from schema.help_center import (
    HelpArticleResult,
    HelpSearchResults,
    HelpSnippet,
    SearchHelpCenter,
)


def article_url(base_url: str, article_id: str, anchor: str = "") -> str:
    """The public page of an article (``GET /help/{id}``), at a section when given."""
    return f"{base_url}/help/{article_id}" + (f"#{anchor}" if anchor else "")


@capability(
    "help-center.search",
    input=SearchHelpCenter,
    output=HelpSearchResults,
    permissions=[],
    effect="read",
    needs_workspace=False,
)
async def search(ctx: Context, args: SearchHelpCenter) -> HelpSearchResults:
    """Searches fincap's public help articles (uploads, extraction, corrections, duplicates,
    currencies, where clauses, API keys, workspaces, MCP and OAuth, the CLI, integrations,
    rules, billing, troubleshooting) by words and meaning, in any language: articles best first
    with their most relevant snippets. Needs no workspace or scope.
    """
    center = ctx.services.help_center()
    # Embedding the query is CPU work of a few milliseconds: off the event loop.
    hits = await asyncio.to_thread(
        center.search, args.query, limit=args.limit, snippets=args.snippetsPerResult
    )
    base = ctx.services.base_url
    return HelpSearchResults(
        query=args.query,
        highlight=MARK_OPEN,
        results=[
            HelpArticleResult(
                id=hit.article.id,
                title=hit.article.title,
                url=article_url(base, hit.article.id),
                score=hit.score,
                matchedBy=list(hit.matched_by),
                snippets=[
                    HelpSnippet(
                        section=snippet.section,
                        text=snippet.text,
                        url=article_url(base, hit.article.id, snippet.anchor),
                    )
                    for snippet in hit.snippets
                ],
            )
            for hit in hits
        ],
    )
