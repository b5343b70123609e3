"""The brand list: built reproducibly from the name-suggestion-index, matched only where the
text is the brand, and feeding categorization."""

from __future__ import annotations

import gzip
from types import ModuleType

from engines.extraction import categorize
from engines.extraction.brands import brand_index, normalize
from tests.extraction.scripts import load_script


def _script() -> ModuleType:
    return load_script("build_brands")


def _item(name: str, countries: list[str], match: list[str] | None = None) -> dict:
    item: dict = {
        "displayName": name,
        "tags": {"brand": name, "name": name},
        "locationSet": {"include": countries},
    }
    if match:
        item["matchNames"] = match
    return item


FAKE_INDEX = {
    "brands/shop/supermarket": {
        "items": [_item("Fresco Markt", ["de", "at"]), _item("Зелёный", ["ru"])]
    },
    "brands/amenity/cafe": {"items": [_item("Fresco Markt", ["de"])]},
    "brands/amenity/fuel": {"items": [_item("Petrolia", ["001"], ["petrolia station"])]},
    "brands/amenity/atm": {"items": [_item("Cashpoint", ["gb"])]},
    "brands/shop/bicycle": {"items": [_item("Velo Haus", ["de"])]},
    "operators/amenity/post_office": {"items": [_item("Post", ["de"])]},
}


def test_build_keeps_receipt_issuing_brands_once_with_their_category() -> None:
    script = _script()
    rows = script.brand_rows(FAKE_INDEX)
    by_name = {row[0]: row for row in rows}
    # One row per brand: the kind with the most countries wins (supermarket over café).
    assert by_name["Fresco Markt"][1:4] == ("Groceries", "shop=supermarket", "at,de")
    assert by_name["Petrolia"][1] == "Fuel" and by_name["Petrolia"][4] == "petrolia station"
    # Every other shop sells goods; ATMs, operators and non-Latin names are left out.
    assert by_name["Velo Haus"][1] == "Shopping"
    assert set(by_name) == {"Fresco Markt", "Petrolia", "Velo Haus"}
    # The same rows give the same bytes (no time stamp in the gzip header).
    assert script.encode(rows) == script.encode(script.brand_rows(FAKE_INDEX))
    assert gzip.decompress(script.encode(rows)).decode().count("\n") == 3


def test_shipped_list_is_large_and_loads() -> None:
    assert len(brand_index()) > 5000


def test_brands_match_as_whole_words_with_their_coverage() -> None:
    index = brand_index()
    whole = index.find_brands("Globus Baumarkt")
    assert whole and whole[0].brand.name == "Globus Baumarkt" and whole[0].coverage == 1.0
    partial = index.find_brands("Thank you for shopping at Kaufland today")
    assert partial and partial[0].brand.name == "Kaufland" and partial[0].coverage < 0.3
    # Receipt words are never brands, and a brand inside a word is no match.
    assert index.find_brands("TOTAL CASH CHANGE") == []
    assert all(m.brand.name != "Kaufland" for m in index.find_brands("Zukauflandung"))
    assert index.brand_for_domain("kaufland") is not None
    assert index.brand_for_domain("example") is None


def test_normalize_folds_accents_and_abbreviation_dots() -> None:
    assert normalize("A.B.C. Mart") == "abc mart"
    assert normalize("Café Müller") == "cafe muller"


def test_brand_category_feeds_categorization() -> None:
    assert categorize("Globus Baumarkt GmbH")[0] == "Shopping"
    assert categorize("Unknown Name", brand_category="Fuel") == ("Fuel", 0.9)
    # A brand that is merely one word of a longer name decides nothing.
    assert categorize("Acme International Sdn Bhd")[0] == "Other"


def test_a_brand_leading_a_name_with_a_branch_or_country_still_categorizes() -> None:
    assert categorize("Hornbach Baumarkt Filiale Nord")[0] == "Shopping"
