"""Parsed and validated GraphQL documents, kept by their text.

A dashboard sends the same few documents again and again; parsing one and validating it (the
schema's rules plus our limits: expanded size, aliases, cost, depth) took 10-20 ms a request.
``DocumentCache`` keeps, per schema, the parsed document of each text and the errors its
validation found (none for a valid one), least recently used first, at most ``maxsize``
texts. A request whose text is kept skips the parser, the limits and the validation rules.

Strawberry ships ``ParserCache`` and ``ValidationCache`` for this, but they do not fit: their
LRU caches live at module level (shared by every schema with the same size), and the
validation cache is keyed by the tuple of validation rule classes, which ``QueryDepthLimiter``
and ``MaxAliasesLimiter`` create anew for every request, so it never hits (and fills with
entries that are never read). Our own limit check (``ExpansionLimiter``) runs in a validation
hook, outside any rule, so it would run every time anyway.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from graphql import DocumentNode, GraphQLError
from strawberry.extensions import SchemaExtension


@dataclass(frozen=True)
class Checked:
    """A document as parsed from its text, and what validating it found (empty: valid)."""

    document: DocumentNode
    errors: tuple[GraphQLError, ...]


class DocumentCache:
    """The ``maxsize`` most recently used documents of one schema, by their text (0: none)."""

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._kept: OrderedDict[str, Checked] = OrderedDict()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, text: str) -> Checked | None:
        checked = self._kept.get(text)
        if checked is None:
            self.misses += 1
            return None
        self.hits += 1
        self._kept.move_to_end(text)
        return checked

    def put(self, text: str, checked: Checked) -> None:
        if self.maxsize <= 0:
            return
        self._kept[text] = checked
        self._kept.move_to_end(text)
        while len(self._kept) > self.maxsize:
            self._kept.popitem(last=False)


class CachedDocuments(SchemaExtension):
    """Serves a request's parsing and validation from ``cache`` when its text is kept, and
    keeps what a request parsed and validated.

    First among the extensions that validate: on a hit it sets the request's pre-execution
    errors (an empty list for a valid document), which makes strawberry skip its validation
    rules and ``ExpansionLimiter`` skip its count. The size check before parsing still runs
    (cheap), and a document that fails to parse is not kept: it has no document to keep.
    """

    def __init__(self, cache: DocumentCache) -> None:
        self.cache = cache
        self._hit: Checked | None = None  # what the cache held for this request's text
        self._fresh: str | None = None  # the text this request parsed itself

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        text = context.query
        if text and context.graphql_document is None:
            self._hit = self.cache.get(text)
            if self._hit is not None:
                context.graphql_document = self._hit.document  # strawberry then skips parsing
        yield
        if text and self._hit is None and context.graphql_document is not None:
            self._fresh = text

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        hit = self._hit
        kept = hit is not None and hit.document is context.graphql_document
        if hit is not None and kept and context.pre_execution_errors is None:
            context.pre_execution_errors = list(hit.errors)
        yield
        # After every other validation hook (they exit in reverse order): the errors are
        # all of them, the limits' and the rules'.
        if self._fresh is not None and context.graphql_document is not None:
            errors = tuple(context.pre_execution_errors or ())
            self.cache.put(self._fresh, Checked(context.graphql_document, errors))
