"""``categorize``: a category of the default taxonomy for a document, with a confidence.

Evidence, strongest first: the workspace's own corrections (``overrides``) for the same
normalized merchant; a known brand; keywords in the merchant name; keywords in line
items and in the text. Keyword evidence is summed per category and turned into a
confidence that grows with the margin over the runner-up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from .fields.field_types import LineItem
from .known_merchants import BRANDS, normalize_merchant

TAXONOMY: tuple[str, ...] = (
    "Meals",
    "Groceries",
    "Travel",
    "Lodging",
    "Fuel",
    "Office Supplies",
    "Software",
    "Utilities",
    "Transport",
    "Telecom",
    "Shopping",
    "Healthcare",
    "Entertainment",
    "Professional Services",
    "Other",
)

KEYWORDS: dict[str, tuple[str, ...]] = {
    "Meals": (
        "restaurant",
        "restoran",
        "cafe",
        "café",
        "coffee",
        "kopi",
        "bistro",
        "bar",
        "pizza",
        "burger",
        "sushi",
        "food",
        "kitchen",
        "bakery",
        "bäckerei",
        "meal",
        "lunch",
        "dinner",
        "breakfast",
        "gastst",
        "imbiss",
        "tip",
        "trinkgeld",
        "confectionery",
        "nasi",
        "mee",
        "teh",
        "latte",
        "beer",
        "wine",
    ),
    "Groceries": (
        "supermarket",
        "grocer",
        "grocery",
        "market",
        "markt",
        "mart",
        "milk",
        "milch",
        "bread",
        "brot",
        "joghurt",
        "yogurt",
        "eggs",
        "fruit",
        "obst",
        "gemüse",
        "vegetable",
        "käse",
        "cheese",
        "banana",
        "pasaraya",
        "borong",
    ),
    "Travel": (
        "airline",
        "airways",
        "flight",
        "flug",
        "boarding",
        "airport",
        "bahn",
        "train",
        "rail",
        "ticket",
        "fahrkarte",
        "baggage",
        "travel",
        "reise",
    ),
    "Lodging": (
        "hotel",
        "motel",
        "hostel",
        "inn",
        "resort",
        "lodging",
        "übernachtung",
        "room",
        "zimmer",
        "booking",
    ),
    "Fuel": (
        "petrol",
        "fuel",
        "diesel",
        "gasoline",
        "benzin",
        "super e10",
        "tankstelle",
        "pump",
        "litre",
        "liter",
        "petronas",
        "shell",
    ),
    "Office Supplies": (
        "stationery",
        "paper",
        "papier",
        "printer",
        "toner",
        "ink",
        "pen",
        "pencil",
        "stapler",
        "office",
        "büro",
        "book",
        "buch",
        "envelope",
        "folder",
        "notebook",
        "a4",
    ),
    "Software": (
        "software",
        "subscription",
        "saas",
        "license",
        "licence",
        "cloud",
        "hosting",
        "compute",
        "storage",
        "api",
        "app store",
        "aws",
        "plan",
    ),
    "Utilities": (
        "electricity",
        "strom",
        "water",
        "wasser",
        "gas bill",
        "energy",
        "utility",
        "utilities",
        "heating",
        "tnb",
    ),
    "Transport": (
        "taxi",
        "uber",
        "lyft",
        "grab",
        "parking",
        "parken",
        "toll",
        "maut",
        "bus",
        "metro",
        "subway ticket",
        "ride",
        "car rental",
        "mietwagen",
    ),
    "Telecom": (
        "mobile",
        "phone bill",
        "telecom",
        "internet",
        "broadband",
        "data plan",
        "prepaid",
        "mobilfunk",
        "dsl",
        "sim",
    ),
    "Shopping": (
        "hardware",
        "furniture",
        "möbel",
        "electronics",
        "elektronik",
        "clothing",
        "fashion",
        "shoes",
        "store",
        "trading",
        "machinery",
        "diy",
        "baumarkt",
        "tools",
        "werkzeug",
        "ipad",
        "nintendo",
        "kitchenware",
        "home",
    ),
    "Healthcare": (
        "pharmacy",
        "farmasi",
        "apotheke",
        "clinic",
        "klinik",
        "medical",
        "doctor",
        "arzt",
        "dental",
        "hospital",
        "drug",
        "drogerie",
        "health",
    ),
    "Entertainment": (
        "cinema",
        "kino",
        "movie",
        "theatre",
        "theater",
        "concert",
        "museum",
        "netflix",
        "spotify",
        "magazine",
        "zeitschrift",
        "presse",
        "game",
        "gallery",
    ),
    "Professional Services": (
        "consulting",
        "legal",
        "lawyer",
        "anwalt",
        "accounting",
        "steuerberater",
        "notary",
        "notar",
        "advisory",
        "services",
        "repair",
        "workmanship",
        "design",
        "agency",
    ),
}
# Where a keyword is found changes how much it says.
MERCHANT_WEIGHT = 3.0
ITEM_WEIGHT = 1.0
TEXT_WEIGHT = 0.5


def categorize(
    merchant: str | None,
    line_items: Iterable[LineItem] = (),
    text: str = "",
    overrides: Mapping[str, str] | None = None,
) -> tuple[str, float]:
    """Return ``(category, confidence)`` with confidence in [0, 1].

    ``overrides`` maps merchant names to categories (a workspace's corrections); a name
    matching the merchant after normalization always wins, with confidence 1.0.
    """
    if merchant and overrides:
        wanted = normalize_merchant(merchant)
        for name, category in overrides.items():
            if normalize_merchant(name) == wanted:
                return category, 1.0
    if merchant:
        brand = _brand_in(merchant)
        if brand is not None:
            return brand, 0.9
    scores: dict[str, float] = {}
    _add_keywords(scores, merchant or "", MERCHANT_WEIGHT)
    for item in line_items:
        _add_keywords(scores, item.description, ITEM_WEIGHT)
    _add_keywords(scores, text, TEXT_WEIGHT)
    if not scores:
        return "Other", 0.2
    ranked = sorted(scores.items(), key=lambda kv: kv[1], reverse=True)[:2]
    best, best_score = ranked[0]
    runner_up = ranked[1][1] if len(ranked) > 1 else 0.0
    margin = (best_score - runner_up) / best_score
    confidence = min(0.85, 0.4 + 0.3 * margin + 0.05 * min(best_score, 3.0))
    return best, round(confidence, 2)


def _brand_in(merchant: str) -> str | None:
    whole = BRANDS.get(normalize_merchant(merchant))
    if whole is not None:
        return whole.category
    for word in re.findall(r"[\w'.&-]+", merchant):
        brand = BRANDS.get(normalize_merchant(word))
        if brand is not None and len(normalize_merchant(word)) >= 3:
            return brand.category
    return None


def _add_keywords(scores: dict[str, float], text: str, weight: float) -> None:
    if not text:
        return
    lowered = text.lower()
    for category, pattern in _patterns().items():
        hits = len(pattern.findall(lowered))
        if hits:
            # Repeats add less and less: a long item list must not drown the merchant.
            scores[category] = scores.get(category, 0.0) + weight * (1 + 0.25 * (min(hits, 9) - 1))


@lru_cache(maxsize=1)
def _patterns() -> dict[str, re.Pattern[str]]:
    return {
        category: re.compile(r"(?<![a-zà-ÿ])(" + "|".join(re.escape(word) for word in words) + r")")
        for category, words in KEYWORDS.items()
    }
