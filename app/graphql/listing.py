"""The GraphQL-native document listing: ``documentsConnection`` on Query and on Workspace.

Part of the GraphQL face. Its arguments are generated from the declarations
(``app.graphql.filters``): ``filter: DocumentFilter`` is translated to the where-clause REST's
documents.search takes (``domain.typed_filters.translate``) and ``orderBy`` to its sortBy and
sortOrder; the page is read by ``resolvers.resources.documents.connection`` with the same
compiler, limits and store reads, under the scopes documents.search declares. What the query
selects decides what is read (the node fields) and whether ``totalCount`` is counted.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Any

import strawberry
from pydantic import BaseModel, ValidationError

from app.graphql.declarations import Graph, Link, LinkArgument
from app.graphql.filters import FilterTypes, constant_enum, listing_inputs
from app.graphql.graph import session_of
from app.graphql.selection import connection_selection, group_selection
from domain.documents import SEARCH_FILTERS, AggregateKey
from domain.typed_filters import FilterError, TranslatedFilter, translate
from domain.where import Filterable
from resolvers.framework.errors import BadRequest
from resolvers.framework.registry import Registry
from resolvers.resources.documents.aggregate import document_aggregate
from resolvers.resources.documents.connection import ConnectionRequest, document_connection
from schema.aggregates import KEY_MEANINGS, DocumentAggregate
from schema.connections import DEFAULT_PAGE, MAX_PAGE, DocumentConnection
from schema.documents import Document, SortField
from schema.value_meanings import meaning_of
from schema.workspaces import Workspace

SEARCH = "documents.search"
COUNT = "documents.count"


@cache
def document_inputs() -> FilterTypes:
    """``DocumentFilter``, ``DocumentOrderBy`` and their parts, generated once."""
    described = dict(field_descriptions(Document))
    return listing_inputs(
        "Document", SEARCH_FILTERS, typing.get_args(SortField), described, meaning_of
    )


def field_descriptions(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, str]]:
    """Each field of ``model`` and of the models inside it, dotted, with its description."""
    for name, info in model.model_fields.items():
        if info.description:
            yield prefix + name, str(info.description)
        for inner in typing.get_args(info.annotation) or (info.annotation,):
            if isinstance(inner, type) and issubclass(inner, BaseModel) and prefix.count(".") < 3:
                yield from field_descriptions(inner, f"{prefix}{name}.")


def connection_arguments() -> tuple[LinkArgument, ...]:
    inputs = document_inputs()
    return (
        LinkArgument("filter", inputs.filter, "Which documents (omitted: all active ones)"),
        LinkArgument(
            "orderBy",
            list[inputs.order_by],  # type: ignore[name-defined]
            "The order: one key today, ties broken by id (omitted: docDate DESC)",
        ),
        LinkArgument(
            "search",
            str,
            "Ranked search: the documents matching the filter, best first by their words "
            "(prefixes and one-letter typos count) and their meaning in any language; paged "
            "forward (first/after), without orderBy",
        ),
        *relay_arguments(),
    )


def relay_arguments() -> tuple[LinkArgument, ...]:
    """``first``, ``after``, ``last``, ``before``: what every connection field takes."""
    return (
        LinkArgument(
            "first", int, f"Page forward: this many (1-{MAX_PAGE}; default {DEFAULT_PAGE})"
        ),
        LinkArgument("after", str, "Page forward from this cursor (an edge's or endCursor)"),
        LinkArgument("last", int, f"Page backward: this many (1-{MAX_PAGE})"),
        LinkArgument("before", str, "Page backward from this cursor (startCursor)"),
    )


@cache
def group_by_enum() -> Any:
    """``DocumentGroupBy``: the declared group keys (``AggregateKey``) in UPPER_CASE."""
    return constant_enum(
        "DocumentGroupBy",
        typing.get_args(AggregateKey),
        "What documentsAggregate groups by (several at once; currency always splits groups)",
        lambda values, value: KEY_MEANINGS[value],
    )


def aggregate_arguments() -> tuple[LinkArgument, ...]:
    return (
        LinkArgument("filter", document_inputs().filter, "Which documents (omitted: all)"),
        LinkArgument(
            "groupBy",
            list[group_by_enum()],  # type: ignore[misc]
            "The keys, several at once (omitted: by currency only)",
        ),
        LinkArgument(
            "fillGaps",
            bool,
            "With exactly one time key: every bucket of the range for every combination of "
            "the other keys, empty ones with count 0",
        ),
    )


async def documents_aggregate(
    root: Any, info: strawberry.Info, arguments: dict[str, Any] | None
) -> DocumentAggregate:
    """Documents grouped by several keys, in the request's workspace or the Workspace."""
    session = session_of(info)
    org_id = root.id if isinstance(root, Workspace) else None
    ctx = await session.authorized(org_id, session.permissions_of(COUNT))
    arguments = arguments or {}
    translated = translated_filter(arguments.get("filter"))
    return await document_aggregate(
        ctx,
        translated.where,
        arguments.get("groupBy") or [],
        fill_gaps=bool(arguments.get("fillGaps")),
        # Minimums and maximums only when selected: without them the rollups can answer.
        extremes=bool({"min", "max"} & group_selection(info)),
        locate=translated.locate,
    )


def translated_filter(
    value: Any, fields: Mapping[str, Filterable] = SEARCH_FILTERS
) -> TranslatedFilter:
    """A typed filter of a listing of ``fields`` as its where-clause; a 400 naming the
    filter's place when it has none."""
    try:
        return translate(value, fields)
    except FilterError as error:
        raise BadRequest(f"Invalid request: {error}") from None
    except ValidationError as error:
        problem = error.errors()[0]
        raise BadRequest(f"Invalid request: filter: {problem['msg']}") from None


def connection_request(arguments: dict[str, Any], info: strawberry.Info) -> ConnectionRequest:
    """The page a connection field asks for, checked: filter, order, Relay arguments."""
    translated = translated_filter(arguments.get("filter"))
    order_by = arguments.get("orderBy") or []
    if len(order_by) > 1:
        raise BadRequest("Invalid request: orderBy: one key (ties are broken by id)")
    search = arguments.get("search")
    if search and search.strip() and order_by:
        raise BadRequest("Invalid request: orderBy: a search is ordered by relevance; omit orderBy")
    key = order_by[0] if order_by else {"field": "docDate"}
    with_total, selected = connection_selection(info, Document)
    return ConnectionRequest(
        where=translated.where,
        sort_by=typing.cast(SortField, key["field"]),
        order=1 if key.get("direction") == "ASC" else -1,
        first=arguments.get("first"),
        after=arguments.get("after"),
        last=arguments.get("last"),
        before=arguments.get("before"),
        with_total=with_total,
        fields=["id", *sorted(selected - {"id"})],
        locate=translated.locate,
        search=search,
    )


async def documents_connection(
    root: Any, info: strawberry.Info, arguments: dict[str, Any] | None
) -> DocumentConnection:
    """A page of documents (Relay connection) in the request's workspace, or in the
    Workspace it is asked of."""
    session = session_of(info)
    org_id = root.id if isinstance(root, Workspace) else None
    ctx = await session.authorized(org_id, session.permissions_of(SEARCH))
    request = connection_request(arguments or {}, info)
    page = await document_connection(ctx, request)
    session.remember(page.nodes, ctx.require_workspace())
    return page


DEPRECATED_BY_CONNECTION = (
    "Use documentsConnection(filter, orderBy, first, after), or documentsConnection(search, "
    "filter, first, after) for a ranked search: typed filters, cursors per edge, totalCount and "
    "pageInfo"
)


def listing_graph(registry: Registry, graph: Graph) -> Graph:
    """``graph`` with ``documentsConnection`` on Query and Workspace (where the registry has
    documents.search), and the capability-shaped listings it replaces marked deprecated."""
    if registry.get(SEARCH) is None:
        return graph
    arguments = connection_arguments()
    description = (
        "Documents as a Relay connection: typed filter, orderBy, first/after or last/before; "
        "totalCount counted only when selected. With search: ranked by words and meaning, "
        "best first, paged forward. Needs read_documents."
    )
    links = [
        Link(
            name="documentsConnection",
            returns=DocumentConnection | None,
            resolve=documents_connection,
            arguments=arguments,
            description=description,
        )
    ]
    if registry.get(COUNT) is not None:
        aggregate = Link(
            name="documentsAggregate",
            returns=DocumentAggregate | None,
            resolve=documents_aggregate,
            arguments=aggregate_arguments(),
            description="Documents grouped by several keys at once (month and category…): "
            "count, and per currency sum, avg, min, max and the sum converted to the "
            "workspace's currency. From the rollups where they cover the filter and keys and "
            "min/max are not selected, else one aggregation. Needs read_documents.",
        )
        links += [aggregate, dataclasses.replace(aggregate, model=Workspace)]
    replaced = []
    for link in graph.links:
        if link.model is Workspace and link.name == "documents":
            link = dataclasses.replace(link, deprecation_reason=DEPRECATED_BY_CONNECTION)
            links.append(
                Link(
                    name="documentsConnection",
                    model=Workspace,
                    returns=DocumentConnection | None,
                    resolve=documents_connection,
                    arguments=arguments,
                    description=description.replace("Documents", "This workspace's documents"),
                )
            )
        replaced.append(link)
    deprecated = {**graph.deprecated}
    spec = registry.get(SEARCH)
    if spec is not None:
        deprecated[spec.name] = DEPRECATED_BY_CONNECTION
    return dataclasses.replace(graph, links=(*replaced, *links), deprecated=deprecated)
