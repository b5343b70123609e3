"""Global object identification: the ``Node`` interface, ``node(id:)`` and ``nodes(ids:)``.

Part of the GraphQL face. A document is a ``Node``: its id (``doc_…``) is unique across every
workspace, so a client that kept one can fetch it again without knowing where it came from.
Each read goes through the request's ``GraphSession`` DataLoader, which authorizes the
request for its workspace with documents.get's scopes and reads only that workspace's
documents: another workspace's id is simply null, as an id of nothing is.
"""

from __future__ import annotations

from typing import Any, Optional

import strawberry

from app.graphql.builder import Graph, Link, LinkArgument
from app.graphql.graph import READS_DOCUMENTS, session_of
from resolvers.framework.errors import BadRequest
from resolvers.framework.registry import Registry
from schema.connections import MAX_PAGE
from schema.documents import Document


@strawberry.interface(
    name="Node", description="A record with an id unique across every workspace (node(id:))"
)
class Node:
    id: strawberry.ID = strawberry.field(description="Its id; node(id:) fetches it again")

    @classmethod
    def resolve_type(cls, obj: Any, info: strawberry.Info, type_: Any) -> str:
        if isinstance(obj, Document):
            return "Document"
        raise TypeError(f"{type(obj).__name__} is no Node")


async def _documents(info: strawberry.Info, ids: list[str]) -> dict[str, Document]:
    session = session_of(info)
    ctx = await session.authorized(None, session.permissions_of(READS_DOCUMENTS))
    # Only ids a document can have: anything else is simply not found.
    wanted = [i for i in dict.fromkeys(ids) if i.startswith("doc_")]
    found = await session.load_documents(ctx.require_workspace(), wanted)
    return {document.id: document for document in found}


async def node(root: Any, info: strawberry.Info, arguments: dict[str, Any] | None) -> Any:
    """The record with this id in the request's workspace; null when there is none."""
    wanted = str((arguments or {})["id"])
    return (await _documents(info, [wanted])).get(wanted)


async def nodes(root: Any, info: strawberry.Info, arguments: dict[str, Any] | None) -> Any:
    """The records with these ids, in their order; null for each that is not found."""
    ids = [str(i) for i in (arguments or {})["ids"]]
    if len(ids) > MAX_PAGE:
        raise BadRequest(f"Invalid request: ids: at most {MAX_PAGE} (got {len(ids)})")
    found = await _documents(info, ids)
    return [found.get(i) for i in ids]


def node_graph(registry: Registry, graph: Graph) -> Graph:
    """``graph`` with ``node``/``nodes`` and Document as a Node (where documents.get is)."""
    if registry.get(READS_DOCUMENTS) is None:
        return graph
    links = (
        Link(
            name="node",
            returns=Optional[Node],  # noqa: UP045
            resolve=node,
            arguments=(LinkArgument("id", strawberry.ID, "A record's id", required=True),),
            description="The record with this id in this workspace (documents for now); "
            "null when this workspace has none. Needs read_documents.",
        ),
        Link(
            name="nodes",
            returns=Optional[list[Optional[Node]]],  # noqa: UP045
            resolve=nodes,
            arguments=(
                LinkArgument("ids", list[strawberry.ID], f"Up to {MAX_PAGE} ids", required=True),
            ),
            description="The records with these ids, in order; null for each this workspace "
            "does not have. Needs read_documents.",
        ),
    )
    return Graph(
        links=(*graph.links, *links),
        deprecated=graph.deprecated,
        interfaces={**graph.interfaces, Document: (Node,)},
    )
