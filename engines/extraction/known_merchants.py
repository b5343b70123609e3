"""Brands that are hard to read from a logo but easy to recognise, with their category.

Used twice: field parsing names the merchant when a brand appears in the header or in a
web/e-mail domain, and categorization maps the brand to its category. Keys are normalized
(lower case, letters and digits only).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Brand:
    name: str
    category: str


BRANDS: dict[str, Brand] = {
    key: Brand(name, category)
    for key, name, category in (
        ("aldi", "ALDI", "Groceries"),
        ("lidl", "Lidl", "Groceries"),
        ("rewe", "REWE", "Groceries"),
        ("edeka", "EDEKA", "Groceries"),
        ("netto", "Netto", "Groceries"),
        ("penny", "PENNY", "Groceries"),
        ("kaufland", "Kaufland", "Groceries"),
        ("marktkauf", "Marktkauf", "Groceries"),
        ("real", "real", "Groceries"),
        ("carrefour", "Carrefour", "Groceries"),
        ("tesco", "Tesco", "Groceries"),
        ("walmart", "Walmart", "Groceries"),
        ("wholefoods", "Whole Foods", "Groceries"),
        ("99speedmart", "99 Speed Mart", "Groceries"),
        ("dm", "dm", "Healthcare"),
        ("rossmann", "Rossmann", "Healthcare"),
        ("ikea", "IKEA", "Shopping"),
        ("toom", "toom", "Shopping"),
        ("obi", "OBI", "Shopping"),
        ("hornbach", "Hornbach", "Shopping"),
        ("mrdiy", "MR. D.I.Y.", "Shopping"),
        ("mediamarkt", "MediaMarkt", "Shopping"),
        ("saturn", "Saturn", "Shopping"),
        ("amazon", "Amazon", "Shopping"),
        ("flipkart", "Flipkart", "Shopping"),
        ("coolblue", "Coolblue", "Shopping"),
        ("amazonwebservices", "Amazon Web Services", "Software"),
        ("aws", "Amazon Web Services", "Software"),
        ("github", "GitHub", "Software"),
        ("google", "Google", "Software"),
        ("microsoft", "Microsoft", "Software"),
        ("adobe", "Adobe", "Software"),
        ("slack", "Slack", "Software"),
        ("atlassian", "Atlassian", "Software"),
        ("starbucks", "Starbucks", "Meals"),
        ("mcdonalds", "McDonald's", "Meals"),
        ("burgerking", "Burger King", "Meals"),
        ("kfc", "KFC", "Meals"),
        ("subway", "Subway", "Meals"),
        ("uber", "Uber", "Transport"),
        ("lyft", "Lyft", "Transport"),
        ("grab", "Grab", "Transport"),
        ("shell", "Shell", "Fuel"),
        ("aral", "Aral", "Fuel"),
        ("esso", "Esso", "Fuel"),
        ("bhpetrol", "BHPetrol", "Fuel"),
        ("petronas", "Petronas", "Fuel"),
        ("airbnb", "Airbnb", "Lodging"),
        ("marriott", "Marriott", "Lodging"),
        ("hilton", "Hilton", "Lodging"),
        ("lufthansa", "Lufthansa", "Travel"),
        ("deutschebahn", "Deutsche Bahn", "Travel"),
        ("vodafone", "Vodafone", "Telecom"),
        ("telekom", "Telekom", "Telecom"),
        ("staples", "Staples", "Office Supplies"),
    )
}


def normalize_merchant(name: str) -> str:
    """Lower case, letters and digits only: 'MR. D.I.Y. (M) SDN BHD' → 'mrdiymsdnbhd'."""
    return "".join(ch for ch in name.lower() if ch.isalnum())
