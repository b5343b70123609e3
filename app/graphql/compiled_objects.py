"""One generated function per object selection of plain fields: ``{name: complete(value.attr)…}``.

The fast path of ``app.graphql.execution`` completes a plain field with a closure that reads
the attribute and another that serializes it: two or three Python calls per field, which for
``node(id:)`` with its 40-odd fields was about a tenth of the request's CPU time (issue 37).
``compile_object`` writes, for a selection whose every field is plain, a single function that
builds the whole dict in one expression: each attribute read inline, and each value that is
already what GraphQL would send (a ``str`` for ``String``/``ID``, a ``bool`` for ``Boolean``,
or a null where null is allowed) kept as it is; any other value goes through that field's
compiled completion, exactly as before. The result is the same dict, in the same key order.

The generated text holds only names it makes itself (``c0``, ``c1``… for the completions) and
the ``repr`` of response names and Python attribute names, which are GraphQL names and
identifiers (checked): nothing a client sends is ever evaluated.
"""

from __future__ import annotations

import keyword
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLBoolean, GraphQLID, GraphQLNonNull, GraphQLString

Complete = Callable[[Any], Any]


@dataclass(frozen=True)
class PlainField:
    """A selected field read from an attribute (or by ``held``, a link's read of what its
    root holds, which raises when the root does not) and completed by ``complete``."""

    response_name: str
    attribute: str
    graphql_type: Any
    complete: Complete
    held: Callable[[Any], Any] | None = None

    def read(self) -> Callable[[Any], Any]:
        """source → the field's value before completion."""
        return self.held or operator.attrgetter(self.attribute)


def _expression(field: PlainField, read: str, completion: str) -> str:
    """The expression completing ``field`` from ``read`` (an attribute read): the common values
    kept as they are, the rest handed to ``completion``. ``x`` takes the value at its first
    use (a condition is evaluated before either branch)."""
    graphql_type = field.graphql_type
    nullable = not isinstance(graphql_type, GraphQLNonNull)
    named = graphql_type if nullable else graphql_type.of_type
    if named is GraphQLString or named is GraphQLID:
        test = "type(x) is str"
    elif named is GraphQLBoolean:
        test = "x is True or x is False"
    else:
        return f"{completion}({read})"
    if nullable:
        test = "x is None or " + test
    test = test.replace("x", f"(x := {read})", 1)
    return f"(x if {test} else {completion}(x))"


def compile_object(fields: Sequence[PlainField]) -> Callable[[Any], dict[str, Any]] | None:
    """A function source → the dict of ``fields``' completed values, or None when a field's
    attribute is no plain identifier (its closures then complete it)."""
    if any(not f.attribute.isidentifier() or keyword.iskeyword(f.attribute) for f in fields):
        return None
    namespace: dict[str, Any] = {}
    entries = []
    for index, field in enumerate(fields):
        completion = f"c{index}"
        namespace[completion] = field.complete
        read = f"source.{field.attribute}"
        if field.held is not None:
            namespace[f"h{index}"] = field.held
            read = f"h{index}(source)"
        entries.append(f"{field.response_name!r}: {_expression(field, read, completion)}")
    text = "def complete_object(source):\n    return {" + ", ".join(entries) + "}\n"
    exec(compile(text, "<compiled GraphQL object>", "exec"), namespace)
    compiled: Callable[[Any], dict[str, Any]] = namespace["complete_object"]
    return compiled
