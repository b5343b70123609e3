"""What the GraphQL builder is told to build: the capabilities it mirrors (``CapabilityLike``)
and the graph the face adds to them — ``Link`` fields on generated types (or Query),
``Stream`` subscriptions, their ``LinkArgument``s, and the ``Graph`` that holds them.

Declarations only: ``app.graphql.builder`` converts them into strawberry types; the face's
modules (``listing``, ``nested``, ``nodes``, ``graph``) write them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import strawberry
from pydantic import BaseModel


class CapabilityLike(Protocol):
    """What the builder needs of a capability (``resolvers.framework.registry.CapabilitySpec``
    fits)."""

    @property
    def slug(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def input(self) -> type[BaseModel]: ...
    @property
    def output(self) -> type[BaseModel]: ...
    @property
    def effect(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def cost(self) -> int: ...


Execute = Callable[[CapabilityLike, dict[str, Any], strawberry.Info], Awaitable[BaseModel]]


@dataclass(frozen=True)
class LinkArgument:
    """One argument of a link: its name, strawberry type (optional), and description."""

    name: str
    type: Any
    description: str
    required: bool = False


@dataclass(frozen=True)
class Link:
    """A field the graph adds to a generated type (or to Query), resolved by ``resolve``.

    Capability fields mirror the registry; links connect the results into a graph for clients
    such as dashboards (a document's duplicates as documents, a workspace's documents). The
    return type is written as a pydantic annotation (``list[Document]``, ``Workspace | None``,
    ``int``) and converted like any model field. ``argument``, when set, is the input model of
    an optional ``input`` argument; ``resolve(root, info, arguments)`` receives the argument as
    plain wire-named data (None when omitted) and re-validates it through ``invoke``.

    A link named like a model field replaces it in GraphQL; ``keep_as`` keeps the model's own
    value under another name (``duplicates`` ids stay readable as ``duplicateIds``).
    """

    name: str
    returns: Any
    resolve: Callable[[Any, strawberry.Info, dict[str, Any] | None], Awaitable[Any]]
    model: type[BaseModel] | None = None  # None: a Query field
    argument: type[BaseModel] | None = None
    description: str | None = None
    keep_as: str | None = None
    # GraphQL-native arguments instead of ``input`` (a connection's filter, orderBy, first …):
    # their types are already strawberry types; ``resolve`` receives them as plain data.
    arguments: tuple[LinkArgument, ...] = ()
    deprecation_reason: str | None = None
    # The link's value when its root already holds it (a document read whole holds its edit
    # history), read without ``resolve``; raises ``LookupError`` when the root does not, and
    # ``resolve`` runs. Only for a link without arguments: the executor's fast path then
    # completes it like a plain field (``app.graphql.execution``).
    held: Callable[[Any], Any] | None = None


# The attribute of a link field's resolver naming the link's ``held`` read.
HELD_ATTR = "__fincap_held__"


@dataclass(frozen=True)
class Stream:
    """A Subscription field: ``name(after: String, …arguments): Returns!``, each event a
    ``returns`` model from ``subscribe(info, after, arguments)`` (the face's stream of live
    events; the builder only converts the types). ``arguments`` are GraphQL-native, as a
    ``Link``'s: ``subscribe`` receives the given ones as plain data."""

    name: str
    returns: type[BaseModel]
    subscribe: Callable[[strawberry.Info, str | None, dict[str, Any]], AsyncIterator[BaseModel]]
    description: str
    after_description: str = "Resume after this event id"
    arguments: tuple[LinkArgument, ...] = ()


@dataclass(frozen=True)
class Graph:
    """The links of a schema; models not in the schema simply get none."""

    links: Sequence[Link] = ()
    # Capability fields superseded by a link: field name → the reason (``@deprecated``).
    deprecated: Mapping[str, str] = dataclasses.field(default_factory=dict)
    # Strawberry interfaces a model's type implements (a Document is a Node).
    interfaces: Mapping[type[BaseModel], Sequence[type]] = dataclasses.field(default_factory=dict)

    def of(self, model: type[BaseModel] | None) -> list[Link]:
        return [link for link in self.links if link.model is model]
