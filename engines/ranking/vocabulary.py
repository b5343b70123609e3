"""What a search's words name beyond their letters: a kind of document, or a category.

People search the way they talk: "hotel invoice", "Hotel Rechnung", "taxi", "Tankstelle". A
receipt rarely says "hotel" (its category says Lodging) and never says "invoice" in the words
of its merchant; what it *is* is stored apart, in ``docType`` and ``category``. This module
turns a query into terms, each with the **concepts** it names:

* ``type:<docType>`` for words that name a kind of document in the languages fincap reads
  ("invoice", "Rechnung", "facture", "receipt", "Quittung", "refund", "Gutschrift", …). Such a
  word matches the document's kind, not its text (a summary that says "Invoice from …" is not
  more of an invoice than one that does not).
* ``category:<category>`` for words of a trade: the categorizer's own multilingual keywords
  (``engines.extraction.categorization.KEYWORDS``, what a document is categorized by), plus the
  words people use for a kind of business that a document does not print ("gas station",
  "coffee shop", "stesen minyak", …), each mapped to a category of the default taxonomy.

A word is looked up as typed, then without a plural or inflection ending ("invoices",
"Rechnungen"); a compound that is not a word itself is split where both parts are words of the
vocabulary or one is and the other is long ("Hotelrechnung" → hotel + rechnung, "Tankbeleg" →
tank + beleg). Documents carry the same concepts (``document_concepts``), from their stored
``category`` and ``docType``; ``SearchIndex`` matches the two.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from engines.extraction.categorization import KEYWORDS, TAXONOMY
from engines.text import tokenize

# Words naming a kind of document (``domain.doc_types.DocType``), singular and plural, in the
# languages of the categorizer (English, German, French, Spanish, Dutch, Italian, Malay).
# fmt: off
DOC_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "invoice": (
        "invoice", "invoices", "bill", "bills", "rechnung", "rechnungen", "facture", "factures",
        "factura", "facturas", "fattura", "fatture", "factuur", "facturen", "invois", "faktur",
    ),
    "receipt": (
        "receipt", "receipts", "quittung", "quittungen", "beleg", "belege", "kassenbon",
        "kassenzettel", "bon", "recu", "ticket de caisse", "recibo", "recibos", "ricevuta",
        "scontrino", "kassabon", "bonnetje", "resit", "resi", "kwitansi",
    ),
    "refund": (
        "refund", "refunds", "erstattung", "ruckerstattung", "remboursement", "reembolso",
        "rimborso", "terugbetaling", "bayaran balik",
    ),
    "credit-note": (
        "credit note", "credit notes", "gutschrift", "gutschriften", "avoir", "nota de credito",
        "nota di credito", "creditnota",
    ),
}

# Words people search a kind of business by that the categorizer's keywords (words printed on
# documents) do not hold: what a person calls the place, not what its receipt says.
QUERY_WORDS: dict[str, tuple[str, ...]] = {
    "Meals": (
        "cafeteria", "canteen", "kantine", "food", "essen",
        "repas", "comida", "eten", "cibo", "makan", "kedai makan", "kedai kopi", "kopi",
        "mamak", "meal", "meals", "drinks",
    ),
    "Groceries": (
        "grocery store", "lebensmittelgeschaft", "kedai runcit", "runcit", "pasar raya",
        "pasaraya", "barang dapur",
    ),
    "Travel": (
        "plane", "fahrkarte", "bahnticket",
        "billet de train", "billete", "kereta api", "penerbangan", "tiket kapal terbang",
    ),
    "Lodging": (
        "accommodation", "unterkunft", "hebergement", "alojamiento", "airbnb",
        "penginapan", "overnight stay",
    ),
    "Fuel": (
        "gas station", "petrol station", "filling station", "service station", "tank", "tanken",
        "essence", "carburant", "stesen minyak", "minyak", "petrol pump",
    ),
    "Transport": (
        "cab", "rideshare", "ride hailing", "teksi", "parkir", "tollgate",
    ),
    "Office Supplies": (
        "office supplies", "kedai buku", "buku", "alat tulis", "buroartikel",
    ),
    "Healthcare": (
        "ubat", "klinik", "medicine", "medikamente", "medicaments",
    ),
    "Telecom": (
        "telefon bimbit", "handphone",
    ),
    "Utilities": (
        "bil elektrik", "elektrik", "power bill",
    ),
}

# Categorizer keywords that name a thing bought rather than the trade: "latte" or "milk" says a
# lot about a receipt's category but a person who types it wants lattes, not every meal. They
# name their category only when no document's text has the word (``QueryTerm.fallback``).
ITEM_WORDS: frozenset[str] = frozenset({
    # Meals
    "snack", "pizza", "burger", "sushi", "kebab", "noodle", "lunch", "dinner", "breakfast",
    "fruhstuck", "mittagessen", "dejeuner", "diner", "almuerzo", "cena", "pranzo", "latte",
    "cappuccino", "espresso", "beer", "bier", "wine", "wein", "tip", "trinkgeld", "pourboire",
    "propina", "mancia", "fooi",
    # Groceries
    "milk", "milch", "lait", "leche", "melk", "bread", "brot", "pain", "pan", "brood", "pane",
    "eggs", "eier", "oeufs", "huevos", "eieren", "uova", "cheese", "kase", "fromage", "queso",
    "kaas", "formaggio", "butter", "joghurt", "yogurt", "yaourt", "fruit", "obst", "frutas",
    "vegetable", "gemuse", "legumes", "verduras", "groente", "verdura", "banana", "apple",
    "apfel", "tomato", "tomate", "rice", "reis", "chicken", "hahnchen",
    # Lodging
    "zimmer", "chambre", "habitacion", "kamer", "camera", "kurtaxe",
    # Fuel
    "diesel", "gasoline", "benzin", "sp95", "sp98", "gazole", "gasoleo", "gasolina", "benzine",
    "benzina", "gasolio", "pump", "zapfsaule", "litre", "liter", "litro", "adblue", "lpg",
    # Office Supplies
    "paper", "papier", "papel", "printer", "drucker", "imprimante", "impresora", "stampante",
    "toner", "ink", "tinte", "encre", "tinta", "inkt", "inchiostro", "pen", "pencil",
    "bleistift", "stylo", "boligrafo", "penna", "stapler", "envelope", "umschlag", "enveloppe",
    "sobre", "envelop", "busta", "folder", "ordner", "classeur", "carpeta", "notebook",
    "notizbuch", "cahier", "cuaderno", "quaderno", "a4",
    # Software
    "domain", "domane", "domaine", "dominio", "compute", "storage", "api",
    # Utilities
    "water", "wasser", "eau", "agua", "acqua", "kwh",
    # Shopping
    "shoes", "schuhe", "chaussures", "zapatos", "schoenen", "scarpe", "toys", "spielwaren",
    "jouets", "juguetes", "speelgoed", "giocattoli", "tools", "werkzeug", "outils",
    "herramientas", "gereedschap", "attrezzi",
    # Healthcare, Entertainment
    "prescription", "rezept", "ordonnance", "receta", "recept", "ricetta", "magazine",
    "zeitschrift", "revista", "tijdschrift", "rivista", "game", "spiel", "jeu", "juego", "gioco",
    "netflix", "spotify",
})
# fmt: on

# Categories wider than the words that lead to them: "furniture", "hardware" and "electronics"
# are all Shopping, so the category would rank a hardware store first for "furniture store".
# Their words stay words; only the category's own name names it.
BROAD = frozenset({"Shopping", "Professional Services", "Entertainment"})

# Endings a word may carry beyond its vocabulary form (plurals and inflections).
ENDINGS = ("es", "en", "s", "n", "e")
# A compound is split only where both parts have at least this many letters.
MIN_PART = 3
# A compound with one part outside the vocabulary is read by its known part of this many
# letters or more ("zug" in "zugticket" is too short to be trusted alone).
MIN_KNOWN = 4
# Parts of a German compound may be joined by this letter ("Übernachtungsbeleg").
LINKING = "s"
# The longest phrase the vocabulary holds, in words.
MAX_PHRASE = 3

TYPE = "type:"
CATEGORY = "category:"


@dataclass(frozen=True)
class QueryTerm:
    """A query word and the concepts it names. ``kind_only``: it names a kind of document and
    nothing else, so it matches the document's kind rather than its text; ``fallback``: it
    names a thing bought (``ITEM_WORDS``), so its concepts count only when no document's text
    has the word."""

    token: str
    concepts: frozenset[str]
    kind_only: bool = False
    fallback: bool = False


def category_concept(category: str) -> str:
    return CATEGORY + " ".join(tokenize(category))


def type_concept(doc_type: str) -> str:
    return TYPE + doc_type


def document_concepts(category: str | None, doc_type: str | None) -> tuple[str | None, str | None]:
    """The concepts a stored document carries: its category's and its kind's (None: none)."""
    return (
        category_concept(category) if category and tokenize(category) else None,
        type_concept(doc_type) if doc_type else None,
    )


def understand(query: str) -> list[QueryTerm]:
    """The query's distinct words, each with the concepts it (or a phrase it is part of)
    names, in order; a compound the vocabulary splits is followed by its known parts, each a
    term of its own (so "Hotelrechnung" weighs a hotel's invoice above any invoice)."""
    tokens = list(dict.fromkeys(tokenize(query)))
    words, phrases = _vocabulary()
    named: list[set[str]] = [set() for _ in tokens]
    in_phrase = [False] * len(tokens)
    for start in range(len(tokens)):
        for size in range(min(MAX_PHRASE, len(tokens) - start), 1, -1):
            phrase_concepts = phrases.get(" ".join(tokens[start : start + size]))
            if phrase_concepts:
                for i in range(start, start + size):
                    named[i] |= phrase_concepts
                    in_phrase[i] = True
    terms: list[QueryTerm] = []
    for token, concepts, phrase in zip(tokens, named, in_phrase, strict=True):
        concepts |= _lookup(token, words)
        parts = [] if concepts else _compound(token, words)
        terms.append(_term(token, concepts, phrase))
        terms.extend(_term(part, found) for part, found in parts if part not in tokens)
    return terms


def _term(token: str, concepts: Iterable[str], phrase: bool = False) -> QueryTerm:
    named = frozenset(concepts)
    kind_only = bool(named) and all(c.startswith(TYPE) for c in named)
    return QueryTerm(token, named, kind_only, fallback=not phrase and token in ITEM_WORDS)


def _lookup(word: str, words: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """The concepts of ``word`` as written, else without one inflection ending."""
    found = words.get(word)
    if found:
        return found
    for ending in ENDINGS:
        stem = word[: -len(ending)]
        if word.endswith(ending) and len(stem) >= MIN_PART + 1 and stem in words:
            return words[stem]
    return frozenset()


def _compound(token: str, words: Mapping[str, frozenset[str]]) -> list[tuple[str, frozenset[str]]]:
    """The known parts of a compound and their concepts ("hotelrechnung" → hotel, rechnung):
    a split where both parts are words of the vocabulary, else where one part of at least
    ``MIN_KNOWN`` letters is (the longest such part wins; "bahnfahrt" → bahn)."""
    best: tuple[int, list[tuple[str, frozenset[str]]]] = (0, [])
    for cut in range(MIN_PART, len(token) - MIN_PART + 1):
        left, right = token[:cut], token[cut:]
        left_found = _part(left, words)
        if not left_found and left.endswith(LINKING) and cut > MIN_PART + 1:
            left, left_found = left[:-1], _part(left[:-1], words)
        right_found = _part(right, words)
        known = [
            (part, found) for part, found in ((left, left_found), (right, right_found)) if found
        ]
        if len(known) == 2:
            score = len(token) + 1  # both parts known: better than any one part
        elif known and len(known[0][0]) >= MIN_KNOWN:
            score = len(known[0][0])
        else:
            continue
        if score > best[0]:
            best = (score, known)
    return best[1]


def _part(word: str, words: Mapping[str, frozenset[str]]) -> frozenset[str]:
    """A compound's part names what the word does, unless it names a thing bought: those are
    short and common inside unrelated words ("pain" in "painkillers")."""
    return frozenset() if word in ITEM_WORDS else _lookup(word, words)


@lru_cache(maxsize=1)
def _vocabulary() -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Single words and phrases (folded, space-joined) → the concepts they name."""
    entries: dict[str, set[str]] = {}

    def add(phrases: Iterable[str], concept: str) -> None:
        for phrase in phrases:
            key = " ".join(tokenize(phrase))
            if key:
                entries.setdefault(key, set()).add(concept)

    for category in TAXONOMY:
        add([category], category_concept(category))
    for category, keywords in (*KEYWORDS.items(), *QUERY_WORDS.items()):
        if category not in BROAD:
            add(keywords, category_concept(category))
    for doc_type, kind_words in DOC_KIND_WORDS.items():
        add(kind_words, type_concept(doc_type))
    words = {key: frozenset(v) for key, v in entries.items() if " " not in key}
    phrases = {key: frozenset(v) for key, v in entries.items() if " " in key}
    return words, phrases
