"""``categorize``: a category of the default taxonomy for a document, with a confidence.

Evidence, strongest first: the workspace's own corrections (``overrides``) for the same
normalized merchant; the known brand the merchant is (OpenStreetMap's kind of place, see
``brands``); words of the trade in the merchant's name, the line items and the text, in
the languages fincap reads. Keyword evidence is summed per category and turned into a
confidence that grows with the margin over the runner-up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from .fields.company_names import BRAND_COVERAGE, brand_in_name, brand_leading_name
from .fields.field_types import LineItem

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

# Words of each trade in English, German, French, Spanish, Dutch, Italian and Malay. A word
# matches at the start of a word, so "restaurant" also finds "restaurants"; words under five
# letters match whole ("bus" is not "business", "pen" not "pending").
# fmt: off
KEYWORDS: dict[str, tuple[str, ...]] = {
    "Meals": (
        "restaurant", "restoran", "ristorante", "restaurante", "trattoria", "pizzeria", "café",
        "cafe", "coffee", "kaffee", "koffie", "caffè", "cafetería", "bistro", "brasserie",
        "gasthaus", "gaststätte", "imbiss", "snack", "pizza", "burger", "sushi", "kebab", "noodle",
        "food court", "catering", "lunch", "dinner", "breakfast", "frühstück", "mittagessen",
        "déjeuner", "dîner", "almuerzo", "cena", "pranzo", "dine in", "take away", "takeaway",
        "latte", "cappuccino", "espresso", "beer", "bier", "wine", "wein", "tip", "trinkgeld",
        "pourboire", "propina", "mancia", "fooi",
    ),
    "Groceries": (
        "supermarket", "supermarkt", "supermarché", "supermercado", "supermercato", "grocery",
        "groceries", "grocer", "hypermarket", "minimarket", "lebensmittel", "épicerie",
        "alimentation", "alimentari", "levensmiddelen", "milk", "milch", "lait", "leche", "melk",
        "bread", "brot", "pain", "pan", "brood", "pane", "eggs", "eier", "oeufs", "huevos",
        "eieren", "uova", "cheese", "käse", "fromage", "queso", "kaas", "formaggio", "butter",
        "joghurt", "yogurt", "yaourt", "fruit", "obst", "frutas", "vegetable", "gemüse", "légumes",
        "verduras", "groente", "verdura", "banana", "apple", "apfel", "tomato", "tomate", "rice",
        "reis", "chicken", "hähnchen",
    ),
    "Travel": (
        "airline", "airways", "airlines", "flight", "flug", "vol ", "vuelo", "vlucht", "volo",
        "boarding", "airport", "flughafen", "aéroport", "aeropuerto", "luchthaven", "aeroporto",
        "railway", "rail", "train", "zug", "bahn", "tren", "trein", "treno", "baggage", "gepäck",
        "bagage", "equipaje", "bagaglio", "travel agency", "reisebüro", "agence de voyage",
        "agencia de viajes", "reisbureau", "agenzia viaggi",
    ),
    "Lodging": (
        "hotel", "motel", "hostel", "inn", "resort", "lodging", "guesthouse", "pension",
        "übernachtung", "nuitée", "hébergement", "alojamiento", "alloggio", "overnachting",
        "room rate", "zimmer", "chambre", "habitación", "kamer", "camera", "city tax", "kurtaxe",
        "taxe de séjour", "tasa turística", "toeristenbelasting", "tassa di soggiorno",
    ),
    "Fuel": (
        "petrol", "fuel", "diesel", "gasoline", "benzin", "super e10", "super e5", "sp95", "sp98",
        "gazole", "gasóleo", "gasolina", "benzine", "benzina", "gasolio", "tankstelle",
        "station-service", "gasolinera", "tankstation", "distributore", "pump", "zapfsäule",
        "litre", "liter", "litro", "adblue", "lpg",
    ),
    "Office Supplies": (
        "stationery", "schreibwaren", "papeterie", "papelería", "kantoorartikelen", "cartoleria",
        "bürobedarf", "fournitures de bureau", "material de oficina", "paper", "papier", "papel",
        "carta a4", "printer", "drucker", "imprimante", "impresora", "stampante", "toner", "ink",
        "tinte", "encre", "tinta", "inkt", "inchiostro", "pen", "pencil", "bleistift", "stylo",
        "bolígrafo", "penna", "stapler", "envelope", "umschlag", "enveloppe", "sobre", "envelop",
        "busta", "folder", "ordner", "classeur", "carpeta", "notebook", "notizbuch", "cahier",
        "cuaderno", "quaderno", "bookshop", "bookstore", "buchhandlung", "librairie", "librería",
        "boekhandel", "libreria", "a4",
    ),
    "Software": (
        "software", "subscription", "abonnement", "suscripción", "abbonamento", "saas", "license",
        "licence", "lizenz", "licencia", "licentie", "licenza", "cloud", "hosting", "webhosting",
        "hébergement web", "alojamiento web", "domain", "domäne", "domaine", "dominio", "compute",
        "storage", "api", "app store",
    ),
    "Utilities": (
        "electricity", "strom", "électricité", "electricidad", "elektriciteit", "elettricità",
        "water", "wasser", "eau", "agua", "acqua", "gas bill", "erdgas", "energy", "energie",
        "énergie", "energía", "energia", "utility", "utilities", "heating", "heizung", "chauffage",
        "calefacción", "verwarming", "riscaldamento", "kwh",
    ),
    "Transport": (
        "taxi", "cab fare", "ride", "parking", "parken", "parkhaus", "stationnement",
        "aparcamiento", "parkeren", "parcheggio", "toll", "maut", "péage", "peaje", "pedaggio",
        "bus", "metro", "tram", "u-bahn", "car rental", "mietwagen", "location de voiture",
        "alquiler de coche", "autoverhuur", "noleggio auto", "car wash", "autowäsche",
    ),
    "Telecom": (
        "mobile", "mobilfunk", "handy", "phone bill", "telefon", "téléphone", "teléfono",
        "telefoon", "telefono", "telecom", "internet", "broadband", "breitband", "dsl", "fibre",
        "glasfaser", "data plan", "prepaid", "sim card", "roaming",
    ),
    "Shopping": (
        "hardware", "baumarkt", "bricolage", "ferretería", "bouwmarkt", "ferramenta", "furniture",
        "möbel", "meubles", "muebles", "meubels", "mobili", "electronics", "elektronik",
        "électronique", "electrónica", "elettronica", "clothing", "kleidung", "vêtements", "ropa",
        "kleding", "abbigliamento", "fashion", "shoes", "schuhe", "chaussures", "zapatos",
        "schoenen", "scarpe", "department store", "kaufhaus", "toys", "spielwaren", "jouets",
        "juguetes", "speelgoed", "giocattoli", "garden", "garten", "jardin", "jardín", "tuin",
        "giardino", "tools", "werkzeug", "outils", "herramientas", "gereedschap", "attrezzi",
        "household", "haushalt",
    ),
    "Healthcare": (
        "pharmacy", "pharmacie", "farmacia", "apotheek", "apotheke", "farmasi", "drugstore",
        "drogerie", "droguerie", "drogisterij", "chemist", "clinic", "klinik", "clinique",
        "clínica", "kliniek", "clinica", "klinik", "medical", "medizinisch", "médical", "médico",
        "medisch", "medico", "doctor", "arzt", "médecin", "dentist", "zahnarzt", "dentiste",
        "dentista", "tandarts", "hospital", "krankenhaus", "hôpital", "ziekenhuis", "ospedale",
        "optician", "optiker", "opticien", "óptica", "opticien", "ottico", "prescription",
        "rezept", "ordonnance", "receta", "recept", "ricetta",
    ),
    "Entertainment": (
        "cinema", "kino", "cinéma", "cine", "bioscoop", "movie", "film", "theatre", "theater",
        "théâtre", "teatro", "concert", "konzert", "concierto", "concerto", "museum", "musée",
        "museo", "ticket office", "streaming", "netflix", "spotify", "magazine", "zeitschrift",
        "revista", "tijdschrift", "rivista", "game", "spiel", "jeu", "juego", "gioco", "gallery",
        "galerie", "fitness", "gym",
    ),
    "Professional Services": (
        "consulting", "beratung", "conseil", "consultoría", "advies", "consulenza", "legal",
        "lawyer", "rechtsanwalt", "anwalt", "avocat", "abogado", "advocaat", "avvocato",
        "accounting", "buchhaltung", "comptabilité", "contabilidad", "boekhouding", "contabilità",
        "steuerberater", "expert-comptable", "notary", "notar", "notaire", "notario", "notaris",
        "notaio", "advisory", "repair", "reparatur", "réparation", "reparación", "reparatie",
        "riparazione", "design", "agency", "agentur", "agence", "agencia", "bureau", "agenzia",
        "translation", "übersetzung", "traduction", "traducción", "vertaling", "traduzione",
        "cleaning", "reinigung", "nettoyage", "limpieza", "schoonmaak", "pulizia", "installation",
        "montage", "instalación", "installatie", "installazione", "training", "schulung",
        "formation", "formación", "formazione",
    ),
}
# fmt: on
# Where a keyword is found changes how much it says.
MERCHANT_WEIGHT = 3.0
ITEM_WEIGHT = 1.0
TEXT_WEIGHT = 0.5


def categorize(
    merchant: str | None,
    line_items: Iterable[LineItem] = (),
    text: str = "",
    overrides: Mapping[str, str] | None = None,
    brand_category: str | None = None,
) -> tuple[str, float]:
    """Return ``(category, confidence)`` with confidence in [0, 1].

    ``overrides`` maps merchant names to categories (a workspace's corrections); a name
    matching the merchant after normalization always wins, with confidence 1.0.
    ``brand_category`` is the category of the brand field parsing recognised the
    merchant as; without it, the merchant's name is looked up in the brand list.
    """
    if merchant and overrides:
        wanted = normalize_merchant(merchant)
        for name, category in overrides.items():
            if normalize_merchant(name) == wanted:
                return category, 1.0
    known = brand_category or (_brand_category(merchant) if merchant else None)
    if known is not None:
        return known, 0.9
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


def normalize_merchant(name: str) -> str:
    """Lower case, letters and digits only: 'A.B.C. Mart (M) Sdn Bhd' → 'abcmartmsdnbhd'."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _brand_category(merchant: str) -> str | None:
    found = brand_in_name(merchant)
    if found is not None and found[1] >= BRAND_COVERAGE and len(found[0].name) >= 3:
        return found[0].category
    leading = brand_leading_name(merchant)
    return leading.category if leading is not None else None


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
    def word(keyword: str) -> str:
        return re.escape(keyword) + (r"(?![a-zà-ÿ])" if len(keyword) < 5 else "")

    return {
        category: re.compile(r"(?<![a-zà-ÿ])(" + "|".join(word(w) for w in words) + r")")
        for category, words in KEYWORDS.items()
    }
