"""Brands people buy from, recognised where a document's text names them.

The list (``data/brands.tsv.gz``, about 10,000 brands) is built from OpenStreetMap's
name-suggestion-index by ``scripts/build_brands.py``; each brand has the kind of place it
is (supermarket, fuel station, pharmacy, …) mapped to a fincap category, and the countries
it operates in.

A brand is only evidence where the text supports it: ``find_brands`` reports the brand
names that occur as whole words in a piece of text together with how much of the text they
cover, and ``brand_for_domain`` the brand behind a web or e-mail domain. Field parsing
decides how much to trust a match (a brand that *is* a header line says more than one word
of a longer line, and nothing outside the header counts except a domain).
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

DATA_FILE = Path(__file__).with_name("data") / "brands.tsv.gz"
MAX_WORDS = 5
# Words every receipt prints, and everyday words of business names: a brand named only
# like one of them ("Total", "International", "Express") is no evidence on its own.
RECEIPT_WORDS = frozenset(
    """
    total subtotal sum summe cash change card visa master credit debit tax vat gst date time
    bill invoice receipt rechnung facture factura factuur fattura thank thanks danke merci
    welcome willkommen bon beleg kasse cashier table qty item items price amount betrag
    discount sale sales shop store market mart super markt center centre service services
    express food coffee cafe restaurant bar pharmacy apotheke hotel bank post station
    parking taxi tel fax phone email www http com de net org netto brutto mwst ust euro eur
    usd rm online company co ltd gmbh sdn bhd inc llc international national global general
    group trading enterprise enterprises holdings industries solutions systems central city
    direct plus best first star royal golden new one family home house style design world
    """.split()  # noqa: SIM905 (a paragraph of words reads better than 130 quoted strings)
)


@dataclass(frozen=True)
class Brand:
    name: str
    category: str
    kind: str  # OpenStreetMap tag, e.g. "shop=supermarket"
    countries: frozenset[str]  # ISO codes in lower case; "001" means worldwide

    def operates_in(self, country_code: str | None) -> bool | None:
        """True/False when the brand's countries are known, None when they are not."""
        if country_code is None or not self.countries:
            return None
        return "001" in self.countries or country_code.lower() in self.countries


@dataclass(frozen=True)
class BrandMatch:
    brand: Brand
    start: int  # character span of the match in the text searched
    end: int
    coverage: float  # share of the text's letters the brand name accounts for


class BrandIndex:
    """Brand names by their normalized word sequence."""

    def __init__(self, brands: list[tuple[Brand, list[str]]]) -> None:
        self._by_words: dict[tuple[str, ...], Brand] = {}
        self._by_compact: dict[str, Brand] = {}
        for brand, names in brands:
            for name in names:
                words = tuple(normalize(name).split())
                if not words or len(words) > MAX_WORDS:
                    continue
                if len(words) == 1 and (words[0] in RECEIPT_WORDS or len(words[0]) < 2):
                    continue
                self._by_words.setdefault(words, brand)
                compact = "".join(words)
                if len(compact) >= 4:
                    self._by_compact.setdefault(compact, brand)

    def __len__(self) -> int:
        return len({id(brand) for brand in self._by_words.values()})

    def find_brands(self, text: str) -> list[BrandMatch]:
        """Brands whose name occurs as whole words in ``text``, longest first."""
        words = [(m.start(), m.end(), normalize(m.group())) for m in _WORD.finditer(text)]
        words = [(s, e, w) for s, e, w in words if w]
        letters = sum(ch.isalpha() for ch in text) or 1
        matches: list[BrandMatch] = []
        taken: set[int] = set()
        for size in range(min(MAX_WORDS, len(words)), 0, -1):
            for index in range(len(words) - size + 1):
                if any(i in taken for i in range(index, index + size)):
                    continue
                window = words[index : index + size]
                key = tuple(" ".join(w for _, _, w in window).split())
                brand = self._by_words.get(key)
                if brand is None and size > 1:
                    # "A.B.C." and "ABC", "Leroy Merlin" and "LeroyMerlin".
                    brand = self._by_compact.get("".join(key))
                if brand is None:
                    continue
                start, end = window[0][0], window[-1][1]
                covered = sum(ch.isalpha() for ch in text[start:end])
                matches.append(BrandMatch(brand, start, end, min(1.0, covered / letters)))
                taken.update(range(index, index + size))
        return sorted(matches, key=lambda match: -(match.end - match.start))

    def brand_for_domain(self, label: str) -> Brand | None:
        """The brand a domain label names ("kaufland" in kaufland.de, "obi" in obi.de)."""
        compact = "".join(normalize(label).split())
        if len(compact) < 3 or compact in RECEIPT_WORDS:
            return None
        return self._by_compact.get(compact) or self._by_words.get((compact,))


_WORD = re.compile(r"[^\W_]+(?:[.'’&+-][^\W_]+)*\.?")


def normalize(text: str) -> str:
    """Lower case, accents removed, dots inside words dropped ("A.B.C. Mart" → "abc mart")."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    plain = re.sub(r"(?<=\w)[.'’](?=\w)|[.'’]$", "", plain)
    plain = plain.replace("&", " & ").replace("+", " + ")
    return " ".join(re.sub(r"[^\w&+]+", " ", plain).split())


@lru_cache(maxsize=1)
def brand_index(path: Path = DATA_FILE) -> BrandIndex:
    """The brand list, loaded once per process (about 50 ms)."""
    brands: list[tuple[Brand, list[str]]] = []
    with gzip.open(path, "rt", encoding="utf-8") as rows:
        for row in rows:
            name, category, kind, countries, others = row.rstrip("\n").split("\t")
            brand = Brand(name, category, kind, frozenset(filter(None, countries.split(","))))
            first = normalize(name).split()[:1]
            # Other names count only when they contain the brand's own first word: the
            # index also lists mappers' names for co-located businesses ("Coles" for a
            # Shell station), which would misname a document.
            aliases = [
                other
                for other in filter(None, others.split("|"))
                if first and first[0] in normalize(other).split()
            ]
            brands.append((brand, [name, *aliases]))
    return BrandIndex(brands)
