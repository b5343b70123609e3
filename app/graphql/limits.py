"""Bounds on one GraphQL document, checked before anything runs, and the mask on errors.

``Limits`` sizes them; ``refuse_oversized`` refuses a document too long to parse;
``expansion_error`` counts field selections, aliases and capability cost with fragment spreads
expanded (linear in the document, where strawberry's own limiters are exponential on an alias
bomb); ``limit_rules`` are the depth and alias rules; ``MaskUnexpectedErrors`` hides the text of
an exception nobody expected. ``app.graphql.document_cache.CheckedDocuments`` applies the
checks (skipped for a document kept checked); the schema builder (``app.graphql.builder``)
installs it and the mask.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from graphql import (
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    InlineFragmentNode,
    OperationDefinitionNode,
    SelectionSetNode,
)
from strawberry.exceptions import StrawberryGraphQLError
from strawberry.extensions import MaskErrors, MaxAliasesLimiter, QueryDepthLimiter

INTERNAL_ERROR = "Internal server error"
# The reason of an error nobody expected, as every face names it (``CapabilityError.reason``;
# this module imports no resolvers, tests/graphql/test_face.py keeps the two equal).
INTERNAL_REASON = "internal_error"


@dataclass(frozen=True)
class Limits:
    """Bounds on one GraphQL document, checked before anything runs (the size before parsing).

    Sized for generous clients: our deepest type (a document with line items) needs ~5 levels,
    GraphiQL's introspection query is ~300 tokens (introspection fields do not count towards
    depth), and no legitimate query needs more than a few aliases. An alias bomb, a fragment
    cycle of nested selections or a megabyte of tokens fails validation with a 4xx.
    """

    max_depth: int = 10
    max_tokens: int = 2000
    max_aliases: int = 30
    # Field selections after expanding every fragment spread; GraphiQL's introspection query
    # expands to ~200, a wide real query to a few hundred.
    max_selections: int = 2000
    # Checked before parsing: comments and whitespace are not tokens, but the lexer reads every
    # byte (15 MB of comments held the event loop for seconds). GraphiQL's introspection query
    # is ~3 KB; 64 KB lex in a few milliseconds.
    max_document_bytes: int = 64 * 1024
    # Sum of the ``cost`` of the capability fields selected (fragments expanded, every alias
    # counted): expensive capabilities (documents.inspect reads the original with OCR) declare
    # a cost, so one request cannot run five of them at once.
    max_cost: int = 1
    # Documents kept parsed and validated, by their text (``document_cache``; 0: none), and
    # the memory they may take (estimated: the text and its tokens).
    document_cache: int = 512
    document_cache_bytes: int = 32 * 1024 * 1024


def is_safe_error(error: GraphQLError) -> bool:
    """Whether ``error`` may be shown as it is.

    Safe: errors of the request itself (syntax, validation, variables: no original exception),
    errors a resolver raised on purpose as ``GraphQLError`` (capability errors carry their
    ``extensions.code``) and strawberry's scalar coercion messages. Anything else comes from an
    exception nobody expected, and its text may carry internals (hosts, paths, queries).
    """
    original = error.original_error
    return original is None or isinstance(original, (GraphQLError, StrawberryGraphQLError))


class MaskUnexpectedErrors(MaskErrors):
    """Replace unexpected errors by "Internal server error" with code INTERNAL_SERVER_ERROR."""

    def __init__(self) -> None:
        super().__init__(should_mask_error=lambda e: not is_safe_error(e), error_message="")

    def _process_result(self, result: object) -> None:
        # MaskErrors asks a runtime-checkable Protocol whether the result has errors, which
        # walks the protocol's members on every request; the attribute itself is enough.
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = self.masked(errors)  # type: ignore[attr-defined]

    def masked(self, errors: list[GraphQLError]) -> list[GraphQLError]:
        """``errors`` as a client may see them (the short way of ``app.graphql.kept_requests``
        masks with this too)."""
        return self._process_errors(errors)

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        return GraphQLError(
            INTERNAL_ERROR,
            nodes=error.nodes,
            path=error.path,
            extensions={"code": "INTERNAL_SERVER_ERROR", "status": 500, "reason": INTERNAL_REASON},
        )


def expanded_size(document: DocumentNode) -> tuple[int, int]:
    """(field selections, aliases) of every operation with fragment spreads expanded."""
    fields, aliases, _ = expanded_counts(document, {})
    return fields, aliases


def expanded_counts(document: DocumentNode, costs: Mapping[str, int]) -> tuple[int, int, int]:
    """(field selections, aliases, cost) of every operation with fragment spreads expanded;
    ``costs`` gives the cost of a field by name (capability fields; others cost nothing).

    One memo entry per fragment keeps this linear in the document's size, whereas the expanded
    size itself may be exponential (a fragment spreading another ten times, and so on).
    Undefined or cyclic spreads count zero: validation reports them.
    """
    fragments = {
        definition.name.value: definition
        for definition in document.definitions
        if isinstance(definition, FragmentDefinitionNode)
    }
    memo: dict[str, tuple[int, int, int]] = {}
    in_progress: set[str] = set()

    def count(selection_set: SelectionSetNode | None) -> tuple[int, int, int]:
        fields = aliases = cost = 0
        for selection in selection_set.selections if selection_set else ():
            inner = (0, 0, 0)
            if isinstance(selection, FieldNode):
                inner = count(selection.selection_set)
                fields += 1
                aliases += selection.alias is not None
                cost += costs.get(selection.name.value, 0)
            elif isinstance(selection, InlineFragmentNode):
                inner = count(selection.selection_set)
            elif isinstance(selection, FragmentSpreadNode):
                name = selection.name.value
                if name not in memo and name in fragments and name not in in_progress:
                    in_progress.add(name)
                    memo[name] = count(fragments[name].selection_set)
                    in_progress.discard(name)
                inner = memo.get(name, (0, 0, 0))
            fields, aliases, cost = fields + inner[0], aliases + inner[1], cost + inner[2]
        return fields, aliases, cost

    totals = [
        count(definition.selection_set)
        for definition in document.definitions
        if isinstance(definition, OperationDefinitionNode)
    ]
    return (
        sum(t[0] for t in totals),
        sum(t[1] for t in totals),
        sum(t[2] for t in totals),
    )


def refuse_oversized(query: str | None, limits: Limits) -> None:
    """Raises a ``GraphQLError`` when ``query`` is over ``max_document_bytes``: checked before
    the parser reads it (raised before parsing starts, it becomes the request's only error)."""
    query = query or ""
    # A character is at most four bytes: only long documents pay for the exact count.
    if len(query) * 4 > limits.max_document_bytes:
        size = len(query.encode("utf-8", "surrogatepass"))
        if size > limits.max_document_bytes:
            raise GraphQLError(
                f"The GraphQL document has {size} bytes. Allowed: {limits.max_document_bytes}"
            )


def expansion_error(
    document: DocumentNode, limits: Limits, costs: Mapping[str, int]
) -> GraphQLError | None:
    """The error of a document whose expanded size or cost is over the limits, else None.

    Strawberry's alias and depth limiters walk every fragment spread again, so a few hundred
    tokens of nested fragments (an alias bomb) would take them exponential time. This check is
    linear, and runs before them: a request with errors skips the validation rules.
    """
    selections, aliases, cost = expanded_counts(document, costs)
    if aliases > limits.max_aliases:
        return GraphQLError(f"{aliases} aliases found. Allowed: {limits.max_aliases}")
    if selections > limits.max_selections:
        return GraphQLError(
            f"{selections} field selections after expanding fragments. "
            f"Allowed: {limits.max_selections}"
        )
    if cost > limits.max_cost:
        priced = ", ".join(f"{name} costs {c}" for name, c in sorted(costs.items()))
        return GraphQLError(
            f"The operation costs {cost}. Allowed: {limits.max_cost} "
            f"({priced}; send expensive fields in separate requests)"
        )
    return None


def limit_rules(limits: Limits) -> tuple[type[ASTValidationRule], ...]:
    """The validation rules of the depth and alias limits, built once per schema.

    Strawberry's ``QueryDepthLimiter`` and ``MaxAliasesLimiter`` are extensions that build a
    rule class each time they are made, which is once a request; the rule classes themselves
    keep nothing between validations, so one pair serves every request.
    """
    return (
        *QueryDepthLimiter(max_depth=limits.max_depth).validation_rules,
        *MaxAliasesLimiter(max_alias_count=limits.max_aliases).validation_rules,
    )
