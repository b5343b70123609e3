"""Relay cursor connections: how the GraphQL face pages a list (documents first).

``documentsConnection(filter, orderBy, first, after, last, before)`` answers a
``DocumentConnection``: the page's ``edges`` (each node with its own cursor) and ``nodes``
(the same documents, for a client that needs no cursors), ``pageInfo`` and ``totalCount`` (read
only when the query selects it). Cursors are opaque: signed by the server and bound to the
query and the workspace that produced them.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from schema.documents import Document

# As many as a documents.search page may hold.
MAX_PAGE = 100
DEFAULT_PAGE = 20


class PageInfo(BaseModel):
    """Where a page stands in its list (Relay's PageInfo)."""

    hasNextPage: bool = Field(description="More documents follow the page's end")
    hasPreviousPage: bool = Field(description="Documents precede the page's start")
    startCursor: str | None = Field(default=None, description="The first edge's cursor")
    endCursor: str | None = Field(default=None, description="The last edge's cursor")


class DocumentEdge(BaseModel):
    """One document of a page and its position (pass it as after or before)."""

    cursor: str = Field(description="This document's position in the list (opaque)")
    node: Document = Field(description="The document")


class DocumentConnection(BaseModel):
    """A page of documents: edges with cursors, the same documents as nodes, where the page
    stands, and (when selected) how many documents the filter matches."""

    totalCount: int | None = Field(
        default=None, description="Documents the filter matches in all (counted only when asked)"
    )
    pageInfo: PageInfo = Field(description="Where this page stands")
    edges: list[DocumentEdge] = Field(description="The documents with their cursors")
    nodes: list[Document] = Field(description="The documents of the page, without cursors")
