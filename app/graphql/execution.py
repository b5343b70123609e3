"""Fast completion of plain data fields for the generated GraphQL schema.

graphql-core completes every field through several generic calls (~5 µs per field), which for
a page of 100 documents costs several times the JSON it produces. For fields that only read an
attribute and serialize a leaf, this execution context compiles a small completion function
once per request and selection and runs it directly; fields with resolvers, arguments or
abstract types, and any value that does not fit, go through graphql-core's own path, so the
results and errors are exactly graphql-core's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    DirectiveNode,
    GraphQLEnumType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    Node,
    Undefined,
    Visitor,
    visit,
)
from graphql.language.visitor import BREAK
from graphql.pyutils import Path, gather_with_cancel
from strawberry.schema.schema import StrawberryGraphQLCoreExecutionContext

from app.graphql.compiled_objects import PlainField, compile_object
from app.graphql.declarations import HELD_ATTR
from app.graphql.document_cache import PLANS_KEY


class _NotFast(Exception):
    """A value the fast path does not complete itself; graphql-core's own path redoes it."""


_Complete = Callable[[Any], Any]
_NOT_FAST = object()  # plan entry of a field that needs graphql-core's full field execution


@dataclass(frozen=True)
class _Plan:
    """How a selection is completed: each field's (response name, field details, completion
    or ``_NOT_FAST``); the plain fields at once (``compiled_objects``; None when there are
    none), the others when that answered, and the response's key order when they interleave."""

    entries: list[tuple[str, Any, Any]]
    plain: Callable[[Any], dict[str, Any]] | None
    rest: list[tuple[str, Any, Any]]
    order: tuple[str, ...] | None

    @classmethod
    def of(cls, parts: list[tuple[str, Any, PlainField | None]]) -> _Plan:
        entries = [
            (name, details, _NOT_FAST if part is None else _read_and_complete(part))
            for name, details, part in parts
        ]
        plain = [part for _, _, part in parts if part is not None]
        compiled = compile_object(plain) if plain else None
        rest = [entry for entry, (_, _, part) in zip(entries, parts, strict=True) if part is None]
        # Plain fields first, then the others, is the selection's order unless they interleave.
        kinds = [part is not None for _, _, part in parts]
        order = None if kinds == sorted(kinds, reverse=True) else tuple(n for n, _, _ in parts)
        return cls(entries, compiled, rest, order)


def _in_order(results: dict[str, Any], order: tuple[str, ...] | None) -> dict[str, Any]:
    """``results`` with its keys in the selection's ``order`` (None: they already are)."""
    if order is None:
        return results
    return {name: results[name] for name in order if name in results}


def _held_read(field: Any) -> Callable[[Any], Any] | None:
    """A link field's read of what its root holds (``Link.held``), when strawberry would run
    the link's resolver unchanged (no field extensions or exception handlers)."""
    resolver = getattr(field, "base_resolver", None)
    if resolver is None or field.extensions or getattr(field, "exception_handlers", None):
        return None
    held: Callable[[Any], Any] | None = getattr(resolver.wrapped_func, HELD_ATTR, None)
    return held


def _read_and_complete(field: PlainField) -> _Complete:
    """source → ``field``'s completed value (one field alone: the plan's per-field entry)."""
    read = field.read()
    complete = field.complete
    return lambda source: complete(read(source))


# The key, in a document's shared plans, of whether the document may share them at all.
_SHAREABLE = "shareable"
# Directives whose effect depends on the request (its variables): a document using them
# compiles its plans for each request.
_CONDITIONAL = frozenset({"skip", "include", "defer", "stream"})


class _FindsConditional(Visitor):
    found = False

    def enter_directive(self, node: DirectiveNode, *_: Any) -> Any:
        if node.name.value in _CONDITIONAL:
            self.found = True
            return BREAK
        return None


def _unconditional(nodes: list[Node]) -> bool:
    """Whether no node uses a directive whose effect depends on the request."""
    for node in nodes:
        finder = _FindsConditional()
        visit(node, finder)
        if finder.found:
            return False
    return True


class FastExecutionContext(StrawberryGraphQLCoreExecutionContext):
    """graphql-core's executor with a fast path for plain data fields.

    graphql-core spends ~5 µs on every field of every object (resolve info, path, resolver
    call, completion by type tests), so 100 documents of 60 fields cost several times the
    capability itself. Most of those fields only read an attribute of the capability's result
    and serialize a scalar. For a field whose whole selection is like that (no resolver, no
    arguments, no abstract type or ``is_type_of``, no ``@defer``) this executor compiles, once
    per request and selection, a small completion function: attribute read, ``serialize`` of
    the leaf type, lists and nested objects as comprehensions. Everything else (links with
    resolvers, capability fields) takes graphql-core's path unchanged, and a plain field whose
    value does not fit (null in a non-null position, a serializer error) is executed again by
    graphql-core, which produces the exact error it always did: the reads have no side effects.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Keyed by the identity of the memoized grouped field set; the value keeps the set
        # alive so that its id cannot be reused within the request.
        self._plans: dict[int, tuple[Any, _Plan]] = {}
        # The plans of the kept document this request runs (``DocumentCache``): the next
        # request of the same text finds them compiled. Keyed by the identity of the parent
        # type and of the selection's nodes, which the kept document holds alive. None: this
        # request's document is not kept, or it skips or includes by variables.
        self._shared = self._shared_plans()
        # Ids of the subfield sets this request took from the kept document's.
        self._kept_sets: set[int] = set()

    def _shared_plans(self) -> dict[Any, Any] | None:
        context = self.context_value
        shared = context.get(PLANS_KEY) if isinstance(context, dict) else None
        if shared is None:
            return None
        if _SHAREABLE not in shared:
            fragments = [details.definition for details in self.fragments.values()]
            shared[_SHAREABLE] = _unconditional([self.operation, *fragments])
        return shared if shared[_SHAREABLE] else None

    def execute_fields(
        self,
        parent_type: GraphQLObjectType,
        source_value: Any,
        path: Path | None,
        grouped_field_set: Any,
        position_context: Any,
    ) -> Any:
        manager = self.middleware_manager
        # Strawberry always passes a manager; only one holding resolve hooks matters here.
        if manager is not None and manager.middlewares:
            return super().execute_fields(
                parent_type, source_value, path, grouped_field_set, position_context
            )
        plan = self._plan(parent_type, grouped_field_set)
        entries, order = plan.entries, None
        results: dict[str, Any] | None = None
        if plan.plain is not None:
            try:
                results = plan.plain(source_value)
                entries, order = plan.rest, plan.order
            except Exception:  # field by field below: graphql-core redoes what does not fit
                results = None
        if results is None:
            results = {}
        awaitable_fields: list[str] = []
        try:
            for response_name, field_details_list, complete in entries:
                if complete is not _NOT_FAST:
                    try:
                        results[response_name] = complete(source_value)
                        continue
                    except Exception:  # graphql-core redoes it and reports
                        pass
                field_path = Path(path, response_name, parent_type.name)
                result = self.execute_field(
                    parent_type, source_value, field_details_list, field_path, position_context
                )
                if result is not Undefined:
                    results[response_name] = result
                    if self.is_awaitable(result):
                        awaitable_fields.append(response_name)
        except Exception:
            if awaitable_fields:
                self.settle_in_background([results[field] for field in awaitable_fields])
            raise
        if not awaitable_fields:
            return _in_order(results, order)

        if len(awaitable_fields) == 1:
            # The usual case (a root field, a link): awaited in place, where a gather would
            # wrap it in a task and take turns of the event loop to settle it.
            (only,) = awaitable_fields
            done = results

            async def get_result() -> dict[str, Any]:
                done[only] = await done[only]
                return _in_order(done, order)

            return get_result()

        gathered = results

        async def get_results() -> dict[str, Any]:
            values = await gather_with_cancel(*(gathered[field] for field in awaitable_fields))
            gathered.update(zip(awaitable_fields, values, strict=True))
            return _in_order(gathered, order)

        return get_results()

    def collect_subfields(self, return_type: GraphQLObjectType, field_details_list: Any) -> Any:
        """graphql-core's subfields, kept with the document's plans: the next request of the
        same text finds them collected (a walk of the selection a request) and their plans by
        the collected set's identity (the kept document holds both alive)."""
        if self._shared is None:
            return super().collect_subfields(return_type, field_details_list)
        memo = self._relevant_sub_fields  # graphql-core's, for the items of a list
        known = memo.get((return_type, id(field_details_list)))
        if known is not None:
            return known[1]
        key = (id(return_type), *(id(details.node) for details in field_details_list))
        collected = self._shared.get(key)
        if collected is None:
            collected = super().collect_subfields(return_type, field_details_list)
            self._shared[key] = collected
        else:
            memo[(return_type, id(field_details_list))] = (field_details_list, collected)
        self._kept_sets.add(id(collected[0]))
        return collected

    def _plan(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> _Plan:
        """Each field's completion (``_NOT_FAST``: graphql-core's), and one function for the
        whole set when every field is plain (``compiled_objects``)."""
        cached = self._plans.get(id(grouped_field_set))
        if cached is not None:
            return cached[1]
        key: Any = None
        if self._shared is not None:
            key = self._shared_key(parent_type, grouped_field_set)
            plan = self._shared.get(key)
            if plan is not None:
                self._plans[id(grouped_field_set)] = (grouped_field_set, plan)
                return plan  # type: ignore[no-any-return]
        parts = [
            (name, details, self._plain_field(parent_type, name, details))
            for name, details in grouped_field_set.items()
        ]
        plan = _Plan.of(parts)
        self._plans[id(grouped_field_set)] = (grouped_field_set, plan)
        if self._shared is not None:
            self._shared[key] = plan
        return plan

    def _shared_key(self, parent_type: GraphQLObjectType, grouped_field_set: Any) -> Any:
        """Where a kept document keeps the plan of ``grouped_field_set``. A set of subfields
        is the document's own (``collect_subfields`` keeps it alive): its identity. A root set
        is collected anew by every request: the identity of its type and nodes."""
        if id(grouped_field_set) in self._kept_sets:
            return id(grouped_field_set)
        return (
            id(parent_type),
            tuple(
                (name, *(id(detail.node) for detail in details))
                for name, details in grouped_field_set.items()
            ),
        )

    def _plain_field(
        self, parent_type: GraphQLObjectType, response_name: str, field_details_list: Any
    ) -> PlainField | None:
        """How a plain field is read and completed, else None (graphql-core executes it)."""
        node = field_details_list[0].node
        field_def = parent_type.fields.get(node.name.value)
        if field_def is None or field_def.args or node.arguments:
            return None
        strawberry_field = (field_def.extensions or {}).get("strawberry-definition")
        if strawberry_field is None:
            return None
        held = _held_read(strawberry_field)
        if held is None and not getattr(strawberry_field, "is_basic_field", False):
            return None
        try:
            complete = self._completer(field_def.type, field_details_list)
        except _NotFast:
            return None
        name = strawberry_field.python_name
        return PlainField(response_name, name, field_def.type, complete, held)

    def _completer(self, return_type: Any, field_details_list: Any) -> _Complete:
        """Compile the completion of ``return_type``; raises ``_NotFast`` when it cannot."""
        if isinstance(return_type, GraphQLNonNull):
            inner = self._completer(return_type.of_type, field_details_list)

            def non_null(value: Any) -> Any:
                if value is None:
                    raise _NotFast
                return inner(value)

            return non_null
        if isinstance(return_type, GraphQLList):
            item = self._completer(return_type.of_type, field_details_list)

            def list_of(value: Any) -> Any:
                if value is None:
                    return None
                if not isinstance(value, list | tuple):
                    raise _NotFast
                return [item(element) for element in value]

            return list_of
        if isinstance(return_type, GraphQLObjectType):
            if return_type.is_type_of is not None:
                raise _NotFast
            grouped, defer_usages, _ = self.collect_subfields(return_type, field_details_list)
            if defer_usages:
                raise _NotFast
            fields = []
            for name, details in grouped.items():
                part = self._plain_field(return_type, name, details)
                if part is None:
                    raise _NotFast  # a resolver inside: graphql-core executes this object
                fields.append(part)
            whole = compile_object(fields)
            if whole is None:
                completers = [(f.response_name, _read_and_complete(f)) for f in fields]

                def whole(value: Any) -> dict[str, Any]:
                    return {name: complete(value) for name, complete in completers}

            def object_of(value: Any) -> Any:
                if value is None:
                    return None
                return whole(value)

            return object_of
        if isinstance(return_type, GraphQLScalarType | GraphQLEnumType):
            serialize = return_type.serialize

            def leaf(value: Any) -> Any:
                if value is None:
                    return None
                serialized = serialize(value)
                if serialized is None or serialized is Undefined:
                    raise _NotFast
                return serialized

            return leaf
        raise _NotFast  # interfaces and unions resolve their type at run time
