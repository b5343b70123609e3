"""Cities that tell a document's country, found as whole words in its text.

The list (``data/places.tsv.gz``: cities of at least 100,000 inhabitants of the countries in
``countries``, from GeoNames) is built by ``scripts/build_places.py``. Names are matched on
word boundaries, several words at once ("Kuala Lumpur", "Frankfurt am Main"), through one
dictionary lookup per run of words rather than one pattern per name.
"""

from __future__ import annotations

import gzip
import re
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "places.tsv.gz"
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Place:
    """A city name found in a text: its country, its name as listed, where it starts."""

    country: str
    name: str
    start: int


class PlaceIndex:
    """City names by their words, and each country's names by population."""

    def __init__(self, rows: list[tuple[str, str, int]]) -> None:
        self._by_words: dict[tuple[str, ...], str] = {}
        by_country: dict[str, list[tuple[int, str]]] = defaultdict(list)
        for country, name, population in rows:
            self._by_words[tuple(name.split())] = country
            by_country[country].append((population, name))
        self._longest = max((len(words) for words in self._by_words), default=1)
        self._names = {
            code: tuple(name for _, name in sorted(names, key=lambda item: (-item[0], item[1])))
            for code, names in by_country.items()
        }

    def names(self, country: str) -> tuple[str, ...]:
        """The country's city names, largest city first (upper case)."""
        return self._names.get(country, ())

    def find(self, upper_text: str) -> list[Place]:
        """Every listed city named in ``upper_text``, longest names first where they overlap,
        in the order of the text."""
        words = [(match.start(), match.group()) for match in _WORD.finditer(upper_text)]
        found: list[Place] = []
        taken: set[int] = set()
        for size in range(min(self._longest, len(words)), 0, -1):
            for index in range(len(words) - size + 1):
                if any(i in taken for i in range(index, index + size)):
                    continue
                key = tuple(word for _, word in words[index : index + size])
                country = self._by_words.get(key)
                if country is not None:
                    found.append(Place(country, " ".join(key), words[index][0]))
                    taken.update(range(index, index + size))
        return sorted(found, key=lambda place: place.start)


@lru_cache(maxsize=1)
def place_index(path: Path = DATA_FILE) -> PlaceIndex:
    """The city list, loaded once per process."""
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            country, name, population = line.rstrip("\n").split("\t")
            rows.append((country, name, int(population)))
    return PlaceIndex(rows)
