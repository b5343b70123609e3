"""In GraphQL the selection is the output mode: what a query selects of the documents a field
lists is what the capability reads from the store and returns (``Context.selected_fields``).

``listed_fields`` finds those fields in the operation below the field being resolved (its
``documents``): fragments and inline fragments expanded, a literal ``@skip``/``@include``
obeyed. A field a variable may skip counts as selected: reading one field too many is harmless,
one too few would show a null for a value the document has.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import strawberry
from graphql import (
    BooleanValueNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLObjectType,
    InlineFragmentNode,
    SelectionNode,
    SelectionSetNode,
    get_named_type,
)
from pydantic import BaseModel

from app.graphql.builder import model_field_of

# The field of a capability's output that lists the documents (documents.search's page).
LISTED = "documents"


def lists_documents(output: type[BaseModel], document: type[BaseModel]) -> bool:
    """Whether ``output`` lists ``document``s in its ``documents`` field."""
    field = output.model_fields.get(LISTED)
    return field is not None and field.annotation == list[document]  # type: ignore[valid-type]


def listed_fields(info: strawberry.Info, model: type[BaseModel]) -> frozenset[str]:
    """The ``model`` fields the query selects of the documents the resolved field lists."""
    # strawberry's own ``selected_fields`` leaves @skip/@include unevaluated and fragments as
    # nodes to walk anyway: graphql-core's info holds the plain AST.
    raw = info._raw_info
    page = get_named_type(raw.return_type)
    listed = page.fields.get(LISTED) if isinstance(page, GraphQLObjectType) else None
    document = get_named_type(listed.type) if listed is not None else None
    if not isinstance(document, GraphQLObjectType):
        return frozenset()
    sets = [node.selection_set for node in raw.field_nodes if node.selection_set]
    below = [
        node.selection_set
        for node in _fields(sets, raw.fragments)
        if node.name.value == LISTED and node.selection_set
    ]
    names = set()
    for node in _fields(below, raw.fragments):
        field = document.fields.get(node.name.value)  # None: __typename
        name = model_field_of(field) if field is not None else None
        if name in model.model_fields:
            names.add(name)
    return frozenset(names)


def _fields(
    sets: Iterable[SelectionSetNode], fragments: Mapping[str, FragmentDefinitionNode]
) -> Iterator[FieldNode]:
    for selection_set in sets:
        for selection in selection_set.selections:
            if not _included(selection):
                continue
            if isinstance(selection, FieldNode):
                yield selection
            elif isinstance(selection, InlineFragmentNode):
                yield from _fields([selection.selection_set], fragments)
            elif isinstance(selection, FragmentSpreadNode):
                # Validation refused unknown and cyclic fragments before execution.
                fragment = fragments.get(selection.name.value)
                if fragment is not None:
                    yield from _fields([fragment.selection_set], fragments)


def _included(selection: SelectionNode) -> bool:
    """False only for a literal ``@skip(if: true)`` or ``@include(if: false)``."""
    for directive in selection.directives or ():
        name = directive.name.value
        if name not in ("skip", "include"):
            continue
        value: Any = next(
            (arg.value for arg in directive.arguments or () if arg.name.value == "if"), None
        )
        if isinstance(value, BooleanValueNode) and value.value == (name == "skip"):
            return False
    return True


def connection_selection(
    info: strawberry.Info, model: type[BaseModel]
) -> tuple[bool, frozenset[str]]:
    """What a connection query selects: whether ``totalCount``, and the ``model`` fields of
    its documents (under ``nodes`` and under ``edges { node }``)."""
    raw = info._raw_info
    connection = get_named_type(raw.return_type)
    if not isinstance(connection, GraphQLObjectType):
        return False, frozenset()
    top = list(
        _fields([n.selection_set for n in raw.field_nodes if n.selection_set], raw.fragments)
    )
    total = any(node.name.value == "totalCount" for node in top)
    below = [n.selection_set for n in top if n.name.value == "nodes" and n.selection_set]
    edges = [n.selection_set for n in top if n.name.value == "edges" and n.selection_set]
    below += [
        n.selection_set
        for n in _fields(edges, raw.fragments)
        if n.name.value == "node" and n.selection_set
    ]
    nodes = connection.fields.get("nodes")
    document = get_named_type(nodes.type) if nodes is not None else None
    if not isinstance(document, GraphQLObjectType):
        return total, frozenset()
    names = set()
    for node in _fields(below, raw.fragments):
        field = document.fields.get(node.name.value)
        name = model_field_of(field) if field is not None else None
        if name in model.model_fields:
            names.add(name)
    return total, frozenset(names)


def group_selection(info: strawberry.Info) -> frozenset[str]:
    """The fields an aggregate query selects of each of its ``groups`` (``count``, ``sum``,
    ``min``…): what the store must compute."""
    raw = info._raw_info
    top = _fields([n.selection_set for n in raw.field_nodes if n.selection_set], raw.fragments)
    groups = [n.selection_set for n in top if n.name.value == "groups" and n.selection_set]
    return frozenset(node.name.value for node in _fields(groups, raw.fragments))


def node_field_names(info: strawberry.Info) -> frozenset[str]:
    """The GraphQL names of the fields a connection query selects of its nodes (under
    ``nodes`` and ``edges { node }``), links included: what a connection must allow for
    before it reads (a costly link asked of a whole page)."""
    raw = info._raw_info
    top = list(
        _fields([n.selection_set for n in raw.field_nodes if n.selection_set], raw.fragments)
    )
    below = [n.selection_set for n in top if n.name.value == "nodes" and n.selection_set]
    edges = [n.selection_set for n in top if n.name.value == "edges" and n.selection_set]
    below += [
        n.selection_set
        for n in _fields(edges, raw.fragments)
        if n.name.value == "node" and n.selection_set
    ]
    return frozenset(node.name.value for node in _fields(below, raw.fragments))
