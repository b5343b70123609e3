"""Company names: their legal forms, the registration numbers printed beside them, and the
known brand a name is (or starts with).

Shared by the merchant finder (a segment with a legal form or a brand is likely the issuer)
and categorization (a brand's kind of place names the category).
"""

from __future__ import annotations

import re

from ..brands import Brand, BrandMatch, brand_index

# A brand covering at least this share of a name's core is what the name is (the brand list
# holds everyday words too: "International" must not make "Acme International" a brand).
BRAND_COVERAGE = 0.75
# A brand at the start of a name needs less: what follows is a branch, city or country.
LEADING_BRAND_COVERAGE = 0.25
# Forms only a registered company name carries.
STRONG_LEGAL_FORM = re.compile(
    r"\b(?:sdn\.?\s*bhd\.?|s/b|bhd|berhad|gmbh|mbh|ag|kg|ohg|e\.\s?k\.|ug|ltd\.?|limited|llc|"
    r"llp|plc|inc\.?|corp\.?|pte|pvt|plt|pty|b\.\s?v\.?|n\.\s?v\.?|bv|nv|vof|"
    # The longer form first: "S.a.s." is not "S.a" and a stray "s.".
    r"s\.\s?a\.\s?s\.?|s\.\s?a\.?|s\.\s?l\.\s?u\.?|sas|sarl|s\.\s?r\.\s?l\.?|srl|s\.\s?l\.?|s\.\s?p\.\s?a\.?|spa|snc|sasu|eurl|"
    r"s\.\s?coop|gbr|e\.\s?v\.|oy|ab|a/s|as)(?![\w])",
    re.I,
)
# Company registration numbers printed beside a name: "(123456-X)", "654321-W",
# "(AB0012345-D)", "(LLP0001234-LGN)". They are not part of the name.
REGISTRATION = re.compile(r"\(?\b(?:[A-Z]{0,4}\d{5,}-?[A-Z]{0,3}|\d{3,}-[A-Z])\b\)?", re.I)


def brand_in_name(name: str) -> tuple[Brand, float] | None:
    """The brand a company name mentions and the share of the name's core it covers
    (legal form, bracketed parts and registration numbers left out)."""
    found = _brand_match(name)
    return (found.brand, found.coverage) if found is not None else None


def brand_leading_name(name: str) -> Brand | None:
    """The brand a company name starts with, when it is a good part of the name:
    "Hornbach Baumarkt Filiale Nord", "Fresco Deutschland GmbH & Co. KG" (a branch or a
    country after it)."""
    found = _brand_match(name)
    if found is None or len(found.brand.name) < 4:
        return None
    core = name_core(name)
    leading = not core[: found.start].strip(" .,-&")
    return found.brand if leading and found.coverage >= LEADING_BRAND_COVERAGE else None


def name_core(name: str) -> str:
    """The name without bracketed parts, "Co.", legal form and registration numbers."""
    core = re.sub(r"\(.*?\)|\bco\b\.?|\bcompany\b", " ", name, flags=re.I)
    return REGISTRATION.sub(" ", STRONG_LEGAL_FORM.sub(" ", core))


def _brand_match(name: str) -> BrandMatch | None:
    matches = brand_index().find_brands(name_core(name))
    return max(matches, key=lambda match: match.coverage) if matches else None
