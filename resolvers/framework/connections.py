"""Relay cursor connections: the arguments every connection takes, and paging of lists the
server reads whole.

A connection field takes ``first``/``after`` (forward) or ``last``/``before`` (backward).
``page_size`` checks them the same way for every list. The documents' connection pages in the
store (``resolvers.resources.documents.connection``); the short lists nested in a workspace or a
document (members, rules, a document's duplicates and corrections, each bounded) are read whole
by their own reads and paged here by ``page_of``: keyset pages over (sort value, id), with the
same signed cursors (``resolvers.framework.cursors``) bound to the list, its arguments and the
workspace, so a cursor of another list or workspace is refused, never reinterpreted. A record
added or removed between two pages moves no other record: the next page starts after the
cursor's key, not at an offset.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from engines.keyring import Keyring
from resolvers.framework import cursors
from resolvers.framework.errors import BadRequest
from schema.connections import DEFAULT_PAGE, MAX_PAGE, PageInfo

T = TypeVar("T")


@dataclass(frozen=True)
class Relay:
    """The Relay arguments of one connection field, as given."""

    first: int | None = None
    after: str | None = None
    last: int | None = None
    before: str | None = None

    @classmethod
    def of(cls, arguments: Mapping[str, Any] | None) -> Relay:
        arguments = arguments or {}
        return cls(
            first=arguments.get("first"),
            after=arguments.get("after"),
            last=arguments.get("last"),
            before=arguments.get("before"),
        )


def page_size(relay: Relay) -> tuple[int, bool]:
    """(records per page, forward?) after checking that the arguments make one page."""
    if relay.first is not None and relay.last is not None:
        raise BadRequest("Invalid request: first and last: give one (first pages forward)")
    forward = relay.last is None
    if forward and relay.before is not None:
        raise BadRequest("Invalid request: before: pages backward; use it with last")
    if not forward and relay.after is not None:
        raise BadRequest("Invalid request: after: pages forward; use it with first")
    size = (relay.first if forward else relay.last) or DEFAULT_PAGE
    name = "first" if forward else "last"
    for given in (relay.first, relay.last):
        if given is not None and not 1 <= given <= MAX_PAGE:
            raise BadRequest(f"Invalid request: {name}: between 1 and {MAX_PAGE} (got {given})")
    return size, forward


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list read whole: its records with their cursors, and where it stands."""

    records: list[T]
    cursors: list[str]
    page_info: PageInfo
    total: int


def page_of(
    records: Sequence[T],
    key: Callable[[T], tuple[Any, str]],
    relay: Relay,
    query: dict[str, Any],
    keyring: Keyring,
    *,
    descending: bool = False,
) -> Page[T]:
    """The page of ``records`` that ``relay`` asks for, in the order of ``key`` (a sort value
    and an id unique in the list; ``descending`` for newest first).

    ``query`` names the list and what decides its content (list name, workspace, arguments):
    its fingerprint binds the cursors. ``hasNextPage`` and ``hasPreviousPage`` are exact in both
    directions, the whole list being at hand.
    """
    size, forward = page_size(relay)
    query_print = cursors.fingerprint(query)
    ordered = sorted(records, key=key, reverse=descending)
    given = relay.after if forward else relay.before
    position = None if given is None else _position(given, query_print, keyring)

    def beyond(record: T) -> bool:  # after the cursor, in the list's order
        assert position is not None
        return key(record) < position if descending else key(record) > position

    if forward:
        remaining = [r for r in ordered if position is None or beyond(r)]
        page = remaining[:size]
        has_next = len(remaining) > size
        has_previous = len(ordered) > len(remaining)
    else:
        preceding = [
            r for r in ordered if position is None or (not beyond(r) and key(r) != position)
        ]
        page = preceding[-size:]
        has_previous = len(preceding) > size
        has_next = len(ordered) > len(preceding)
    signed = [cursors.encode_key(*key(r), query_print, keyring) for r in page]
    return Page(
        records=page,
        cursors=signed,
        page_info=PageInfo(
            hasNextPage=has_next,
            hasPreviousPage=has_previous,
            startCursor=signed[0] if signed else None,
            endCursor=signed[-1] if signed else None,
        ),
        total=len(ordered),
    )


def _position(cursor: str, query_print: str, keyring: Keyring) -> tuple[Any, str]:
    return cursors.key_of(cursors.decode(cursor, query_print, keyring))
