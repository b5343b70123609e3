"""The short way through the GraphQL face for a request whose document is kept and valid.

A dashboard or a script sends the same few documents again and again, and for such a request
strawberry's view and ``Schema.execute`` do work whose answer is already known: building the
request adapter and the request data, making the schema's two extensions anew and running
their four hook pairs, re-deciding that the kept document needs no parsing or validation,
finding the operation's type, and converting the result between two result classes. For
``node(id:)`` that was about a tenth of the request's own CPU time (issue 37: it must cost at
most 1.1× ``documents.get``).

``kept_operation`` recognises the request the short way can answer: a POST of JSON, from a
caller that authenticated (anonymous callers pay for their document's size first, on the
long way), with one operation whose text the ``DocumentCache`` holds
as valid and which is a query or a mutation. ``execute_kept`` runs it as ``Schema.execute``
would: graphql-core's ``execute`` with fincap's execution context, the document's kept plans,
the same context, the schema's error logging and the same error mask. Everything else (the
first request of a text, an invalid document, GET, batches, multipart bodies, subscriptions,
malformed fields) goes the long way unchanged, and gets the long way's answers and errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphql import ExecutionResult as GraphQLExecutionResult
from graphql import OperationType, execute, get_operation_ast
from strawberry.execution.is_awaitable import optimized_is_awaitable
from strawberry.types import ExecutionResult
from strawberry.utils.await_maybe import await_maybe

from app.graphql.document_cache import PLANS_KEY, Checked, DocumentCache
from app.graphql.execution import FastExecutionContext
from app.graphql.limits import MaskUnexpectedErrors

# What a POST's JSON body may hold for the short way; anything else takes the long way, which
# answers it (a non-string query, non-object variables...) with its own 400.
_TEXT = (str, type(None))
_OBJECT = (dict, type(None))
_RUNS_HERE = (OperationType.QUERY, OperationType.MUTATION)


@dataclass(frozen=True)
class KeptOperation:
    """A request's operation over a document kept valid: what ``execute_kept`` runs."""

    checked: Checked
    variables: dict[str, Any] | None
    operation_name: str | None
    extensions: dict[str, Any] | None


def kept_operation(documents: DocumentCache, body: Any) -> KeptOperation | None:
    """The operation ``body`` (a POST's parsed JSON) asks for, when its document is kept and
    valid and runs as a query or mutation; None for any request the long way must answer."""
    if not isinstance(body, dict):
        return None  # a batch, or a JSON value that is no request
    query = body.get("query")
    variables = body.get("variables")
    operation_name = body.get("operationName")
    extensions = body.get("extensions")
    if not (
        isinstance(query, str)
        and isinstance(variables, _OBJECT)
        and isinstance(operation_name, _TEXT)
        and isinstance(extensions, _OBJECT)
    ):
        return None
    checked = documents.valid(query)
    if checked is None:
        return None
    operation = get_operation_ast(checked.document, operation_name)
    if operation is None or operation.operation not in _RUNS_HERE:
        return None  # no such operation, or a subscription: the long way's 400
    return KeptOperation(checked, variables, operation_name, extensions)


async def execute_kept(
    schema: Any, kept: KeptOperation, context: dict[str, Any], mask: MaskUnexpectedErrors
) -> ExecutionResult:
    """Run ``kept`` as ``Schema.execute`` runs a kept document: the same executor, context
    and kept plans; unexpected errors logged by the schema, then masked."""
    context[PLANS_KEY] = kept.checked.plans
    result: GraphQLExecutionResult = await await_maybe(
        execute(
            schema._schema,
            kept.checked.document,
            variable_values=kept.variables,
            operation_name=kept.operation_name,
            context_value=context,
            # Strawberry's own test (its ``Schema.execute`` passes it too); typed as a bool
            # where graphql-core asks for a TypeGuard, which is what it reads it as.
            is_awaitable=optimized_is_awaitable,  # type: ignore[arg-type]
            executor_class=FastExecutionContext,
            # Strawberry's execution context keeps the request's extensions for resolvers.
            operation_extensions=kept.extensions,
        )
    )
    errors = result.errors
    if errors:
        schema.process_errors(errors)
        errors = mask.masked(errors)
    return ExecutionResult(data=result.data, errors=errors)
