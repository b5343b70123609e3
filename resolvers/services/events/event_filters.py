"""Which live events a filtered subscription wants (GraphQL ``documentEvents(filter:)``).

A filter is a where-clause (the GraphQL face translates its typed filter to one), checked by
the same compiler as ``documents.search`` (fields, value types, depth, condition and list
bounds, safe regexes) and evaluated on each event's document with the in-memory matcher
(``persistence.documents.matching``), the evaluator the ranked search already trusts to agree
with the store. Nothing is read for it: the hub reads each event's document once to render it,
for every subscriber of the workspace, and the test runs on that read.

What passes, event by event:

- an event whose document, as read when the event is delivered (the document the event
  carries), matches the filter. An archived document keeps its fields, so its
  ``document.archived`` event passes when they match; a document that stops matching sends no
  more events (a client that must see documents leave subscribes without a filter, or reads
  the list again);
- an event whose document no longer exists (``document`` is null): there is nothing to test,
  and a client that holds the id must hear that it is gone, so it passes;
- ``lagged``: it says events were missed, which the filter cannot judge, so it passes.
"""

from __future__ import annotations

from collections.abc import Callable

from domain.where import WhereClause
from persistence.documents import SEARCH_FIELDS, UnsupportedFilter, predicate
from persistence.where import WhereError, compile_where
from resolvers.framework.errors import BadRequest
from resolvers.services.events.hub import EventTest
from schema.events import DocumentEvent


def event_filter(
    where: WhereClause | None, locate: Callable[[str], str] = lambda location: location
) -> EventTest | None:
    """The test of a subscription filtered by ``where`` (None: no filter, every event);
    ``BadRequest`` naming the condition (``locate`` turns a where-clause location into the
    caller's own) for a clause ``documents.search`` would refuse."""
    if where is None:
        return None
    try:
        test = predicate(compile_where(where, SEARCH_FIELDS))
    except WhereError as error:
        raise BadRequest(f"Invalid request: {locate(error.location)}: {error.reason}") from None
    except UnsupportedFilter as error:  # the compiler emitted what the matcher cannot read
        raise BadRequest(
            f"Invalid request: {locate('where')}: live events cannot evaluate {error}"
        ) from None

    def accepts(event: DocumentEvent) -> bool:
        if event.type == "lagged" or event._stored is None:
            return True
        return test(event._stored)

    return accepts
