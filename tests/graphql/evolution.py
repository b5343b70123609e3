"""The GraphQL contract's evolution rule, checked with graphql-core's ``find_breaking_changes``.

A change to the schema may break no client, except by removing what the previous contract
(the committed ``service.graphql``) already marked ``@deprecated``: a deprecated field, and the
types only deprecated fields lead to. Anything else graphql-core calls breaking (a field or
type removed, a type changed, an argument added as required …) is reported.
"""

from __future__ import annotations

import re

from graphql import (
    BreakingChange,
    BreakingChangeType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLNamedType,
    GraphQLObjectType,
    GraphQLSchema,
    GraphQLUnionType,
    build_schema,
    find_breaking_changes,
    get_named_type,
)


def _live_types(schema: GraphQLSchema) -> set[str]:
    """The types a client reaches from the roots without a deprecated field."""
    roots = [schema.query_type, schema.mutation_type, schema.subscription_type]
    seen: set[str] = set()
    stack: list[GraphQLNamedType] = [root for root in roots if root is not None]
    while stack:
        named = stack.pop()
        if named.name in seen:
            continue
        seen.add(named.name)
        if isinstance(named, GraphQLObjectType | GraphQLInterfaceType):
            for field in named.fields.values():
                if field.deprecation_reason:
                    continue
                stack.append(get_named_type(field.type))
                stack.extend(get_named_type(arg.type) for arg in field.args.values())
            stack.extend(named.interfaces)
        if isinstance(named, GraphQLInterfaceType):
            stack.extend(schema.get_implementations(named).objects)
        if isinstance(named, GraphQLUnionType):
            stack.extend(named.types)
        if isinstance(named, GraphQLInputObjectType):
            stack.extend(get_named_type(field.type) for field in named.fields.values())
    return seen


def _deprecated_fields(schema: GraphQLSchema) -> set[str]:
    return {
        f"{name}.{field_name}"
        for name, named in schema.type_map.items()
        if isinstance(named, GraphQLObjectType | GraphQLInterfaceType)
        for field_name, field in named.fields.items()
        if field.deprecation_reason
    }


REMOVED = re.compile(r"^(?:Field |Type )?(\S+) was removed\.$")


def _allowed(change: BreakingChange, deprecated: set[str], live: set[str]) -> bool:
    removed = REMOVED.match(change.description)
    if removed is None:
        return False
    if change.type == BreakingChangeType.FIELD_REMOVED:
        return removed.group(1) in deprecated  # "Field Query.documentsSearch was removed."
    if change.type == BreakingChangeType.TYPE_REMOVED:
        return removed.group(1) not in live  # only deprecated fields led to it
    return False


def breaking_changes(previous_sdl: str, current: GraphQLSchema) -> list[str]:
    """What ``current`` breaks of the contract ``previous_sdl`` (allowed removals left out)."""
    previous = build_schema(previous_sdl)
    deprecated = _deprecated_fields(previous)
    live = _live_types(previous)
    return [
        f"{change.type.name}: {change.description}"
        for change in find_breaking_changes(previous, current)
        if not _allowed(change, deprecated, live)
    ]
