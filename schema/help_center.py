"""Contract models of the help-center resource."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from schema.base import CapabilityInput, CapabilityOutput, Integer

MAX_QUERY = 500


class SearchHelpCenter(CapabilityInput):
    """Input of help-center.search."""

    query: str = Field(
        min_length=2,
        max_length=MAX_QUERY,
        description="A question or keywords, in any language",
    )
    limit: Integer = Field(default=3, ge=1, le=10, description="Articles returned at most")
    snippetsPerResult: Integer = Field(
        default=2, ge=1, le=3, description="Snippets returned per article at most"
    )

    @field_validator("query")
    @classmethod
    def _meaningful(cls, value: str) -> str:
        if len(value.strip()) < 2:
            raise ValueError("must hold at least 2 characters besides spaces")
        return value.strip()


class HelpSnippet(CapabilityOutput):
    """One of an article's best passages, with the query's words marked."""

    section: str = Field(description="Heading of the section the passage is in ('' at the top)")
    text: str = Field(
        description="Plain text of the passage (Markdown removed) cut around the matches; each "
        "matched word is wrapped in ** (as **this**), and … marks a cut"
    )
    url: str = Field(description="The article's page, at this section")


class HelpArticleResult(CapabilityOutput):
    """An article that answers the query."""

    id: str = Field(description="Article id; its page is GET /help/{id}")
    title: str = Field(description="The article's title")
    url: str = Field(description="The article's page (HTML)")
    score: float = Field(
        description="Relevance in (0, 1]: 1 is first for both words and meaning; "
        "comparable within one query only"
    )
    matchedBy: list[Literal["words", "meaning"]] = Field(
        description="Which side found it: its words (full-text) or its meaning (embeddings)"
    )
    snippets: list[HelpSnippet] = Field(description="Its passages that best answer the query")


class HelpSearchResults(CapabilityOutput):
    """Articles best first, grouped: each article once, with its best snippets."""

    query: str = Field(description="The query answered")
    results: list[HelpArticleResult] = Field(description="The articles, best first")
    highlight: str = Field(description="The mark around matched words in snippet texts: **")
