"""Categorization: overrides win, brands and keywords decide otherwise."""

from __future__ import annotations

from decimal import Decimal

from engines.extraction import TAXONOMY, LineItem, categorize


def test_workspace_override_wins_for_the_normalized_merchant() -> None:
    overrides = {"Corner Cafe Ltd.": "Entertainment"}
    assert categorize("CORNER CAFE LTD", (), "coffee latte", overrides) == ("Entertainment", 1.0)
    # A different merchant is not affected by the override.
    category, _ = categorize("Other Cafe", (), "coffee latte", overrides)
    assert category == "Meals"


def test_known_brand_and_keywords() -> None:
    assert categorize("EDEKA", (), "")[0] == "Groceries"
    items = (LineItem("Printer paper A4", amount=Decimal("5.00")),)
    category, confidence = categorize("Some Shop", items, "")
    assert category == "Office Supplies"
    assert 0 < confidence < 1
    assert categorize(None, (), "")[0] == "Other"


def test_every_answer_is_in_the_taxonomy() -> None:
    for merchant in ("Shell Station", "Hotel Adler", "Apotheke am Markt", "Random Name"):
        assert categorize(merchant, (), "")[0] in TAXONOMY
