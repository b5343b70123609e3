"""The GraphQL schema, generated from the capability registry at start-up.

Every ``read`` capability becomes a Query field and every ``write``/``destructive`` one a
Mutation field, named ``spec.name`` (``workspaces.list`` → ``workspacesList``) and taking one
argument ``input: <InputModel>Input!`` and returning the output type (nullable: a failed field
nulls only itself, its error says why). Types are converted from the pydantic models, never
written twice by hand:

========================  =============================================================
pydantic                  GraphQL
========================  =============================================================
``str int float bool``    ``String Int Float Boolean``
``datetime`` / ``date``   ``DateTime`` / ``Date`` (ISO 8601 strings)
``Decimal``               ``Decimal``: a string on the wire, so no amount passes through a
                          binary float (inputs also accept a JSON number)
``Any``                   ``JSON`` (nullable: Any admits None)
``dict``                  ``JSON``
``Literal["a", "b"]``     an enum named model + field, e.g. ``WorkspaceSummaryRole``
nested ``BaseModel``      a nested object type (output) or ``<Model>Input`` (input)
``X | None``              a nullable field; on inputs "absent" stays distinct from ``null``
========================  =============================================================

Inputs are converted back to a plain dict with the wire names and handed to ``execute``, which
re-validates them with the pydantic model: constraints (``ge``, ``max_length`` …) live in one
place, and GraphQL reports exactly the messages REST does. This module does not import
``resolvers`` (the import contracts, docs/architecture/layout.md): it receives the registry
and the ``execute`` callable.
"""

import copy
import enum
import inspect
import logging
import re
import types
import typing
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Any, Literal, Optional

import strawberry
from graphql import (
    GraphQLError,
)
from pydantic import BaseModel, TypeAdapter
from pydantic.errors import PydanticInvalidForJsonSchema, PydanticSchemaGenerationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from strawberry.extensions import SchemaExtension
from strawberry.scalars import JSON
from strawberry.schema.config import StrawberryConfig
from strawberry.types.execution import ExecutionContext
from strawberry.types.lazy_type import LazyType
from strawberry.types.unset import UNSET

from app.graphql.declarations import HELD_ATTR, CapabilityLike, Execute, Graph, Link, Stream
from app.graphql.document_cache import CheckedDocuments, DocumentCache, DocumentChecks
from app.graphql.execution import FastExecutionContext
from app.graphql.limits import Limits, MaskUnexpectedErrors, is_safe_error
from app.graphql.raw_links import LINK_ATTR, resolve_links_directly

log = logging.getLogger("fincap.graphql")

WIRE_NAMES_ATTR = "__fincap_wire_names__"
# Scalars and root types the schema may contain besides the generated ones.
BUILT_IN_NAMES = (
    "Query",
    "Mutation",
    "Subscription",
    "String",
    "Int",
    "Float",
    "Boolean",
    "ID",
    "DateTime",
    "Date",
    "Decimal",
    "JSON",
)
SCALARS: dict[Any, Any] = {
    str: str,
    int: int,
    float: float,
    bool: bool,
    datetime: datetime,
    date: date,
    Decimal: Decimal,
}
GRAPHQL_NAME = re.compile(r"^[_A-Za-z][_0-9A-Za-z]*$")
# The Python attribute of a link's field on its type (the GraphQL name is the link's).
LINK_ATTRIBUTE = "link_"


def model_field_of(field: Any) -> str | None:
    """The model field a field of a generated GraphQL type (a graphql-core ``GraphQLField``)
    shows: its own, a field kept under another name (``duplicateIds`` is ``duplicates``), or
    for a link, the link's name (a link named like a model field reads that field). None for
    a field strawberry did not define."""
    definition = field.extensions.get("strawberry-definition")
    python_name = getattr(definition, "python_name", None)
    return python_name.removeprefix(LINK_ATTRIBUTE) if isinstance(python_name, str) else None


def _declaring_model(model: type[BaseModel], field: str) -> type[BaseModel]:
    """The first model of ``model``'s bases (``model`` itself at the latest) with ``field``."""
    for base in reversed(model.__mro__):
        if (
            isinstance(base, type)
            and issubclass(base, BaseModel)
            and base is not BaseModel
            and field in base.model_fields
        ):
            return base
    return model


class GraphQLSchemaBuildError(Exception):
    """The registry cannot be turned into a GraphQL schema; the message says how to fix it."""


class GraphQLNameClash(GraphQLSchemaBuildError):
    """Two different things would get the same GraphQL type name."""


class CapabilitySchema(strawberry.Schema):
    """A strawberry schema that logs only the errors worth an operator's attention, with
    the documents it keeps parsed and validated (``documents``)."""

    documents: DocumentCache | None = None

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        # Capability errors (401, 404 …) and invalid queries are the client's business; an
        # unexpected exception is logged with its traceback before the mask hides it.
        for error in errors:
            if not is_safe_error(error):
                log.error("unhandled error in a GraphQL resolver", exc_info=error.original_error)


# What one value of a Literal means: (the Literal's values, the value) → text, or None.
ValueMeaning = Callable[[tuple[str, ...], str], str | None]


def build_schema(
    registry: Iterable[CapabilityLike],
    execute: Execute,
    limits: Limits | None = None,
    graph: Graph | None = None,
    value_meaning: ValueMeaning | None = None,
    streams: Sequence[Stream] = (),
) -> strawberry.Schema:
    """The GraphQL schema of ``registry``; each field calls ``execute(spec, arguments, info)``.

    ``graph`` adds links between the generated types (see ``Link``); ``value_meaning(values,
    value)`` describes each value of an enum generated from a Literal (None: undescribed);
    ``streams`` are the Subscription fields (see ``Stream``).

    Raises ``GraphQLSchemaBuildError`` (with the fix in its message) when a model cannot be
    expressed in GraphQL or two generated names clash.
    """
    limits = limits or Limits()
    specs = list(registry)
    costs = {spec.name: spec.cost for spec in specs if spec.cost}
    converter = _Converter(graph or Graph(), value_meaning or (lambda values, value: None))
    query: dict[str, Any] = {}
    mutation: dict[str, Any] = {}
    for spec in specs:
        target = query if spec.effect == "read" else mutation
        target[spec.name] = converter.root_field(
            spec, execute, converter.graph.deprecated.get(spec.name)
        )
    for link in converter.graph.of(None):
        if link.name in query:
            raise GraphQLNameClash(f"Query field {link.name!r} is both a capability and a link")
        query[link.name] = converter.link_field(link)
    if not query:
        raise GraphQLSchemaBuildError(
            "GraphQL needs at least one Query field: the registry has no read capability"
        )
    subscription = {stream.name: converter.stream_field(stream) for stream in streams}
    documents = DocumentCache(limits.document_cache, limits.document_cache_bytes)
    checks = DocumentChecks.of(limits, costs, documents)
    extensions: list[type[SchemaExtension] | Callable[[], SchemaExtension]] = [
        # The size, the cache, the token, expansion, depth and alias limits: a kept document
        # skips all but the size.
        lambda: CheckedDocuments(checks),
        MaskUnexpectedErrors,
    ]
    schema = CapabilitySchema(
        query=_root_type("Query", query),
        mutation=_root_type("Mutation", mutation) if mutation else None,
        subscription=_root_type("Subscription", subscription) if subscription else None,
        extensions=extensions,
        # Model fields already carry their wire names (camelCase); keep them exactly.
        config=StrawberryConfig(auto_camel_case=False),
        execution_context_class=FastExecutionContext,
    )
    schema.documents = documents
    resolve_links_directly(schema._schema, schema.config.info_class, to_arguments)
    return schema


ROOT_DESCRIPTIONS = {
    "Query": "Every capability that reads (documents, counts, workspaces, rules…), and the "
    "workspace graph for dashboards",
    "Mutation": "Every capability that changes something (uploads, corrections, archive, "
    "rules, keys…); a gated one answers approval_required until an owner approves",
    "Subscription": "Live events over WebSocket (graphql-transport-ws; credentials in the "
    "connection_init payload): what happens to the workspace's documents, as it happens",
}


def _root_type(name: str, fields: dict[str, Any]) -> type:
    return strawberry.type(
        type(name, (), dict(fields)), name=name, description=ROOT_DESCRIPTIONS[name]
    )


def to_arguments(value: Any) -> Any:
    """A strawberry input value, or graphql-core's coerced one, as plain data with wire names;
    absent (UNSET) fields dropped, enum members as their values.

    Dropping them lets the pydantic model apply its own defaults, and keeps "absent" distinct
    from an explicit ``null``.
    """
    wire_names: Mapping[str, str] | None = getattr(type(value), WIRE_NAMES_ATTR, None)
    if wire_names is not None:
        return {
            wire: to_arguments(field_value)
            for python_name, wire in wire_names.items()
            if (field_value := getattr(value, python_name)) is not UNSET
        }
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list):
        return [to_arguments(item) for item in value]
    if isinstance(value, dict):  # graphql-core's input object (names are wire names already)
        return {name: to_arguments(item) for name, item in value.items()}
    return value


class _LazyModelType(LazyType[str, str]):
    """A reference to a generated type that is still being built (a recursive model).

    Strawberry resolves ``LazyType`` when it assembles the schema, after every type exists;
    this one looks the type up in the converter's table instead of importing a module.
    """

    def __init__(self, name: str, table: dict[type[BaseModel], type], model: type[BaseModel]):
        super().__init__(type_name=name, module=__name__)
        object.__setattr__(self, "_table", table)
        object.__setattr__(self, "_model", model)

    def resolve_type(self) -> type[Any]:
        return self._table[self._model]  # type: ignore[attr-defined,no-any-return]

    def __call__(self) -> None:
        """Never called: being callable lets ``typing.Optional`` accept the reference."""
        raise TypeError("a lazy GraphQL type reference is not callable")


def argument_text(spec: CapabilityLike) -> str:
    """The description of a root field's ``input`` argument (the Docs pane shows it)."""
    if not spec.input.model_fields:
        return f"None: {spec.slug} takes no arguments (omit it, or send {{}})."
    return f"The arguments of {spec.slug}, as its REST body carries them."


def _own_doc(model: type) -> str | None:
    """The model's own docstring (``__doc__`` of a base class would mislead)."""
    doc = model.__dict__.get("__doc__")
    return " ".join(doc.split()) if isinstance(doc, str) and doc.strip() else None


def _json_schema_type(annotation: Any) -> str | None:
    """The JSON Schema ``type`` pydantic gives ``annotation`` (None if it has none)."""
    try:
        schema = TypeAdapter(annotation).json_schema()
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema, TypeError):
        return None
    kind = schema.get("type")
    return kind if isinstance(kind, str) else None


def _enum_member_name(value: str) -> str:
    """The GraphQL enum value for a Literal string: the REST word itself where GraphQL allows it.

    One rule, documented on the docs site's GraphQL page: a character GraphQL names cannot hold
    (``-``, ``.``, a space) becomes ``_`` (``not-in`` → ``not_in``). Python keywords (``and``,
    ``or``, ``in``) are legal GraphQL names and stay as they are: the enum is built with the
    functional API, whose member names need not be identifiers. A leading digit gets a leading
    ``_`` (``1st-reminder`` → ``_1st_reminder``). The three names GraphQL reserves (``true``,
    ``false``, ``null``) have no spelling that keeps the word, so the builder refuses them and the
    model must choose another value.
    """
    name = re.sub(r"[^_0-9A-Za-z]", "_", value)
    if name[:1].isdigit():
        name = "_" + name
    if not name or name in ("true", "false", "null"):
        raise GraphQLSchemaBuildError(
            f"the value {value!r} has no GraphQL enum spelling; choose another than true, false "
            "or null"
        )
    return name


class _Converter:
    """Converts pydantic models to strawberry types, once each, checking names as it goes."""

    def __init__(self, graph: Graph, value_meaning: ValueMeaning) -> None:
        self.graph = graph
        self.value_meaning = value_meaning
        self.names: dict[str, str] = dict.fromkeys(BUILT_IN_NAMES, "a built-in GraphQL type")
        self.outputs: dict[type[BaseModel], type] = {}
        self.inputs: dict[type[BaseModel], type] = {}
        self.enums: dict[tuple[type[BaseModel], str], type[enum.Enum]] = {}
        self.building: set[tuple[type[BaseModel], str]] = set()

    def claim(self, name: str, origin: str) -> None:
        """Reserve GraphQL type ``name`` for ``origin``, or fail naming both claimants."""
        other = self.names.setdefault(name, origin)
        if other != origin:
            raise GraphQLNameClash(
                f"GraphQL type name {name!r} would be generated for both {other} and {origin}; "
                "rename one of the models (prefix it with its resource, e.g. DocumentLineItem)"
            )

    # -- root fields --------------------------------------------------------------------------

    def root_field(
        self, spec: CapabilityLike, execute: Execute, deprecation_reason: str | None = None
    ) -> Any:
        """The Query/Mutation field of one capability: ``name(input: …Input!): Output``."""
        output = self.output_type(spec.output)

        if spec.input.model_fields:
            input_type = self.input_type(spec.input)

            async def resolve_input(info: strawberry.Info, input: Any) -> BaseModel:
                return await execute(spec, to_arguments(input), info)

            resolve: Callable[..., Awaitable[BaseModel]] = resolve_input
            argument: Any = input_type
        else:
            # GraphQL forbids input objects without fields, so a capability without parameters
            # takes an optional JSON object: omitted or {} runs it, anything else is rejected by
            # the model exactly as REST rejects it ("x: unknown property").
            async def resolve_optional(info: strawberry.Info, input: Any = UNSET) -> BaseModel:
                absent = input is UNSET or input is None
                return await execute(spec, {} if absent else input, info)

            resolve = resolve_optional
            argument = Optional[JSON]  # noqa: UP045 (a runtime type expression, not a hint)

        # Annotations are set here, not written in the signature, because they are values
        # computed at build time; strawberry reads them from __annotations__.
        # The result is nullable so that a failing field (401, 404 …) nulls only itself and the
        # other fields of the same request keep their data.
        resolve.__annotations__ = {
            "info": strawberry.Info,
            "input": Annotated[argument, strawberry.argument(description=argument_text(spec))],
            "return": Optional[output],  # noqa: UP045
        }
        resolve.__name__ = spec.name
        return strawberry.field(
            resolver=resolve,
            name=spec.name,
            description=spec.description,
            deprecation_reason=deprecation_reason,
        )

    def stream_field(self, stream: Stream) -> Any:
        """The Subscription field of one stream: ``name(after: String, …): Returns!``."""
        output = self.output_type(stream.returns)

        async def resolve(info: strawberry.Info, after: str | None = None, **given: Any) -> Any:
            arguments = {
                name: to_arguments(value) for name, value in given.items() if value is not UNSET
            }
            async for event in stream.subscribe(info, after, arguments):
                yield event

        returns = AsyncGenerator[output, None]  # type: ignore[valid-type]
        after = typing.Annotated[
            Optional[str],  # noqa: UP045 (a runtime type expression, not a hint)
            strawberry.argument(description=stream.after_description),
        ]
        keyword = inspect.Parameter.KEYWORD_ONLY
        parameters = [
            inspect.Parameter(
                "info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=strawberry.Info
            ),
            inspect.Parameter("after", keyword, default=None, annotation=after),
        ]
        annotations: dict[str, Any] = {"info": strawberry.Info, "after": after}
        for argument in stream.arguments:
            kind = argument.type if argument.required else Optional[argument.type]  # noqa: UP045
            annotation = Annotated[kind, strawberry.argument(description=argument.description)]  # type: ignore[valid-type]
            annotations[argument.name] = annotation
            default = inspect.Parameter.empty if argument.required else UNSET
            parameters.append(
                inspect.Parameter(argument.name, keyword, default=default, annotation=annotation)
            )
        annotations["return"] = returns
        resolve.__annotations__ = annotations
        resolve.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
        resolve.__name__ = stream.name
        return strawberry.subscription(
            resolver=resolve, name=stream.name, description=stream.description
        )

    def link_field(self, link: Link) -> Any:
        """The strawberry field of one link: ``name(input: …Input): Returns``."""
        returns = self.convert(link.returns, link.model or BaseModel, link.name, "output")

        async def resolve(root: Any, info: strawberry.Info, input: Any = UNSET) -> Any:
            absent = input is UNSET or input is None
            return await link.resolve(root, info, None if absent else to_arguments(input))

        # ``root`` and ``info`` are reserved names: strawberry passes the parent and the info.
        annotations: dict[str, Any] = {"root": Any, "info": strawberry.Info}
        if link.argument is not None:
            annotations["input"] = Annotated[
                Optional[self.input_type(link.argument)],  # noqa: UP045
                strawberry.argument(
                    description=f"{_own_doc(link.argument) or link.argument.__name__} Omitted: "
                    "every default."
                ),
            ]
        else:

            async def resolve_plain(root: Any, info: strawberry.Info) -> Any:
                return await link.resolve(root, info, None)

            if link.held is not None:
                setattr(resolve_plain, HELD_ATTR, link.held)
            resolve = resolve_plain  # type: ignore[assignment]
        if link.arguments:
            return self._native_link_field(link, returns)
        annotations["return"] = returns
        resolve.__annotations__ = annotations
        resolve.__name__ = link.name
        return strawberry.field(
            resolver=resolve,
            name=link.name,
            description=link.description,
            deprecation_reason=link.deprecation_reason,
        )

    def _native_link_field(self, link: Link, returns: Any) -> Any:
        """A link with its own arguments: ``name(filter: …, first: Int …): Returns``."""

        async def resolve(root: Any, info: strawberry.Info, **given: Any) -> Any:
            arguments = {
                name: to_arguments(value) for name, value in given.items() if value is not UNSET
            }
            return await link.resolve(root, info, arguments)

        parameters = [
            inspect.Parameter("root", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Any),
            inspect.Parameter(
                "info", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=strawberry.Info
            ),
        ]
        annotations: dict[str, Any] = {"root": Any, "info": strawberry.Info}
        for argument in link.arguments:
            kind = argument.type if argument.required else Optional[argument.type]  # noqa: UP045
            annotation = Annotated[kind, strawberry.argument(description=argument.description)]  # type: ignore[valid-type]
            annotations[argument.name] = annotation
            parameters.append(
                inspect.Parameter(
                    argument.name,
                    inspect.Parameter.KEYWORD_ONLY,
                    default=inspect.Parameter.empty if argument.required else UNSET,
                    annotation=annotation,
                )
            )
        annotations["return"] = returns
        resolve.__annotations__ = annotations
        resolve.__signature__ = inspect.Signature(parameters, return_annotation=returns)  # type: ignore[attr-defined]
        resolve.__name__ = link.name
        # raw_links points graphql-core straight at the link (its coerced arguments already
        # are this plain data); strawberry's conversion stays for any field it cannot.
        setattr(resolve, LINK_ATTR, link)
        return strawberry.field(
            resolver=resolve,
            name=link.name,
            description=link.description,
            deprecation_reason=link.deprecation_reason,
        )

    def _add_link(
        self,
        link: Link,
        model: type[BaseModel],
        annotations: dict[str, Any],
        namespace: dict[str, Any],
    ) -> None:
        replaced = link.name in annotations
        if link.keep_as is not None:
            if not replaced:
                raise GraphQLSchemaBuildError(
                    f"link {model.__name__}.{link.name}: keep_as needs a model field to keep"
                )
            # The model's value stays a plain (fast) field, published under the new name.
            namespace[link.name] = strawberry.field(
                name=link.keep_as, description=namespace[link.name].description
            )
        elif replaced:
            del annotations[link.name], namespace[link.name]
        attribute = f"{LINK_ATTRIBUTE}{link.name}"
        namespace[attribute] = self.link_field(link)
        # A resolver field needs no annotation of its own; strawberry reads the resolver's.

    # -- object types -------------------------------------------------------------------------

    def output_type(self, model: type[BaseModel]) -> Any:
        if model in self.outputs:
            return self.outputs[model]
        if (model, "output") in self.building:
            return _LazyModelType(model.__name__, self.outputs, model)
        self.building.add((model, "output"))
        self.claim(model.__name__, f"output model {model.__module__}.{model.__qualname__}")
        annotations: dict[str, Any] = {}
        namespace: dict[str, Any] = {}
        for python_name, info in model.model_fields.items():
            wire = info.alias or python_name
            # An inherited field keeps its declaring model's types (the same enum, not a copy).
            owner = _declaring_model(model, python_name)
            annotations[python_name] = self.convert(info.annotation, owner, wire, "output")
            namespace[python_name] = strawberry.field(
                name=wire if wire != python_name else None, description=info.description
            )
        for python_name, computed in model.model_computed_fields.items():
            annotations[python_name] = self.convert(
                computed.return_type, model, python_name, "output"
            )
            namespace[python_name] = strawberry.field(description=computed.description)
        for link in self.graph.of(model):
            self._add_link(link, model, annotations, namespace)
        interfaces = tuple(self.graph.interfaces.get(model, ()))
        for interface in interfaces:
            # The interface's type of a shared field wins (a Node's id is an ID).
            for name, annotation in interface.__annotations__.items():
                if name in annotations:
                    annotations[name] = annotation
        if interfaces:
            # Resolvers return the pydantic model, which the interface must recognise.
            namespace["is_type_of"] = classmethod(
                lambda cls, obj, info, model=model: isinstance(obj, model)
            )
        namespace["__annotations__"] = annotations
        cls = strawberry.type(
            type(model.__name__, interfaces, namespace),
            name=model.__name__,
            description=_own_doc(model),
        )
        self.outputs[model] = cls
        self.building.discard((model, "output"))
        return cls

    def input_type(self, model: type[BaseModel]) -> Any:
        if model in self.inputs:
            return self.inputs[model]
        name = model.__name__ + "Input"
        if (model, "input") in self.building:
            return _LazyModelType(name, self.inputs, model)
        self.building.add((model, "input"))
        self.claim(name, f"input model {model.__module__}.{model.__qualname__}")
        annotations: dict[str, Any] = {}
        namespace: dict[str, Any] = {}
        wire_names: dict[str, str] = {}
        for python_name, info in model.model_fields.items():
            wire = info.alias or python_name
            wire_names[python_name] = wire
            annotation = self.convert(info.annotation, model, wire, "input")
            default = self._input_default(info, model, wire)
            if default is UNSET and not info.is_required():
                # The model has a default GraphQL cannot print (None, an object …): the field
                # may be omitted and the model applies its default.
                annotation = Optional[annotation]  # noqa: UP045
            annotations[python_name] = annotation
            namespace[python_name] = strawberry.field(
                name=wire if wire != python_name else None,
                description=info.description,
                # Mutable defaults need a factory (dataclass rule); each call gets a copy.
                **(
                    {"default_factory": lambda d=default: copy.deepcopy(d)}
                    if isinstance(default, list | dict)
                    else {"default": default}
                ),
            )
        namespace["__annotations__"] = annotations
        cls = strawberry.input(type(name, (), namespace), name=name, description=_own_doc(model))
        setattr(cls, WIRE_NAMES_ATTR, wire_names)
        self.inputs[model] = cls
        self.building.discard((model, "input"))
        return cls

    def _input_default(self, info: FieldInfo, model: type[BaseModel], wire: str) -> Any:
        """The model's default as a GraphQL default value, or UNSET when there is none to show.

        Plain values (numbers, strings, enum members, lists of them) become GraphQL defaults
        and appear in the SDL; ``None`` does not (an omitted field stays omitted).
        """
        if info.is_required():
            return UNSET
        value = info.get_default(call_default_factory=True)
        if value is None or value is PydanticUndefined:
            return UNSET
        return self._graphql_value(value, model, wire)

    def _graphql_value(self, value: Any, model: type[BaseModel], wire: str) -> Any:
        if isinstance(value, bool | int | float | Decimal) or (
            isinstance(value, str) and (model, wire) not in self.enums
        ):
            return value
        if isinstance(value, str):
            return self.enums[(model, wire)](value)
        if isinstance(value, list | tuple):
            items = [self._graphql_value(item, model, wire) for item in value]
            return UNSET if UNSET in items else items
        if isinstance(value, dict) and not value:
            return {}
        return UNSET

    # -- annotations ----------------------------------------------------------------------------

    def convert(self, annotation: Any, model: type[BaseModel], wire: str, direction: str) -> Any:
        """The strawberry type of one model field's annotation."""
        where = f"{model.__qualname__}.{wire}"
        origin = typing.get_origin(annotation)
        args = typing.get_args(annotation)
        if origin is typing.Annotated:
            return self.convert(args[0], model, wire, direction)
        if origin in (typing.Union, types.UnionType):
            members = [arg for arg in args if arg is not type(None)]
            if len(members) != 1:
                raise GraphQLSchemaBuildError(
                    f"{where}: union {annotation!r} has no GraphQL equivalent here; "
                    "use one model with optional fields, or a JSON (dict) field"
                )
            inner = self.convert(members[0], model, wire, direction)
            return Optional[inner] if len(members) < len(args) else inner  # noqa: UP045
        if origin is Literal:
            return self._literal(args, model, wire, where)
        if origin in (list, tuple, set, frozenset, Sequence) and args:
            if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
                raise GraphQLSchemaBuildError(f"{where}: fixed-length tuples are not supported")
            return list[self.convert(args[0], model, wire, direction)]  # type: ignore[misc]
        if annotation is Any or annotation is object:
            # Any admits None: a correction that filled an empty field has an oldValue of null,
            # which a non-null JSON field answered with an internal error.
            return Optional[JSON]  # noqa: UP045 (a runtime type expression, not a hint)
        if annotation is dict or origin is dict:
            return JSON
        if hasattr(annotation, "__strawberry_definition__"):
            return annotation  # already a GraphQL type (the Node interface)
        if annotation in SCALARS:
            return SCALARS[annotation]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if direction == "input":
                return self.input_type(annotation)
            return self.output_type(annotation)
        if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
            self.claim(
                annotation.__name__, f"enum {annotation.__module__}.{annotation.__qualname__}"
            )
            return strawberry.enum(annotation)
        if _json_schema_type(annotation) == "string" and direction == "input":
            # EmailStr, constrained strings …: a String; the model validates the format. (On
            # outputs such values may be objects, e.g. URLs, which String cannot serialize.)
            return str
        raise GraphQLSchemaBuildError(
            f"{where}: no GraphQL type for {annotation!r}; use str, int, float, bool, Decimal, "
            "datetime, date, a Literal, a list, a nested model or dict/Any (JSON)"
        )

    def _literal(
        self, values: tuple[Any, ...], model: type[BaseModel], wire: str, where: str
    ) -> Any:
        if all(isinstance(value, bool) for value in values):
            return bool
        if all(isinstance(value, int) and not isinstance(value, bool) for value in values):
            return int  # pydantic still enforces the allowed numbers
        if not all(isinstance(value, str) for value in values):
            raise GraphQLSchemaBuildError(f"{where}: a Literal must hold only strings or ints")
        key = (model, wire)
        if key in self.enums:
            return self.enums[key]
        name = model.__name__ + wire[:1].upper() + wire[1:]
        self.claim(name, f"the values of {where}")
        members: dict[str, str] = {}
        for value in values:
            member = _enum_member_name(value)
            if member in members:
                raise GraphQLSchemaBuildError(
                    f"{where}: Literal values {members[member]!r} and {value!r} both become the "
                    f"GraphQL enum value {member!r}; rename one"
                )
            members[member] = value
        python_enum = enum.Enum(name, members)  # type: ignore[misc]
        if not all(GRAPHQL_NAME.match(member) for member in members):
            raise GraphQLSchemaBuildError(f"{where}: cannot name the enum values {values!r}")
        converted = strawberry.enum(python_enum, name=name, description=f"Values of {where}.")
        # strawberry keeps the GraphQL side of an enum on the class it decorated.
        definition = converted.__strawberry_definition__  # type: ignore[attr-defined]
        for value in definition.values:
            value.description = self.value_meaning(values, value.value)
        self.enums[key] = converted
        return converted
