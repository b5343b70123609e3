"""Relay cursor connections: how the GraphQL face pages a list.

``documentsConnection(filter, orderBy, first, after, last, before)`` answers a
``DocumentConnection``: the page's ``edges`` (each node with its own cursor) and ``nodes``
(the same documents, for a client that needs no cursors), ``pageInfo`` and ``totalCount`` (read
only when the query selects it). Cursors are opaque: signed by the server and bound to the
query and the workspace that produced them.

The lists nested in a workspace or a document page the same way, with the same ``PageInfo``:
``Workspace.members`` (``MemberConnection``), ``Workspace.rules`` (``RuleConnection``),
``Document.duplicatesConnection`` (a ``DocumentConnection``) and
``Document.editHistoryConnection`` (``EditRecordConnection``). Their ``totalCount`` is always
known: such a list is short and read whole.

``Workspace.transactions(filter, orderBy, first, after)`` pages the bank transactions
(``TransactionConnection``) through transactions.search: forward only, its ``totalCount``
counted by transactions.count when selected.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from schema.documents import Document, EditRecord
from schema.members import Member
from schema.rules import Rule
from schema.transactions import BankTransaction

# As many as a documents.search page may hold.
MAX_PAGE = 100
DEFAULT_PAGE = 20


class PageInfo(BaseModel):
    """Where a page stands in its list (Relay's PageInfo)."""

    hasNextPage: bool = Field(description="More records follow the page's end")
    hasPreviousPage: bool = Field(description="Records precede the page's start")
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


class MemberEdge(BaseModel):
    """One member of a page and its position (pass it as after or before)."""

    cursor: str = Field(description="This member's position in the list (opaque)")
    node: Member = Field(description="The member")


class MemberConnection(BaseModel):
    """A page of the workspace's members, oldest first (members.list's reads and scopes)."""

    totalCount: int = Field(description="Members of the workspace in all")
    pageInfo: PageInfo = Field(description="Where this page stands")
    edges: list[MemberEdge] = Field(description="The members with their cursors")
    nodes: list[Member] = Field(description="The members of the page, without cursors")


class RuleEdge(BaseModel):
    """One rule of a page and its position (pass it as after or before)."""

    cursor: str = Field(description="This rule's position in the list (opaque)")
    node: Rule = Field(description="The rule")


class RuleConnection(BaseModel):
    """A page of the workspace's automation rules, newest first (rules.list's reads and
    scopes)."""

    totalCount: int = Field(description="Rules the list holds in all (disabled ones if asked)")
    pageInfo: PageInfo = Field(description="Where this page stands")
    edges: list[RuleEdge] = Field(description="The rules with their cursors")
    nodes: list[Rule] = Field(description="The rules of the page, without cursors")


class EditRecordEdge(BaseModel):
    """One correction of a page and its position (pass it as after or before)."""

    cursor: str = Field(description="This correction's position in the history (opaque)")
    node: EditRecord = Field(description="The correction")


class EditRecordConnection(BaseModel):
    """A page of a document's corrections, oldest first."""

    totalCount: int = Field(description="Corrections of the document in all")
    pageInfo: PageInfo = Field(description="Where this page stands")
    edges: list[EditRecordEdge] = Field(description="The corrections with their cursors")
    nodes: list[EditRecord] = Field(description="The corrections of the page, without cursors")


class TransactionEdge(BaseModel):
    """One transaction of a page and its position (pass it as after)."""

    cursor: str = Field(description="This transaction's position in the list (opaque)")
    node: BankTransaction = Field(description="The transaction")


class TransactionConnection(BaseModel):
    """A page of bank transactions: edges with cursors, the same transactions as nodes, where
    the page stands, and (when selected) how many the filter matches."""

    totalCount: int | None = Field(
        default=None,
        description="Transactions the filter matches in all (counted only when asked)",
    )
    pageInfo: PageInfo = Field(description="Where this page stands")
    edges: list[TransactionEdge] = Field(description="The transactions with their cursors")
    nodes: list[BankTransaction] = Field(
        description="The transactions of the page, without cursors"
    )
