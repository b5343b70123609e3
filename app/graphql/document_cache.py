"""Parsed and validated GraphQL documents, kept by their text.

A dashboard sends the same few documents again and again; parsing one and validating it (the
schema's rules plus our limits: expanded size, aliases, cost, depth) took 10-20 ms a request.
``DocumentCache`` keeps, per schema, the parsed document of each text and the errors its
validation found (none for a valid one), least recently used first, at most ``maxsize``
texts and ``max_bytes`` of estimated memory. A request whose text is kept skips the parser,
the limits and the validation rules.

Bounded in bytes, and filled only by requests that authenticate (the face says which, under
``KEEP_KEY`` in the context; anyone may still *read* it): a parsed document is up to ~70 times
its text (the syntax tree and its tokens), and 600 unique 64 KB documents sent with no
credential took the server from 345 to 1,100 MB when the bound was a count of 512 (issue 35).

Strawberry ships ``ParserCache`` and ``ValidationCache`` for this, but they do not fit: their
LRU caches live at module level (shared by every schema with the same size), and the
validation cache is keyed by the tuple of validation rule classes (strawberry's
``QueryDepthLimiter`` and ``MaxAliasesLimiter`` create them anew for every request), and our
own limit check (``expansion_error``) runs outside any rule, so it would run every time anyway.
``CheckedDocuments`` runs every check of a document and this cache in one extension.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphql import ASTValidationRule, DocumentNode, GraphQLError
from strawberry.extensions import SchemaExtension

from app.graphql.limits import Limits, expansion_error, limit_rules, refuse_oversized

# The context entry (of a dict context) saying whether this request may fill the cache; a
# context without it may (schemas used without a face: tests, tools).
KEEP_KEY = "keep_document"
# The context entry holding the kept document's ``Checked.plans`` for the executor
# (``app.graphql.execution``): what it compiled for this document, reused by the next request.
PLANS_KEY = "document_plans"
# What one token of a parsed document costs, with its share of the tree (measured with
# tracemalloc: 4.7 MB for 16,000 tokens; 14 KB for a 30-token query).
BYTES_PER_TOKEN = 350


def estimated_bytes(text: str, document: DocumentNode) -> int:
    """What keeping ``document`` (parsed from ``text``) costs: its text and its tokens."""
    tokens = 0
    token = document.loc.start_token if document.loc is not None else None
    while token is not None:
        tokens += 1
        token = token.next
    return len(text) + BYTES_PER_TOKEN * tokens


@dataclass(frozen=True)
class Checked:
    """A document as parsed from its text, what validating it found (empty: valid), and the
    executor's compiled completions of its selections (``plans``; they live and die with the
    document, whose nodes they are keyed by)."""

    document: DocumentNode
    errors: tuple[GraphQLError, ...]
    plans: dict[Any, Any] = field(default_factory=dict, compare=False)


class DocumentCache:
    """The most recently used documents of one schema, by their text: at most ``maxsize`` of
    them (0: none) and ``max_bytes`` of estimated memory."""

    def __init__(self, maxsize: int, max_bytes: int = 32 * 1024 * 1024) -> None:
        self.maxsize = maxsize
        self.max_bytes = max_bytes
        self._kept: OrderedDict[str, tuple[Checked, int]] = OrderedDict()
        self.bytes = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, text: str) -> Checked | None:
        entry = self._kept.get(text)
        if entry is None:
            self.misses += 1
            return None
        self.hits += 1
        self._kept.move_to_end(text)
        return entry[0]

    def valid(self, text: str) -> Checked | None:
        """The kept document of ``text`` when validating it found nothing (counted as a hit),
        else None (counted nowhere: the request goes on to ``get`` it the long way)."""
        entry = self._kept.get(text)
        if entry is None or entry[0].errors:
            return None
        self.hits += 1
        self._kept.move_to_end(text)
        return entry[0]

    def put(self, text: str, checked: Checked) -> None:
        size = estimated_bytes(text, checked.document)
        if self.maxsize <= 0 or size > self.max_bytes:
            return
        previous = self._kept.pop(text, None)
        if previous is not None:
            self.bytes -= previous[1]
        self._kept[text] = (checked, size)
        self.bytes += size
        while len(self._kept) > self.maxsize or self.bytes > self.max_bytes:
            _, (_, dropped) = self._kept.popitem(last=False)
            self.bytes -= dropped


@dataclass(frozen=True)
class DocumentChecks:
    """What a request's document must pass before it runs, built once per schema: the limits,
    the capabilities' costs, the depth and alias rules (``app.graphql.limits``), and the
    documents kept checked."""

    limits: Limits
    costs: Mapping[str, int]
    cache: DocumentCache
    rules: tuple[type[ASTValidationRule], ...]

    @classmethod
    def of(cls, limits: Limits, costs: Mapping[str, int], cache: DocumentCache) -> DocumentChecks:
        return cls(limits, dict(costs), cache, limit_rules(limits))


class CheckedDocuments(SchemaExtension):
    """Every check of a request's document, in one extension, and the cache that spares them.

    Before parsing: the size (``refuse_oversized``), then the cache: a kept text sets the
    request's document and its validation errors (none for a valid one), and strawberry skips
    the parser, the token limit, ``expansion_error`` and the validation rules. A text not kept
    is parsed with the token limit; its expanded size and cost are counted before the rules
    (an alias bomb is refused before the depth and alias rules walk it), the rules run with the
    schema's own, and what they found is kept. A document that fails to parse is not kept: it
    has no document to keep.

    One extension instead of six (a size limiter, the cache, the expansion limiter, and
    strawberry's depth, token and alias limiters): strawberry makes every extension anew for
    each request and calls each of its hooks, and the two rule-adding limiters built a rule
    class each time, which cost a cached ``node(id:)`` a tenth of its time (issue 37).
    """

    def __init__(self, checks: DocumentChecks) -> None:
        self.checks = checks
        self._hit: Checked | None = None  # what the cache held for this request's text
        self._fresh: str | None = None  # the text this request parsed itself

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        text = context.query
        refuse_oversized(text, self.checks.limits)
        if text and context.graphql_document is None:
            self._hit = self.checks.cache.get(text)
            if self._hit is not None:
                context.graphql_document = self._hit.document  # strawberry then skips parsing
            else:
                context.parse_options["max_tokens"] = self.checks.limits.max_tokens
        yield
        if text and self._hit is None and context.graphql_document is not None and self._keeps():
            self._fresh = text

    def _keeps(self) -> bool:
        """Whether this request may fill the cache (``KEEP_KEY``)."""
        value = self.execution_context.context
        return not isinstance(value, dict) or bool(value.get(KEEP_KEY, True))

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        hit = self._hit
        kept = hit is not None and hit.document is context.graphql_document
        if hit is not None and kept:
            if context.pre_execution_errors is None:
                context.pre_execution_errors = list(hit.errors)
        elif context.graphql_document is not None and context.pre_execution_errors is None:
            error = expansion_error(context.graphql_document, self.checks.limits, self.checks.costs)
            if error is not None:
                context.pre_execution_errors = [error]  # strawberry then skips the rules
            else:
                context.validation_rules = (*context.validation_rules, *self.checks.rules)
        yield
        # After strawberry's validation: the errors are all of them, the limits' and the rules'.
        if self._fresh is not None and context.graphql_document is not None:
            errors = tuple(context.pre_execution_errors or ())
            checked = Checked(context.graphql_document, errors)
            self.checks.cache.put(self._fresh, checked)
            self._share_plans(checked)
        elif hit is not None and kept:
            self._share_plans(hit)

    def _share_plans(self, checked: Checked) -> None:
        value = self.execution_context.context
        if isinstance(value, dict):
            value[PLANS_KEY] = checked.plans
