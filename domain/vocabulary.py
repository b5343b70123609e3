"""A closed vocabulary of the contract, declared once: its values and what each one means.

A vocabulary's values are one ``Literal`` (the static type pydantic, mypy and every face read);
``vocabulary()`` pairs it with the meaning of each value (the text the GraphQL explorer shows
for each enum value, through ``schema.value_meanings``) and checks, at import, that every value
is described and nothing else.
Its named subsets (``subset``) and any other order the contract lists it in (``spelled``) are
declared beside it, in ``domain/``, and checked the same way; every other package imports them.
``tests/test_vocabularies.py`` fails when a second list of a vocabulary's values appears
outside ``domain/``.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any


def _values(literal: Any) -> tuple[str, ...]:
    return tuple(typing.get_args(literal))


@dataclass(frozen=True)
class Vocabulary:
    """The values of one ``Literal``, in its order, and the meaning of each."""

    values: tuple[str, ...]
    meanings: Mapping[str, str]

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def __contains__(self, value: object) -> bool:
        return value in self.meanings

    def meaning(self, value: str) -> str:
        """What ``value`` means (a KeyError for a value not of this vocabulary)."""
        return self.meanings[value]

    def subset(self, literal: Any) -> tuple[Any, ...]:
        """The values of ``literal``, a named part of this vocabulary (checked now)."""
        values = _values(literal)
        strange = [value for value in values if value not in self.meanings]
        if strange or not values:
            raise ValueError(f"{strange or 'nothing'} not of the vocabulary {list(self.values)}")
        return values

    def spelled(self, literal: Any) -> None:
        """Check that ``literal`` holds exactly this vocabulary's values (in another order a
        field of the contract has always listed them in)."""
        if sorted(_values(literal)) != sorted(self.values):
            raise ValueError(f"{_values(literal)} is not the vocabulary {list(self.values)}")


def vocabulary(literal: Any, meanings: Mapping[str, str]) -> Vocabulary:
    """Declare a vocabulary: every value of ``literal`` described, nothing else (checked now)."""
    values = _values(literal)
    if len(set(values)) != len(values) or set(values) != set(meanings):
        raise ValueError(f"meanings of {sorted(values)} do not match: {sorted(meanings)}")
    return Vocabulary(values, dict(meanings))
