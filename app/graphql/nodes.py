r"""Global object identification: the ``Node`` interface, ``node(id:)`` and ``nodes(ids:)``.

Part of the GraphQL face. A document, an automation rule and a bank transaction are
``Node``\ s: their ids (``doc_…``, ``rul_…``, ``txn_…``) are unique across every workspace, so
a client that kept one can fetch it again without knowing where it came from. The id's prefix
says which kind of record it names. Documents are read at once through the request's
``GraphSession`` (``read_documents``: one read for the whole batch, kept in its DataLoader for
links), authorized for the request's workspace with documents.get's scopes, and only that
workspace's documents are read; transactions are read as transactions.get reads them
(its scopes and roles), through a DataLoader, in the request's workspace only; rules are read
as rules.list reads them, under its scopes and roles, in the request's workspace only. Another
workspace's id is simply null, as an id of nothing is. Members are no Nodes: a member is a
person in one workspace, with no id of its own (their user id is the same in every workspace
they belong to).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Optional

import strawberry
from pydantic import BaseModel

from app.graphql.declarations import Graph, Link, LinkArgument
from app.graphql.graph import READS_DOCUMENTS, session_of
from app.graphql.transactions import READS_TRANSACTIONS, transactions_by_ids
from resolvers.framework.errors import BadRequest
from resolvers.framework.registry import Registry
from resolvers.resources.rules import rules_by_id
from schema.connections import MAX_PAGE
from schema.documents import Document
from schema.rules import Rule
from schema.transactions import BankTransaction

READS_RULES = "rules.list"


@strawberry.interface(
    name="Node", description="A record with an id unique across every workspace (node(id:))"
)
class Node:
    id: strawberry.ID = strawberry.field(description="Its id; node(id:) fetches it again")

    @classmethod
    def resolve_type(cls, obj: Any, info: strawberry.Info, type_: Any) -> str:
        if isinstance(obj, Document):
            return "Document"
        if isinstance(obj, Rule):
            return "Rule"
        if isinstance(obj, BankTransaction):
            return "BankTransaction"
        raise TypeError(f"{type(obj).__name__} is no Node")


async def _documents(info: strawberry.Info, ids: list[str]) -> dict[str, Any]:
    session = session_of(info)
    ctx = await session.authorized(None, session.permissions_of(READS_DOCUMENTS))
    return {document.id: document for document in await session.read_documents(ctx, ids)}


async def _rules(info: strawberry.Info, ids: list[str]) -> dict[str, Any]:
    ctx = await session_of(info).allowed(READS_RULES, None)
    return {rule.id: rule for rule in await rules_by_id(ctx, ids)}


Reader = Callable[[strawberry.Info, list[str]], Awaitable[dict[str, Any]]]
# What each id prefix names: the capability whose reads (and scopes) it takes, and how a batch
# of such ids is read in the request's workspace.
KINDS: dict[str, tuple[str, Reader]] = {
    "doc_": (READS_DOCUMENTS, _documents),
    "rul_": (READS_RULES, _rules),
    "txn_": (READS_TRANSACTIONS, transactions_by_ids),
}


async def _records(info: strawberry.Info, ids: list[str]) -> dict[str, Any]:
    """The records with these ids in the request's workspace, by id; one read per kind asked
    for. Ids of no kind (or of a kind this registry lacks) are simply not found."""
    session = session_of(info)
    wanted = list(dict.fromkeys(ids))
    kinds = [
        (read, batch)
        for prefix, (slug, read) in KINDS.items()
        if session.registry.get(slug) is not None
        if (batch := [i for i in wanted if i.startswith(prefix)])
    ]
    if not kinds:
        await session.authorized(None, ())  # signed in and a member, whatever the ids name
        return {}
    if len(kinds) == 1:  # the usual case: each reader authorizes for what it reads
        read, batch = kinds[0]
        return await read(info, batch)
    found: dict[str, Any] = {}
    for records in await asyncio.gather(*(read(info, batch) for read, batch in kinds)):
        found.update(records)
    return found


async def node(root: Any, info: strawberry.Info, arguments: dict[str, Any] | None) -> Any:
    """The record with this id in the request's workspace; null when there is none."""
    wanted = str((arguments or {})["id"])
    return (await _records(info, [wanted])).get(wanted)


async def nodes(root: Any, info: strawberry.Info, arguments: dict[str, Any] | None) -> Any:
    """The records with these ids, in their order; null for each that is not found."""
    ids = [str(i) for i in (arguments or {})["ids"]]
    if len(ids) > MAX_PAGE:
        raise BadRequest(f"Invalid request: ids: at most {MAX_PAGE} (got {len(ids)})")
    found = await _records(info, ids)
    return [found.get(i) for i in ids]


def node_models(registry: Registry) -> list[type[BaseModel]]:
    """The models that are Nodes in a schema of ``registry``."""
    models: list[type[BaseModel]] = [Document]
    if registry.get(READS_RULES) is not None:
        models.append(Rule)
    if registry.get(READS_TRANSACTIONS) is not None:
        models.append(BankTransaction)
    return models


def node_graph(registry: Registry, graph: Graph) -> Graph:
    """``graph`` with ``node``/``nodes`` and Document (and Rule, where rules.list is) as Nodes
    (where documents.get is)."""
    if registry.get(READS_DOCUMENTS) is None:
        return graph
    links = (
        Link(
            name="node",
            returns=Optional[Node],  # noqa: UP045
            resolve=node,
            arguments=(LinkArgument("id", strawberry.ID, "A record's id", required=True),),
            description="The record with this id in this workspace (a document, an "
            "automation rule or a bank transaction); null when this workspace has none. Needs "
            "read_documents for a document or a transaction, read_rules for a rule.",
        ),
        Link(
            name="nodes",
            returns=Optional[list[Optional[Node]]],  # noqa: UP045
            resolve=nodes,
            arguments=(
                LinkArgument("ids", list[strawberry.ID], f"Up to {MAX_PAGE} ids", required=True),
            ),
            description="The records with these ids, in order; null for each this workspace "
            "does not have. Needs the scopes node(id:) needs for each kind asked for.",
        ),
    )
    return Graph(
        links=(*graph.links, *links),
        deprecated=graph.deprecated,
        interfaces={**graph.interfaces, **{model: (Node,) for model in node_models(registry)}},
    )
