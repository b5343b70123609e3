"""Who issued the document.

Candidates are the text segments of the first page's top block (on a two-column invoice,
the issuer's block and the buyer's are separate segments), company lines of the legal
footer, the name after a seller or account-holder label, and brands named in a web or
e-mail domain. Features describe each: text height and rank from the top, a legal form
("Sdn Bhd", "GmbH", "B.V.", "S.L."), registration or VAT numbers next to it, a known brand
that the segment is, address or contact words, title words ("Invoice"), and whether it sits
in the buyer's block (below "Bill to", "Rechnungsadresse", "Factura a", "Adresse de
facturation", …), where the issuer never is. ``scoring`` weighs them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass

from ..brands import Brand, brand_index
from ..layout import TextLine
from .company_names import (
    BRAND_COVERAGE,
    REGISTRATION,
    STRONG_LEGAL_FORM,
    brand_in_name,
)
from .countries import COUNTRIES
from .labels import BUYER_LABEL, INVOICE_NUMBER_LABEL, ISSUER_MARKER
from .places import place_index
from .scoring import Candidate
from .view import DocView, Segment

HEADER_ROWS = 14
# The legal footer: the last part of the last page.
FOOTER_SHARE = 0.8
HEADER_SHARE = 0.45
BUSINESS_WORD = re.compile(
    r"\b(?:enterprise|trading|restaurant|restoran|company|co\.|store|shop|kedai|mart|"
    r"hardware|stationery|bakery|b[äa]ckerei|caf[ée]|bistro|hotel|pharmacy|farmasi|apotheke|"
    r"supermarket|markt|market|boutique|services?|solutions|consulting|group|gruppe|"
    r"international|industries|holdings?|perniagaan|syarikat|handel|vertrieb|"
    r"soci[ée]t[ée]|empresa|bedrijf|ditta|studio|agency|agentur)\b",
    re.I,
)
REGISTRATION_ROW = re.compile(
    r"\(?\b[A-Z]{0,4}\d{5,}-?[A-Z]{0,3}\b\)?|co\.?\s*reg|company\s*(?:no|reg)|gst\s*(?:id|reg|no)|"
    r"vat|ust|steuer|siret|siren|rcs|kvk|btw|cif|nif|p\.?\s*iva|partita|hrb|tax\s*id|\bssm\b",
    re.I,
)
ADDRESS = re.compile(
    r"\b(?:jalan|jln|taman|lorong|persiaran|kawasan|bandar|street|st\.|road|rd\.?|avenue|"
    r"ave\.?|lane|drive|blvd|boulevard|suite|floor|unit|p\.?\s*o\.?\s*box|"
    r"stra(?:ß|ss)e|str\.|weg|platz|allee|gasse|ring|damm|ufer|chaussee|"
    r"rue|chemin|place|all[ée]e|cedex|calle|c/|avda\.?|avenida|plaza|paseo|carrer|"
    r"straat|laan|plein|gracht|kade|dijk|via|viale|piazza|corso|vicolo|no\.\s*\d|lot\s*\d)\b"
    r"|\b\d{4,5}\s+[A-ZÄÖÜ][a-zäöüß]+|\b\d{4}\s?[A-Z]{2}\b|\b\d{5}\b",
    re.I,
)
CONTACT = re.compile(
    r"\b(?:tel|telp|fax|phone|mobile|hp|handy|t[ée]l[ée]?phone|tel[ée]fono|telefoon|telefono|"
    r"e-?mail|website)\b|@|www\.|https?://|\.(?:com|de|fr|es|nl|it|my|net|org)\b|\+\d{2}",
    re.I,
)
TITLE = re.compile(
    r"\b(?:tax\s*)?(?:invoice|receipt|rechnung|quittung|beleg|kassenbon|bon|facture|factura|"
    r"factuur|fattura|ricevuta|recibo|ticket|bill|cash\s*bill|copy|duplicate|reprint|"
    r"kopie|original|proforma|credit\s*note|gutschrift|avoir|statement)\b",
    re.I,
)
GREETING = re.compile(
    r"welcome|willkommen|bienvenue|bienvenido|welkom|benvenut|thank|danke|vielen\s*dank|merci|"
    r"gracias|bedankt|grazie|terima\s*kasih|selamat|please|bitte|opening|[öo]ffnungszeit|"
    r"hours|horaires|horario|openingstijden|orari",
    re.I,
)
# The legal small print beside a name ("SARL au capital de 10 000 € – RCS Paris B …",
# "Geschäftsführer: …", "VAT No. …"): a line holding it is a mention, not the name.
LEGAL_MENTION = re.compile(
    r"capital|si[èe]ge|siret|siren|\brcs\b|\btva\b|\bvat\b|\bust\b|\biban\b|\bbic\b|"
    r"gesch[äa]ftsf[üu]hr|handelsregister|amtsgericht|registered\s*office|\bhrb?\b|"
    r"p\.?\s*iva|\bcif\b|\bnif\b|\bkvk\b|\bbtw\b|\bgst\b|steuer|tax\s*id|\bein\b",
    re.I,
)
# A quantity or a price is never part of a name: "0,162 kg x 1,15 EUR/kg", "2 x 3.50".
QUANTITY_OR_PRICE = re.compile(
    r"\d[.,]\d{2}(?!\d)|\d[.,]\d+\s*(?:kg|g|l|ml|cl)\b|\d\s*(?:stk|pcs)\b|\d\s*[x×]\s*\d|"
    r"/\s*(?:kg|l|stk|st)\b|@\s*\d",
    re.I,
)
LABEL_VALUE = re.compile(r"^[^\d:]{2,30}:\s*\S")
# Lines that name nobody: who served ("Es bediente Sie", "Served by", "Cashier"), the
# returns policy ("Goods sold are not returnable", "Umtausch nur mit Bon"), what to keep
# ("Bitte Bon aufbewahren", "Keep this receipt"). They sit in the header of many tills.
NOT_A_NAME = re.compile(
    r"\bes\s*bediente|\bbediente\s*sie|\bbedient\s*(?:von|durch)|\bsie\s*wurden\s*bedient|"
    r"\bkassierer(?:in)?\b|\bbediener(?:in)?\b|\bserved\s*by|\byour\s*(?:server|cashier|host)|"
    r"\bcashier\b|\boperator\b|\bsalesperson\b|\bvous\s*a\s*servi|\bcaissi[eè]re?\b|"
    r"\ble\s*atendi[óo]|\bcajer[oa]\b|\bu\s*werd\s*geholpen|\bkassa(?:medewerker)?\b|"
    r"\bla\s*servito|\bcassiere\b|"
    r"\breturnable|\brefundable|\bno\s*refund|\bexchange|\bumtausch|\br[üu]ckgabe|"
    r"\berstattung|\bremboursement|\b[ée]change|\bdevoluci[óo]n|\bcambio|\bruilen|"
    r"\bgoods\s*sold|\bkeep\s*(?:the|this|your)\s*(?:receipt|invoice)|\baufbewahren|"
    r"\bconserv(?:ez|er)\s*(?:votre|ce)\s*ticket|\bcome\s*again|\bsch[öo]nen\s*tag|"
    r"\bbis\s*zum\s*n[äa]chsten|\bhave\s*a\s*nice|\bauf\s*wiedersehen",
    re.I,
)
# The sender line over a letter's address window ("Kestrel Print Ltd · 8 Church Lane ·
# Bristol BS1 4XX"): parts set apart by middle dots, bullets or bars.
SENDER_PARTS = re.compile(r"\s+[·•|]\s+")
# A house number or lot at the start: an address line, not a name ("No. 12, Jalan …",
# "Lot 5", "Unit 3").
ADDRESS_START = re.compile(
    r"^\W*(?:no|lot|unit|suite|blk|block|level|flat)\b\.?\s*[:#]?\s*\d", re.I
)
# An identifier on its own: one token of letters and digits ("JM0725755-U", "CS00018751").
IDENTIFIER = re.compile(r"^\W*(?=[\w/-]*\d[\w/-]*\d[\w/-]*\d)[\w/-]+\W*$")
SELLER_LABEL = re.compile(
    r"^\W*(?:welcome\s*to|willkommen\s*(?:bei|im|in)|bienvenue\s*(?:chez|[àa])|"
    r"bienvenidos?\s*a|welkom\s*bij|benvenuti\s*(?:da|a|in)|selamat\s*datang\s*ke|"
    r"(?:receipt|invoice|bill)\s*from|(?:rechnung|quittung)\s*von|(?:facture|re[çc]u)\s*de|"
    r"factura\s*de|factuur\s*van|(?:fattura|ricevuta)\s*di|"
    r"sold\s*by|seller|supplier|vendor|issued\s*by|from|verk[äa]ufer|lieferant|"
    r"rechnungssteller|von|vendu\s*par|fournisseur|[ée]metteur|vendedor|proveedor|emisor|"
    r"verkocht\s*door|leverancier|venduto\s*da|fornitore|emittente)\s*:?\s*",
    re.I,
)
PAYEE = re.compile(
    # Word-initial: "Empfänger:" is the payee, "Rechnungsempfänger:" the buyer.
    r"\b(?:titulaire\s*(?:du\s*compte)?|kontoinhaber(?:in)?|account\s*(?:holder|name)|"
    r"beneficiary|payee|empf[äa]nger|titular(?:\s*de\s*la\s*cuenta)?|begunstigde|"
    r"intestatario|beneficiario|rekeninghouder|ten\s*name\s*van)\s*:\s*"
    r"(?P<name>[^\d,;:]{3,60}?)\s*(?:$|[,;]|\s-\s|\s–\s|\biban\b|\bbic\b)",
    re.I,
)
DOMAIN = re.compile(
    r"(?:www\.|@|https?://)(?:[a-z0-9-]+\.)*?(?P<name>[a-z0-9][a-z0-9-]{1,40})\."
    r"(?:com|de|co|net|org|nl|fr|es|it|my|in|eu|uk|at|ch|be|io|shop|store)\b",
    re.I,
)


@dataclass(frozen=True)
class Domain:
    """A web or e-mail domain printed on the document, and the brand it names if any."""

    name: str
    brand: Brand | None
    line: TextLine
    start: int
    end: int


def merchant_candidates(view: DocView, country_code: str | None) -> list[Candidate]:
    """Every plausible issuer name, with the features that support or refute it."""
    if not view.first_page_lines():
        return []
    domains = _domains(view)
    found = _header_candidates(view, country_code, domains)
    found += _payee_candidates(view, country_code)
    found += _domain_candidates(found, domains, country_code)
    found += _footer_candidates(view, country_code)
    _mark_repeats(view, found)
    return found


def _header_candidates(
    view: DocView, country_code: str | None, domains: list[Domain]
) -> list[Candidate]:
    """The segments of the first page's top block."""
    first_page = view.first_page_lines()
    header = [
        line
        for rank, line in enumerate(first_page)
        if rank < HEADER_ROWS and view.relative_y(line) <= HEADER_SHARE
    ] or first_page[:HEADER_ROWS]
    buyer_rows = buyer_segments(view)
    segments = [segment for line in header for segment in view.segments(line)]
    tallest = max((segment.line.height for segment in segments), default=1.0)
    found: list[Candidate] = []
    titled = False
    for rank, segment in enumerate(segments):
        candidate = _segment_candidate(
            view, segment, rank, tallest, buyer_rows, domains, country_code
        )
        if candidate is not None:
            # Below the title or the invoice number, a name is more likely the buyer's.
            candidate.features["below_title"] = float(titled)
            found.append(candidate)
        titled = titled or bool(
            TITLE.search(segment.text) or INVOICE_NUMBER_LABEL.search(segment.text)
        )
    return found


def _payee_candidates(view: DocView, country_code: str | None) -> list[Candidate]:
    """The name after an account-holder label: the bank account is the issuer's."""
    found = []
    for line in view.lines:
        for match in PAYEE.finditer(line.text):
            name = tidy(match.group("name"))
            if _letters(name) >= 3:
                span = match.start("name"), match.end("name")
                found.append(_named(name, line, span, "payee", country_code))
    return found


def _domain_candidates(
    found: list[Candidate], domains: list[Domain], country_code: str | None
) -> list[Candidate]:
    """Brands named by a domain that no header name carries already. Only a known brand's
    domain names a merchant: others belong to anyone (a till maker's website, a mail
    provider, a billing service)."""
    carried = {str(c.identity) for c in found if c.features.get("domain_match")}
    return [
        _named(
            domain.brand.name,
            domain.line,
            (domain.start, domain.end),
            "domain_brand",
            country_code,
            domain.brand,
        )
        for domain in domains
        if domain.brand is not None and not any(domain.name in key for key in carried)
    ]


def _footer_candidates(view: DocView, country_code: str | None) -> list[Candidate]:
    """Company names of the legal footer ("Muster GmbH · Hauptstr. 1 · …")."""
    last_page = view.pages[-1].number if view.pages else 1
    found = []
    for line in view.lines:
        if line.page != last_page or view.relative_y(line) < FOOTER_SHARE:
            continue
        for segment in view.segments(line):
            form = STRONG_LEGAL_FORM.search(segment.text)
            if form is None:
                continue
            name = company_name(segment.text[: form.end()])
            if _letters(name) >= 2 and len(name.split()) <= 6 and not LEGAL_MENTION.search(name):
                span = segment.start, segment.start + form.end()
                candidate = _named(name, line, span, "footer", country_code)
                candidate.features["position"] = view.relative_y(line)
                found.append(candidate)
    return found


def _segment_candidate(
    view: DocView,
    segment: Segment,
    rank: int,
    tallest: float,
    buyer_rows: set[tuple[int, int]],
    domains: list[Domain],
    country_code: str | None,
) -> Candidate | None:
    raw = segment.text
    seller = SELLER_LABEL.match(raw)
    start = segment.start + (seller.end() if seller else 0)
    end = segment.end
    sender = is_sender_line(raw)
    if sender:
        # The name is the first part; the rest is the sender's address.
        first = SENDER_PARTS.search(segment.line.text, start)
        end = first.start() if first is not None and first.start() < end else end
    text = segment.line.text[start:end]
    name = company_name(text)
    if _letters(name) < 2 or QUANTITY_OR_PRICE.search(text):
        return None
    if seller is None and (GREETING.search(text) or NOT_A_NAME.search(text)):
        return None  # "Thank you, please come again", "Es bediente Sie …" name nobody
    if not is_name_like(name):
        return None
    line = segment.line
    features: dict[str, float] = {
        "source_header": 1.0,
        "rank": 1 / (1 + rank),
        "position": view.relative_y(line),
        "left": view.relative_x(line, segment.x0),
        "height": min(3.0, view.relative_height(line.height)) - 1.0,
        "tallest": float(line.height >= 0.95 * tallest),
        "legal_strong": float(bool(STRONG_LEGAL_FORM.search(text))),
        "business_word": float(bool(BUSINESS_WORD.search(text))),
        "registration_near": float(_near(view, line, REGISTRATION_ROW)),
        "issuer_marker_near": float(_near(view, line, ISSUER_MARKER, rows=4)),
        "buyer_block": float((line.index, segment.start) in buyer_rows),
        "buyer_label": float(bool(BUYER_LABEL.search(raw))),
        "seller_label": float(seller is not None),
        "address": float(bool(ADDRESS.search(text))),
        "contact": float(bool(CONTACT.search(text))),
        "title": float(bool(TITLE.search(text))),
        "greeting": float(bool(GREETING.search(text))),
        "label_value": float(bool(LABEL_VALUE.match(text)) and seller is None),
        "sender_line": float(sender),
        "legal_mention": float(bool(LEGAL_MENTION.search(text))),
        "digits": _share(text, str.isdigit),
        "letters": math.log1p(_letters(name)) / 4,
        "words": min(8, len(name.split())) / 8,
        "upper": _share(name, str.isupper, str.isalpha),
        "ocr": line.confidence_at(start, segment.end),
    }
    brand = _brand_features(name, country_code, features)
    compact = _compact(name)
    features["domain_match"] = float(
        any(
            len(d) >= 4 and (d in compact or (len(compact) >= 4 and compact in d))
            for d in (domain.name for domain in domains)
        )
    )
    return Candidate(name, line, start, end, features, "header", compact, brand)


def is_sender_line(text: str) -> bool:
    """A name and its address in one line, parts set apart by dots or bars: the sender
    line of a letter (above the recipient's address) or a letterhead's."""
    parts = SENDER_PARTS.split(text)
    return len(parts) >= 3 and any(ADDRESS.search(part) for part in parts[1:])


def is_name_like(name: str) -> bool:
    """False for what a header holds besides names: a title alone ("TAX INVOICE"), an
    identifier, an address line that starts with a house number, a postcode and a city."""
    if _letters(TITLE.sub(" ", name)) < 2:
        return False
    if IDENTIFIER.match(name) or ADDRESS_START.match(name):
        return False
    return not _is_place(name)


def _is_place(name: str) -> bool:
    """A postcode and a listed city or state, or a listed city alone ("10115 Berlin")."""
    words = re.sub(r"^\W*\d{4,6}\b", " ", name).upper()
    if words.strip() == name.upper().strip() and not re.match(r"^\W*\d", name):
        # No postcode: only a listed city's name and nothing else counts.
        places = place_index().find(words)
        return len(places) == 1 and places[0].name == " ".join(re.findall(r"[^\W_]+", words))
    rest = " ".join(re.findall(r"[^\W_]+", words))
    return bool(rest) and (
        any(p.name == rest for p in place_index().find(rest))
        or any(rest == state for country in COUNTRIES for state in country.states)
    )


def _named(
    name: str,
    line: TextLine,
    span: tuple[int, int],
    source: str,
    country_code: str | None,
    brand: Brand | None = None,
) -> Candidate:
    """A name read after a label, from a domain or in the footer."""
    features: dict[str, float] = {
        f"source_{source}": 1.0,
        "legal_strong": float(bool(STRONG_LEGAL_FORM.search(name))),
        "letters": math.log1p(_letters(name)) / 4,
        "words": min(8, len(name.split())) / 8,
        "upper": _share(name, str.isupper, str.isalpha),
        "ocr": line.confidence_at(*span),
    }
    found = _brand_features(name, country_code, features)
    return Candidate(name, line, span[0], span[1], features, source, _compact(name), brand or found)


def _brand_features(
    name: str, country_code: str | None, features: dict[str, float]
) -> Brand | None:
    """A known brand the name *is* (most of its letters) or merely mentions."""
    found = brand_in_name(name)
    if found is None:
        return None
    brand, coverage = found
    local = brand.operates_in(country_code)
    whole = coverage >= BRAND_COVERAGE and len(brand.name.replace(" ", "")) >= 3
    if whole:
        features["brand"] = 1.0
    else:
        features["brand_partial"] = coverage
    if local is not None:
        features["brand_local" if local else "brand_foreign"] = 1.0
    return brand if whole else None


# Contact details inside a segment: an e-mail or web address, a labelled phone number.
CONTACT_DETAIL = re.compile(
    r"\S+@\S+|(?:https?://|www\.)\S+|\b(?:tel|fax|phone|mobile|t[ée]l)\b\.?\s*:?\s*[+\d][\d\s/().-]*",
    re.I,
)


def company_name(text: str) -> str:
    """A segment's text as a company name: contact details, registration numbers and a
    trailing address cut."""
    text = CONTACT_DETAIL.sub(" ", text)
    forms = list(STRONG_LEGAL_FORM.finditer(text))
    if forms:
        cut = forms[-1].end()
        rest = text[cut:]
        # "GALLERY ONE SDN BHD No: 28, JALAN ASTANA" → the name ends at its legal form.
        if ADDRESS.search(rest) or CONTACT.search(rest) or re.match(r"\s*[,(]", rest):
            text = text[:cut]
    text = REGISTRATION.sub(" ", text)
    return tidy(text)


def tidy(text: str) -> str:
    """Spaces collapsed, punctuation trimmed, but a legal form's last dot kept ("B.V.")."""
    trimmed = text.strip(" ,:;-–*|_=#\"'")
    if not re.search(r"\b\w{1,3}\.\w{1,3}\.$", trimmed):
        trimmed = trimmed.rstrip(". ")
    return re.sub(r"\s{2,}", " ", trimmed.strip(" ,:;-–*|_=#\"'")).strip()


def buyer_segments(view: DocView, windows: bool = True) -> set[tuple[int, int]]:
    """(row index, segment start) of every segment in a buyer's block.

    The block is the segment that holds a buyer label ("Bill to: ACME") and the segments
    below it that overlap its column, down to the first blank band; or (with ``windows``)
    the address under a letter's sender line (the window of a business letter: sender small
    on top, the recipient below — a guess that a footer printed the same way also meets).
    """
    rows: set[tuple[int, int]] = set()
    for line in view.lines:
        for segment in view.segments(line):
            labelled = bool(BUYER_LABEL.search(segment.text))
            window = windows and is_sender_line(segment.text) and _small(view, line)
            if not labelled and not window:
                continue
            if labelled:
                rows.add((line.index, segment.start))
            left = segment.x0 - view.text_height
            right = max(segment.x1, segment.x0 + 12 * view.text_height)
            current = line
            for _ in range(8):
                below = view.following(current)
                if below is None:
                    break
                overlapping = [
                    seg for seg in view.segments(below) if seg.x0 < right and seg.x1 > left
                ]
                if not overlapping:
                    break
                rows.update((below.index, seg.start) for seg in overlapping)
                current = below
    return rows


def _small(view: DocView, line: TextLine) -> bool:
    """Smaller than the document's usual text (a sender line is printed small)."""
    return line.height < 0.9 * view.text_height


def _domains(view: DocView) -> list[Domain]:
    found = []
    index = brand_index()
    for line in view.lines:
        for match in DOMAIN.finditer(line.text):
            name = match.group("name").lower()
            found.append(
                Domain(name, index.brand_for_domain(name), line, match.start(), match.end())
            )
    return found


def _near(view: DocView, line: TextLine, pattern: re.Pattern[str], rows: int = 2) -> bool:
    """The pattern on this row or one of the next ``rows`` rows."""
    current: TextLine | None = line
    for _ in range(rows + 1):
        if current is None:
            return False
        if pattern.search(current.text):
            return True
        current = view.following(current)
    return False


def _mark_repeats(view: DocView, candidates: list[Candidate]) -> None:
    """Where else the name is printed. Named again beside bank details, a VAT or company
    number, after an account-holder label or in the legal footer, it is the issuer's
    (``issuer_context``); printed again elsewhere (a buyer's billing and shipping
    address) it is merely ``repeated``."""
    texts = [_compact(line.text) for line in view.lines]
    last_page = view.pages[-1].number if view.pages else 1
    issuer_rows = {
        line.index
        for line in view.lines
        if ISSUER_MARKER.search(line.text)
        or PAYEE.search(line.text)
        or (
            line.page == last_page
            and view.relative_y(line) >= FOOTER_SHARE
            and STRONG_LEGAL_FORM.search(line.text)
        )
    }
    for candidate in candidates:
        key = str(candidate.identity)
        own = candidate.line.index if candidate.line is not None else -1
        rows = (
            [i for i, text in enumerate(texts) if i != own and key in text] if len(key) >= 4 else []
        )
        candidate.features["repeated"] = float(any(i not in issuer_rows for i in rows))
        candidate.features["issuer_context"] = float(any(i in issuer_rows for i in rows))


def _compact(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def _share(
    text: str, test: Callable[[str], bool], among: Callable[[str], bool] | None = None
) -> float:
    pool = [ch for ch in text if not ch.isspace() and (among is None or among(ch))]
    return sum(1 for ch in pool if test(ch)) / len(pool) if pool else 0.0
