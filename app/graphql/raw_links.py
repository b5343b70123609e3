"""Links resolved straight from graphql-core's coerced arguments.

A link with its own arguments (``node(id:)``, ``documents(filter:, first: …)``…) wants them as
plain data with wire names: strawberry first converts graphql-core's coerced values into its
input classes (resolving each argument's annotation on every call) and ``to_arguments`` then
turns them back into plain data. For ``node(id:)`` that round trip and strawberry's resolver
wrapping were a fifth of the request's own work. graphql-core's values already are that plain
data but for enums (strawberry gives graphql-core the enum members as values): this module
points each such field's graphql-core resolver at the link directly, with the builder's own
``to_arguments`` turning those members into their values.

Only fields strawberry would run unchanged qualify: no field extensions, no exception handlers;
schema extensions with resolve hooks run as middleware around this resolver as around
strawberry's. ``tests/graphql/test_raw_links.py`` checks the arguments are the same either way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from graphql import GraphQLObjectType, GraphQLResolveInfo, GraphQLSchema
from strawberry.types.field import StrawberryField

from app.graphql.declarations import Link

LINK_ATTR = "__fincap_link__"

Resolve = Callable[[Any, GraphQLResolveInfo], Awaitable[Any]]
Plain = Callable[[Any], Any]


def link_of(field: StrawberryField) -> Link | None:
    """The link a generated field resolves, when strawberry may be bypassed for it."""
    resolver = field.base_resolver
    if resolver is None or field.extensions:
        return None
    if getattr(field, "exception_handlers", None):
        return None
    link: Link | None = getattr(resolver.wrapped_func, LINK_ATTR, None)
    return link


def raw_resolver(link: Link, field: StrawberryField, info_class: type, plain: Plain) -> Resolve:
    """graphql-core's resolver for ``field``: the link with the coerced arguments as plain
    data (absent ones are absent: graphql-core leaves out what has no default)."""

    async def resolve(source: Any, info: GraphQLResolveInfo, **given: Any) -> Any:
        arguments = {name: plain(value) for name, value in given.items()}
        return await link.resolve(source, info_class(_raw_info=info, _field=field), arguments)

    return resolve  # type: ignore[return-value]


def resolve_links_directly(schema: GraphQLSchema, info_class: type, plain: Plain) -> None:
    """Point every qualifying link field of ``schema`` at its link, ``plain`` making its
    arguments plain data."""
    for named in schema.type_map.values():
        if not isinstance(named, GraphQLObjectType) or named.name.startswith("__"):
            continue
        for graphql_field in named.fields.values():
            field = (graphql_field.extensions or {}).get("strawberry-definition")
            if not isinstance(field, StrawberryField):
                continue
            link = link_of(field)
            if link is not None:
                graphql_field.resolve = raw_resolver(link, field, info_class, plain)
