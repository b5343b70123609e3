"""Relay connections of the lists nested in a workspace or a document.

Part of the GraphQL face. ``Workspace.members`` and ``Workspace.rules`` page what members.list
and rules.list read, under their scopes and roles (a caller who may not list members gets the
error REST gives); ``Document.duplicatesConnection`` and ``Document.editHistoryConnection`` page
a document's duplicates (read like ``duplicates``, in the document's workspace) and its
corrections. Each list is short and read whole, then paged by
``resolvers.framework.connections.page_of`` with the same signed cursors and ``PageInfo`` as
``documentsConnection``; a cursor is bound to its list, its arguments and its workspace (and its
document). The plain ``duplicates`` and ``editHistory`` fields stay: they are the document's own
fields, whole, as REST returns them.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Any, TypeVar

import strawberry
from pydantic import BaseModel

from app.graphql.declarations import Graph, Link, LinkArgument
from app.graphql.graph import session_of
from app.graphql.listing import relay_arguments
from resolvers.framework.connections import Page, Relay, page_of
from resolvers.framework.registry import Registry
from resolvers.resources.rules import every_rule
from schema.connections import (
    DocumentConnection,
    DocumentEdge,
    EditRecordConnection,
    EditRecordEdge,
    MemberConnection,
    MemberEdge,
    RuleConnection,
    RuleEdge,
)
from schema.documents import Document, EditRecord
from schema.members import MemberList
from schema.workspaces import Workspace

C = TypeVar("C", bound=BaseModel)
LIST_MEMBERS = "members.list"
LIST_RULES = "rules.list"
# Where a record has no time of its own, it sorts first (by id among such).
NEVER = datetime(1970, 1, 1, tzinfo=UTC)


def connection(
    page: Page[Any], kind: type[C], edge: type[Any], records: list[Any] | None = None
) -> C:
    """``kind`` (a ``…Connection``) of ``page``: its edges of ``edge``, its nodes, where it
    stands and the total; ``records`` when the nodes are not the page's records themselves."""
    nodes = page.records if records is None else records
    return kind(
        totalCount=page.total,
        pageInfo=page.page_info,
        edges=[
            edge(cursor=cursor, node=node) for cursor, node in zip(page.cursors, nodes, strict=True)
        ],
        nodes=nodes,
    )


async def workspace_members(
    root: Workspace, info: strawberry.Info, arguments: dict[str, Any] | None
) -> MemberConnection:
    """This workspace's members, oldest first: members.list itself, paged."""
    session = session_of(info)
    relay = Relay.of(arguments)
    listed = await session.invoke(LIST_MEMBERS, {}, root.id)
    assert isinstance(listed, MemberList)
    page = page_of(
        listed.members,
        lambda member: (member.joinedAt, member.userId),
        relay,
        {"list": "members", "workspace": root.id},
        session.services.keyring,
    )
    return connection(page, MemberConnection, MemberEdge)


async def workspace_rules(
    root: Workspace, info: strawberry.Info, arguments: dict[str, Any] | None
) -> RuleConnection:
    """This workspace's automation rules, newest first, as rules.list reads them, paged."""
    session = session_of(info)
    relay = Relay.of(arguments)
    include_disabled = bool((arguments or {}).get("includeDisabled"))
    ctx = await session.allowed(LIST_RULES, root.id)
    workspace_id = ctx.require_workspace()
    ctx.services.api_calls.count(workspace_id)  # metered like one rules.list call
    rules = await every_rule(ctx, include_disabled=include_disabled)
    page = page_of(
        rules,
        lambda rule: (rule.createdAt, rule.id),
        relay,
        {"list": "rules", "workspace": workspace_id, "includeDisabled": include_disabled},
        ctx.services.keyring,
        descending=True,
    )
    return connection(page, RuleConnection, RuleEdge)


async def document_duplicates_connection(
    root: Document, info: strawberry.Info, arguments: dict[str, Any] | None
) -> DocumentConnection:
    """The active documents recorded as duplicates of this one, oldest first, paged."""
    session = session_of(info)
    relay = Relay.of(arguments)
    workspace_id = await session.workspace_of(root)
    ids = await session.stored(root, "duplicates")
    found = await session.load_documents(workspace_id, ids) if ids else []
    page = page_of(
        found,
        lambda document: (document.createdAt or NEVER, document.id),
        relay,
        {"list": "duplicates", "workspace": workspace_id, "document": root.id},
        session.services.keyring,
    )
    return connection(page, DocumentConnection, DocumentEdge)


async def document_edit_history_connection(
    root: Document, info: strawberry.Info, arguments: dict[str, Any] | None
) -> EditRecordConnection:
    """This document's corrections, oldest first, paged. The history only grows, so a
    correction's place in it is its position."""
    session = session_of(info)
    relay = Relay.of(arguments)
    workspace_id = await session.workspace_of(root)
    history: list[EditRecord] = await session.stored(root, "editHistory") or []
    page = page_of(
        list(enumerate(history)),
        lambda entry: (entry[0], str(entry[0])),
        relay,
        {"list": "editHistory", "workspace": workspace_id, "document": root.id},
        session.services.keyring,
    )
    records = [record for _, record in page.records]
    return connection(page, EditRecordConnection, EditRecordEdge, records)


def nested_graph(registry: Registry, graph: Graph) -> Graph:
    """``graph`` with the nested connections whose capabilities ``registry`` has."""
    relay = relay_arguments()
    links: list[Link] = [
        Link(
            name="duplicatesConnection",
            model=Document,
            returns=DocumentConnection | None,
            resolve=document_duplicates_connection,
            arguments=relay,
            description="The documents recorded as duplicates of this one, oldest first, as a "
            "Relay connection (duplicates lists them all at once)",
        ),
        Link(
            name="editHistoryConnection",
            model=Document,
            returns=EditRecordConnection | None,
            resolve=document_edit_history_connection,
            arguments=relay,
            description="Corrections of this document, oldest first, as a Relay connection "
            "(editHistory lists them all at once)",
        ),
    ]
    if registry.get(LIST_MEMBERS) is not None:
        links.append(
            Link(
                name="members",
                model=Workspace,
                returns=MemberConnection | None,
                resolve=workspace_members,
                arguments=relay,
                description="The workspace's members, oldest first, as a Relay connection "
                "(members.list's reads; open invitations are in membersList). Needs "
                "read_workspaces.",
            )
        )
    if registry.get(LIST_RULES) is not None:
        links.append(
            Link(
                name="rules",
                model=Workspace,
                returns=RuleConnection | None,
                resolve=workspace_rules,
                arguments=(
                    LinkArgument("includeDisabled", bool, "Also list disabled rules"),
                    *relay,
                ),
                description="The workspace's automation rules, newest first, as a Relay "
                "connection (rules.list's reads). Needs read_rules.",
            )
        )
    return dataclasses.replace(graph, links=(*graph.links, *links))
