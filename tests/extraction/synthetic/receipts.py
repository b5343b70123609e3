"""Made-up till slips, as an OCR reading of them gives them: text rows, with the layouts and
the troubles of real receipts, each with the truth a parser should read.

Written from how shops print receipts, not from the parser: a slogan or the shop's greeting
above its name, a reference or terminal line at the very top, a title word in the shop's
language ("RECHNUNG", "TICKET", "FACTURA", "TAX INVOICE"), a brand heading with the operating
company below it (a franchise), a long registered name broken over two rows, several totals
(before a coupon, after it, the amount paid), refunds, cash rounding, cash and change or a
card, one tax line per rate, dates in the shop's own way. And the troubles of a photograph
read by OCR: a digit lost in one printed copy of the total, letters read as digits in a name
("0" for "O"), columns run together. ``make_receipt(seed)`` draws one; the same seed gives the
same receipt.

The truth: what was paid (negative for a refund), the date, the merchant (the brand, or the
registered name when no brand is printed), the registered name and tax id when printed, the
tax and the number of article lines.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal

from .vocabulary import LANGUAGES, Language

CENT = Decimal("0.01")
FIVE_CENTS = Decimal("0.05")
ANCHOR = date(2025, 10, 31)


@dataclass(frozen=True)
class TillWords:
    """What a till slip says, in one language."""

    title: tuple[str, ...]
    total: tuple[str, ...]  # the amount to pay
    before: tuple[str, ...]  # a total before a coupon or discount
    coupon: tuple[str, ...]
    card: tuple[str, ...]
    cash: tuple[str, ...]
    change: tuple[str, ...]
    rounding: tuple[str, ...]
    refund: tuple[str, ...]
    slogan: tuple[str, ...]
    reference: tuple[str, ...]
    operated: tuple[str, ...]  # "Operated by", before the company running a franchise
    date: tuple[str, ...]
    tax: str
    items: tuple[str, ...]  # "number of articles"


TILL: dict[str, TillWords] = {
    "en": TillWords(
        title=("RECEIPT", "TAX INVOICE", "SALES RECEIPT", "CASH SALE"),
        total=("TOTAL", "TOTAL DUE", "AMOUNT DUE", "TOTAL PAYABLE", "BALANCE DUE"),
        before=("TOTAL BEFORE DISCOUNT", "SUB TOTAL"),
        coupon=("COUPON", "DISCOUNT", "MEMBER SAVINGS"),
        card=("VISA", "MASTERCARD", "DEBIT CARD", "CARD"),
        cash=("CASH", "CASH TENDERED"),
        change=("CHANGE", "CHANGE DUE"),
        rounding=("ROUNDING", "ROUNDING ADJ"),
        refund=("REFUND", "RETURN RECEIPT", "REFUND RECEIPT"),
        slogan=("Always fresh, always local", "Quality you can trust", "WELCOME"),
        reference=("REF 0041873", "TRANS 2291-07", "TERMINAL 04"),
        operated=("Operated by",),
        date=("DATE", "Date:", ""),
        tax="VAT",
        items=("NO. OF ITEMS", "ITEMS"),
    ),
    "de": TillWords(
        title=("KASSENBON", "RECHNUNG", "BELEG", "QUITTUNG"),
        total=("SUMME", "ZU ZAHLEN", "GESAMT", "SUMME EUR", "ENDBETRAG"),
        before=("ZWISCHENSUMME",),
        coupon=("RABATT", "COUPON", "PREISVORTEIL"),
        card=("EC-KARTE", "KARTENZAHLUNG", "GIROCARD", "VISA"),
        cash=("BAR", "GEGEBEN"),
        change=("RÜCKGELD", "ZURÜCK"),
        rounding=("RUNDUNG",),
        refund=("RÜCKGABE", "STORNO", "GUTSCHRIFT"),
        slogan=("Frisch & günstig", "Ihr Markt in der Nachbarschaft", "Willkommen"),
        reference=("Bon-Nr. 4471", "Kasse 3 Bed. 12", "TSE-Nr. 0001"),
        operated=("Betreiber:", "Inhaber:"),
        date=("Datum", ""),
        tax="MwSt",
        items=("Anzahl Artikel", "Artikelanzahl"),
    ),
    "fr": TillWords(
        title=("TICKET", "TICKET DE CAISSE", "FACTURE"),
        total=("TOTAL", "TOTAL TTC", "À PAYER", "NET À PAYER"),
        before=("SOUS-TOTAL",),
        coupon=("REMISE", "BON DE RÉDUCTION"),
        card=("CB", "CARTE BANCAIRE", "VISA"),
        cash=("ESPÈCES",),
        change=("RENDU", "MONNAIE RENDUE"),
        rounding=("ARRONDI",),
        refund=("AVOIR", "REMBOURSEMENT"),
        slogan=("Bienvenue", "Le goût du frais", "Merci de votre visite"),
        reference=("Caisse 02 Ticket 3321", "N° 0012-774"),
        operated=("Exploité par",),
        date=("Date", "Le", ""),
        tax="TVA",
        items=("Nombre d'articles", "NB ARTICLES"),
    ),
    "es": TillWords(
        title=("TICKET", "FACTURA SIMPLIFICADA", "RECIBO"),
        total=("TOTAL", "TOTAL A PAGAR", "IMPORTE"),
        before=("SUBTOTAL",),
        coupon=("DESCUENTO", "CUPÓN"),
        card=("TARJETA", "VISA"),
        cash=("EFECTIVO", "ENTREGADO"),
        change=("CAMBIO", "DEVOLUCIÓN CAMBIO"),
        rounding=("REDONDEO",),
        refund=("DEVOLUCIÓN", "ABONO"),
        slogan=("Bienvenidos", "Calidad y buen precio"),
        reference=("Caja 3 Op. 1192", "N.Op 00044"),
        operated=("Gestionado por",),
        date=("Fecha", ""),
        tax="IVA",
        items=("Nº artículos",),
    ),
    "nl": TillWords(
        title=("KASSABON", "BON", "FACTUUR"),
        total=("TOTAAL", "TE BETALEN", "TOTAAL EUR"),
        before=("SUBTOTAAL",),
        coupon=("KORTING", "BONUS"),
        card=("PIN", "PINBETALING", "MAESTRO"),
        cash=("CONTANT",),
        change=("WISSELGELD", "TERUG"),
        rounding=("AFRONDING",),
        refund=("RETOUR", "CREDITNOTA"),
        slogan=("Welkom", "Altijd vers"),
        reference=("Kassa 2 Bon 8812", "Transactie 00231"),
        operated=("Geëxploiteerd door",),
        date=("Datum", ""),
        tax="BTW",
        items=("Aantal artikelen",),
    ),
    "it": TillWords(
        title=("SCONTRINO", "DOCUMENTO COMMERCIALE", "RICEVUTA"),
        total=("TOTALE", "TOTALE COMPLESSIVO", "IMPORTO PAGATO"),
        before=("SUBTOTALE",),
        coupon=("SCONTO", "BUONO"),
        card=("CARTA", "BANCOMAT", "VISA"),
        cash=("CONTANTI",),
        change=("RESTO",),
        rounding=("ARROTONDAMENTO",),
        refund=("RESO", "NOTA DI CREDITO"),
        slogan=("Benvenuti", "Sempre freschi"),
        reference=("Cassa 1 Scontrino 551", "Doc. N. 0071-0023"),
        operated=("Gestito da",),
        date=("Data", ""),
        tax="IVA",
        items=("Numero articoli",),
    ),
}
TILL["en-us"] = TillWords(
    **{**TILL["en"].__dict__, "tax": "SALES TAX", "cash": ("CASH",), "title": ("RECEIPT",)}
)
# Brands of made-up chains (the brand list of the service knows none of them).
BRAND_WORDS = (
    "Kestrel", "Larchmont", "Vantor", "Brisa", "Nordholm", "Quillby", "Marlowe", "Pellin",
    "Orvieto", "Tannen", "Heliot", "Corvin",
)  # fmt: skip
BRAND_KINDS = (
    "MART", "FOODS", "PIZZA", "COFFEE", "HARDWARE", "PHARMACY", "BAKERY", "FUEL", "MARKT",
)  # fmt: skip
MALAY_LEGAL = ("SDN BHD", "SDN. BHD.", "(M) SDN BHD")


@dataclass(frozen=True)
class Receipt:
    """One till slip: its rows and its truth."""

    seed: int
    language: str
    rows: tuple[str, ...]
    amount: Decimal
    doc_date: date
    merchant: str
    legal_name: str | None
    tax_id: str | None
    tax: Decimal | None
    line_count: int
    troubles: tuple[str, ...] = field(default_factory=tuple)

    @property
    def text(self) -> str:
        return "\n".join(self.rows)


def make_receipt(seed: int, language: Language | None = None) -> Receipt:
    """A till slip drawn from ``seed`` (language chosen by the seed unless given)."""
    rng = random.Random(seed)
    language = language or LANGUAGES[seed % len(LANGUAGES)]
    words = TILL[language.code]
    troubles: list[str] = []
    rows: list[str] = []

    def money(value: Decimal) -> str:
        text = f"{abs(value):,.2f}"
        if language.decimal_comma:
            text = text.replace(",", "X").replace(".", ",").replace("X", ".")
        return ("-" if value < 0 else "") + text

    # Who sells: a brand (a made-up chain) and maybe the company that operates it.
    brand = f"{rng.choice(BRAND_WORDS).upper()} {rng.choice(BRAND_KINDS)}"
    malay = language.code == "en" and rng.random() < 0.4
    legal_form = rng.choice(MALAY_LEGAL if malay else language.legal_forms)
    company_words = [rng.choice(language.words), rng.choice(language.trades)]
    legal = f"{' '.join(company_words)} {legal_form}".upper()
    if rng.random() < 0.25:
        troubles.append("reference line on top")
        rows.append(rng.choice(words.reference))
    if rng.random() < 0.25:
        troubles.append("slogan above the name")
        rows.append(rng.choice(words.slogan))
    if rng.random() < 0.2:
        troubles.append("title word first")
        rows.append(rng.choice(words.title))
    shown_brand = rng.random() < 0.75
    operator = False
    if shown_brand:
        rows.append(_ocr_name(rng, brand, troubles))
        operator = rng.random() < 0.5
        if operator:
            troubles.append("operator under the brand")
            rows.append(f"{rng.choice(words.operated)} {legal}")
    legal_shown = operator
    if not operator and (not shown_brand or rng.random() < 0.4):
        legal_shown = True
        if len(legal) > 22 and rng.random() < 0.4:
            troubles.append("registered name on two rows")
            cut = legal.rfind(" ", 0, len(legal) - len(legal_form) - 1)
            rows += [legal[:cut], legal[cut + 1 :]]
        else:
            rows.append(legal)
    street = f"{rng.randint(1, 200)} {rng.choice(language.streets)}"
    postcode, city = rng.choice(language.cities)
    rows += [street, f"{postcode} {city}"]
    tax_id = None
    if rng.random() < 0.6:
        tax_id = _tax_id(rng, language)
        label = {"en": "VAT Reg No", "en-us": "Tax ID", "de": "USt-IdNr.", "fr": "N° TVA",
                 "es": "NIF", "nl": "BTW-nr.", "it": "P. IVA"}[language.code]  # fmt: skip
        rows.append(f"{label}: {tax_id}")
    if not any(t == "title word first" for t in troubles) and rng.random() < 0.5:
        rows.append(rng.choice(words.title))

    # When: the shop's own way of writing the date, with the time.
    doc_date = ANCHOR - timedelta(days=rng.randint(0, 5 * 365))
    rows.append(_date_row(rng, language, words, doc_date, troubles))

    # What: articles, maybe a coupon; the tax per rate.
    refund = rng.random() < 0.08
    count = rng.randint(1, 9)
    lines: list[tuple[str, int, Decimal, int]] = []
    for _ in range(count):
        price = (Decimal(rng.randint(49, 4999)) / 100).quantize(CENT)
        lines.append((rng.choice(language.goods), rng.choice((1, 1, 1, 2, 3)), price,
                      rng.choice(language.tax_rates[:2])))  # fmt: skip
    sign = Decimal(-1) if refund else Decimal(1)
    for name, quantity, price, _rate in lines:
        amount = price * quantity * sign
        if quantity > 1:
            rows.append(f"{name.upper()}   {quantity} x {money(price)}   {money(amount)}")
        else:
            rows.append(f"{name.upper()}   {money(amount)}")
    gross = sum((price * quantity for _, quantity, price, _ in lines), Decimal(0))
    coupon = Decimal(0)
    if not refund and rng.random() < 0.2 and gross > 5:
        troubles.append("total before a coupon")
        coupon = (gross * Decimal(rng.choice((5, 10, 20))) / 100).quantize(CENT)
        rows.append(f"{rng.choice(words.before)}   {money(gross)}")
        rows.append(f"{rng.choice(words.coupon)}   -{money(coupon)}")
    total = (gross - coupon) * sign
    if refund:
        troubles.append("refund")
        rows.insert(0, rng.choice(words.refund))
    rounding = Decimal(0)
    rounded = rng.random() < 0.15 and not refund
    if rounded:
        rounding = (total / FIVE_CENTS).quantize(Decimal(1), ROUND_HALF_UP) * FIVE_CENTS - total
    payable = total + rounding
    total_label = rng.choice(words.total)
    total_row = f"{total_label}   {money(total)}"
    if rng.random() < 0.1:
        troubles.append("columns run together")
        total_row = f"{total_label} {money(total)}"
    rows.append(total_row)
    if rounded and rounding:
        troubles.append("cash rounding")
        rows.append(f"{rng.choice(words.rounding)}   {money(rounding)}")
        rows.append(f"{rng.choice(words.total)}   {money(payable)}")
    # The tax each rate holds, as the till prints it below the total.
    by_rate: dict[int, Decimal] = {}
    for _, quantity, price, rate in lines:
        by_rate[rate] = by_rate.get(rate, Decimal(0)) + price * quantity
    factor = (gross - coupon) / gross if gross else Decimal(1)
    tax_total = Decimal(0)
    for rate, rate_gross in sorted(by_rate.items()):
        rate_gross = (rate_gross * factor).quantize(CENT)
        tax = (rate_gross * rate / (100 + rate)).quantize(CENT, ROUND_HALF_UP)
        tax_total += tax
        net = rate_gross - tax
        rows.append(f"{words.tax} {rate}%   {money(net * sign)}   {money(tax * sign)}")
    # How it was paid.
    if not refund and rng.random() < 0.5:
        handed = (payable / 10).quantize(Decimal(1), rounding="ROUND_CEILING") * 10
        if handed == payable:
            handed += 10
        rows.append(f"{rng.choice(words.cash)}   {money(handed)}")
        rows.append(f"{rng.choice(words.change)}   {money(handed - payable)}")
    else:
        rows.append(f"{rng.choice(words.card)}   {money(payable)}")
    if rng.random() < 0.3:
        rows.append(f"{rng.choice(words.items)}: {sum(q for _, q, _, _ in lines)}")
    if rng.random() < 0.12:
        # OCR lost a digit in one printed copy of the total (the paid row keeps it).
        troubles.append("a digit lost in the total")
        index = rows.index(total_row)
        text = money(total)
        digits = [i for i, ch in enumerate(text) if ch.isdigit()]
        cut = rng.choice(digits[:-2] or digits)
        rows[index] = rows[index].replace(text, text[:cut] + text[cut + 1 :])
    rows.append(rng.choice(language.thanks))
    merchant = brand if shown_brand else legal
    return Receipt(
        seed,
        language.code,
        tuple(rows),
        payable,
        doc_date,
        merchant,
        legal if legal_shown else None,
        tax_id,
        tax_total * sign if by_rate else None,
        len(lines),
        tuple(troubles),
    )


def _ocr_name(rng: random.Random, name: str, troubles: list[str]) -> str:
    """The name as OCR may read it: an O read as 0, an I as 1, now and then."""
    if rng.random() < 0.15:
        troubles.append("letters read as digits in the name")
        return name.replace("O", "0", 1) if "O" in name else name.replace("I", "1", 1)
    return name


def _date_row(
    rng: random.Random, language: Language, words: TillWords, day: date, troubles: list[str]
) -> str:
    label = rng.choice(words.date)
    style = rng.choice(("numeric", "short", "dashes", "spaced", "textual"))
    if language.code == "en-us":
        first, second = day.month, day.day
    else:
        first, second = day.day, day.month
    if style == "numeric":
        text = f"{first:02d}.{second:02d}.{day.year}" if language.decimal_comma else (
            f"{first:02d}/{second:02d}/{day.year}")  # fmt: skip
    elif style == "short":
        text = f"{first:02d}/{second:02d}/{day.year % 100:02d}"
    elif style == "dashes":
        troubles.append("two-digit year with dashes")
        text = f"{first:02d}-{second:02d}-{day.year % 100:02d}"
    elif style == "spaced":
        troubles.append("date spaced out by OCR")
        text = f"{first:02d} - {second:02d} - {day.year % 100:02d}"
    else:
        text = f"{day.day} {language.months[day.month - 1][:3].upper()} {day.year}"
    time = f"{rng.randint(7, 21):02d}:{rng.randint(0, 59):02d}"
    return f"{label} {text}   {time}".strip() if label else f"{text}   {time}"


def _tax_id(rng: random.Random, language: Language) -> str:
    digits = "".join(str(rng.randint(0, 9)) for _ in range(9))
    return {
        "en": f"GB{digits}",
        "en-us": f"{digits[:2]}-{digits[2:9]}",
        "de": f"DE{digits}",
        "fr": f"FR{rng.randint(10, 99)}{digits}",
        "es": f"B{digits[:8]}",
        "nl": f"NL{digits}B01",
        "it": f"{digits}{rng.randint(10, 99)}",
    }[language.code]


def receipts(count: int, seed: int = 0) -> list[Receipt]:
    """``count`` till slips, languages in turn, from ``seed``."""
    return [make_receipt(seed * 100_000 + index) for index in range(count)]
