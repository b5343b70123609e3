"""The words documents put before their values, in the languages fincap reads.

English, German, French, Spanish, Dutch and Italian invoices, and Malay till slips. Each
class is one regular expression; ``find_labels`` finds every label in a line and, where two
overlap, keeps the longer one ("Total GST" is a tax label, not a total label followed by
"GST"; "Sub Total" is a subtotal). Patterns run on lower-cased text and tolerate the OCR
misreads seen on receipts ("lotal", "T0tal").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

_TOTAL = r"(?:[tl7][o0]ta[l1i]e?|totaal)"

# Money labels, in priority order for equally long matches.
AMOUNT_LABELS: dict[str, str] = {
    # The amount to pay: only the final total carries these.
    "total_strong": (
        r"grand\s*" + _TOTAL + r"|" + _TOTAL + r"\s*(?:amount|due|payable|to\s*pay|sales|"
        r"incl\.?|inkl\.?|inc\b|including|rm|myr|eur|euro|usd|gbp|chf|ttc|factura|fattura|"
        r"documento|da\s*pagare|a\s*pagar|te\s*betalen|bedrag|rounded|"
        r"after\s*(?:round(?:ing)?|adj(?:ustment)?\.?)|"
        r"(?:for|of)\s*this\s*invoice|invoice|\(incl|brutto|\(rm\))|"
        r"round(?:ed|ing)?\s*" + _TOTAL + r"|amount\s*(?:due|payable|to\s*pay)|"
        r"balance\s*(?:due|payable)|invoice\s*" + _TOTAL + r"|"
        r"(?:zu|zum)\s*zahlen|gesamtbetrag|endbetrag|rechnungsbetrag|gesamtsumme|"
        r"summe\s*(?:brutto|eur|euro)|bruttobetrag|zahlbetrag|"
        r"net\s*[àa]\s*payer|montant\s*(?:ttc|total|[àa]\s*payer|d[uû])|[àa]\s*payer|"
        r"importe\s*total|total\s*a\s*pagar|importe\s*a\s*pagar|"
        r"te\s*betalen|totaalbedrag|totaal\s*incl|"
        r"importo\s*totale|totale\s*(?:complessivo|euro)|"
        r"nett?\s*" + _TOTAL + r"|jumlah(?:\s*besar)?|jumlah\s*perlu\s*dibayar"
    ),
    "subtotal": (
        r"sub\s*-?\s*"
        + _TOTAL
        + r"|zwischensumme|netto(?:betrag|summe)?|"
        + _TOTAL
        + r"\s*(?:sales\s*|amount\s*)?\(?\s*(?:excl\.?|excluding|ex\b|before\s*tax|w/o|"
        r"net\b|ht\b|hors|netto|imponibile|sin\s*iva|exkl)|"
        r"net\s*amount|amount\s*untaxed|amount\s*before\s*tax|summe\s*netto|"
        r"sous[\s-]*total|montant\s*ht|total\s*h\.t\.|base\s*imponible|"
        r"subtotaal|exclusief\s*btw|excl\.?\s*(?:btw|vat|mwst|gst)|"
        r"imponibile|subtotale|totale\s*imponibile"
    ),
    "tax": (
        r"(?:" + _TOTAL + r"\s*)?(?:sales\s*)?\b(?:tax|vat|gst|sst|hst|pst|mwst|mw\.?st\.?|ust\.?|"
        r"btw|tva|iva|igic)\b(?:[\s-]*betrag|\s*amount)?|umsatzsteuer|mehrwertsteuer|steuer|"
        r"impuesto|imposta|taxe"
    ),
    "paid": (
        r"\b(?:cash|card|visa|master\s*card|mastercard|amex|maestro|girocard|ec[\s-]*karte|"
        r"kartenzahlung|karte|debit|credit|bar|bargeld|gegeben|paid|payment|tunai|"
        r"esp[eè]ces|cb|carte|efectivo|tarjeta|contant|pin|contanti|carta|bancomat|paypal|"
        r"ideal|tendered|bezahlt|betaald|pagado|pagato|pay|accepted|received|erhalten|"
        r"re[çc]u|recibido|ontvangen|ricevuto)\b"
    ),
    "change": (
        r"\b(?:change|r[üu]ckgeld|zur[üu]ck|wechselgeld|baki|rendu|monnaie|cambio|vuelto|"
        r"wisselgeld|resto)\b"
    ),
    # Cash rounding to five cents, as tills print it ("RND ADJ", "Rdg", "Round off").
    "rounding": r"round(?:ing)?\s*(?:off|adj(?:ustment)?)?|\brnd\b|\brdg\b|rundung|arrondi|"
    r"redondeo|afronding|arrotondamento|pembundaran|bundar",
    # Amounts that are never the total even though a total word may be near.
    "not_total": (
        _TOTAL + r"\s*(?:qty|quantity|items?|discount|savings?|saved|number|no\b|pcs|weight|"
        r"points|artikel)|\bqty\b|quantity|item\s*count|anzahl|discount|rabatt|remise|"
        r"descuento|korting|sconto|you\s*save|saved|savings|points|punkte|pfand|deposit|"
        r"balance\s*(?:brought|forward)|previous|tip|trinkgeld|credit\s*note|"
        r"unit\s*price|einzelpreis|prix\s*unitaire|precio\s*unitario|stukprijs|prezzo\s*unitario"
    ),
    "total": _TOTAL
    + r"|\bsumme\b|\bgesamt\b|\bbetrag\b|\bamount\b|\bdue\b|\bimporte\b|\bmontant\b|"
    r"\bbedrag\b|\bimporto\b",
}
PRIORITY = tuple(AMOUNT_LABELS)


@dataclass(frozen=True)
class Label:
    kind: str
    start: int
    end: int


@lru_cache(maxsize=1)
def _amount_patterns() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern, re.I)) for kind, pattern in AMOUNT_LABELS.items())


def find_labels(line: str) -> list[Label]:
    """Money labels in ``line``, left to right, overlaps resolved to the longest match."""
    found: list[tuple[int, int, int, str]] = []  # (-length, priority, start, kind)
    for priority, (kind, pattern) in enumerate(_amount_patterns()):
        for match in pattern.finditer(line):
            if match.end() > match.start():
                found.append((match.start() - match.end(), priority, match.start(), kind))
    kept: list[Label] = []
    for negative_length, _, start, kind in sorted(found):
        end = start - negative_length
        if all(end <= label.start or start >= label.end for label in kept):
            kept.append(Label(kind, start, end))
    return sorted(kept, key=lambda label: label.start)


# Column titles of an item or tax table: a row made of these carries no value of its own.
COLUMN_TITLE = re.compile(
    r"\b(?:qty|quantity|description|desc|item|items|code|unit|rate|price|amount|amt|tax|"
    r"total|menge|anzahl|bezeichnung|artikel|beschreibung|einzelpreis|preis|betrag|"
    r"d[ée]signation|quantit[ée]|qt[ée]|prix|montant|cantidad|precio|importe|"
    r"descripci[óo]n|concepto|aantal|prijs|omschrijving|bedrag|quantit[àa]|prezzo|"
    r"descrizione|importo|s/price|disc|nett?|vat|btw|mwst|tva|iva|rm|ust|ht|ttc)\b",
    re.I,
)


def is_column_header(line: str) -> bool:
    """A row of table column titles ("Qty Description Price Total"), no amounts in it."""
    return len(COLUMN_TITLE.findall(line)) >= 3 and not re.search(r"\d[.,]\d{2}\b", line)


# Dates: the document's own date, and dates that are something else.
ISSUE_DATE_LABEL = re.compile(
    r"invoice\s*date|date\s*of\s*(?:issue|invoice)|issue\s*date|issued(?:\s*on)?|"
    r"billing\s*date|bill\s*date|receipt\s*date|document\s*date|tax\s*point|"
    r"rechnungsdatum|belegdatum|ausstellungsdatum|datum\s*der\s*rechnung|"
    r"date\s*de\s*(?:la\s*)?facture|date\s*d['’]?[ée]mission|factur[ée]e?\s*le|"
    r"fecha\s*(?:de\s*)?(?:la\s*)?(?:factura|emisi[óo]n|expedici[óo]n)|"
    r"factuurdatum|datum\s*factuur|"
    r"data\s*(?:della\s*)?(?:fattura|emissione|documento)",
    re.I,
)
DATE_LABEL = re.compile(
    r"\bdate\b|\bdated\b|\bdatum\b|\btarikh\b|\bfecha\b|\bdata\b|\bdat\b|\bdt\b|\bdate\s*:", re.I
)
OTHER_DATE_LABEL = re.compile(
    r"due|payable\s*(?:by|on|until)|pay\s*by|f[äa]llig|zahlbar\s*bis|zahlungsziel|"
    r"[ée]ch[ée]ance|payable\s*avant|[àa]\s*payer\s*avant|vencimiento|vence|"
    r"vervaldatum|uiterlijk|te\s*betalen\s*voor|scadenza|"
    r"order(?:ed)?\s*(?:date|on)|date\s*of\s*order|order\s*placed|bestell(?:datum|t\s*am)|"
    r"auftragsdatum|date\s*de\s*commande|command[ée]\s*le|fecha\s*(?:de\s*)?pedido|"
    r"orderdatum|besteldatum|data\s*(?:dell['’]?)?ordine|"
    r"deliver(?:y|ed)|ship(?:ping|ped)?\s*date|dispatch|liefer(?:datum|ung|zeitraum|tag)|"
    r"leistungs(?:datum|zeitraum)|livraison|livr[ée]\s*le|entrega|leverdatum|levering|"
    r"consegna|spedizione|"
    r"period|billing\s*cycle|zeitraum|p[ée]riode|periodo|"
    r"service\s*(?:date|from|period)|from\s*\d|until|bis\b|\bdu\b.*\bau\b|desde|hasta|"
    r"valid|g[üu]ltig|expir|exp\b|birth|geburt|naissance|nacimiento|"
    r"start\s*date|end\s*date|printed|gedruckt|imprim[ée]",
    re.I,
)

# Invoice numbers, and numbers that are something else.
_NO = r"\s*(?:number|numbers|num\.?|no\.?|nr\.?|n\.?\s?[°ºo]\.?|n\.(?!\w)|#|id|ref\.?)"
INVOICE_NUMBER_LABEL = re.compile(
    r"invoice" + _NO + r"|inv\.?\s*(?:no\.?|#|nr)|invoice\s*:|bill" + _NO + r"|"
    r"rechnungs?[\s-]*(?:nummer|nr\.?|no\.?)|rechnung" + _NO + r"|beleg[\s-]*(?:nummer|nr\.?)|"
    r"num[ée]ro\s*(?:de\s*)?(?:la\s*)?facture|n\.?\s?[°ºo]\.?\s*(?:de\s*)?facture|facture"
    + _NO
    + r"|"
    r"n[úu]mero\s*(?:de\s*)?(?:la\s*)?factura|n\.?\s?[°ºo]\.?\s*(?:de\s*)?factura|factura"
    + _NO
    + r"|"
    r"factuur[\s-]*(?:nummer|nr\.?|no\.?)|factuurnr|"
    r"numero\s*(?:della\s*)?fattura|n(?:[°ºo]|\.)\s*(?:della\s*)?fattura|fattura" + _NO + r"|"
    r"r[ée]f(?:[ée]rence)?\.?\s*(?:de\s*(?:la\s*)?)?facture|invoice\s*ref(?:erence)?\.?|"
    r"num[ée]ro\s*(?:de\s*|del\s*)?documento?|document" + _NO + r"|doc" + _NO + r"|"
    # Abbreviations: "Rg.-Nr.", "Re.-Nr." (Rechnung), "Fra. nº" (factura), "Fact. n°",
    # "Fatt. n." (fattura).
    r"\b(?:rg|re)\.?[\s-]*nr\.?|\b(?:fra|fact|fatt|fakt)\.\s*" + _NO,
    re.I,
)
# A bare number label at the start of a segment ("Nr.: RE-1001", "No. 2024-17", "# 1042"):
# near an invoice title it is the invoice number, elsewhere often something else.
NUMBER_LABEL = re.compile(
    r"^\W*(?:no\.?|nr\.?|n\.?\s?[°ºo]\.?|number|nummer|num[ée]ro|n[úu]mero|#)(?=[\s:.#]|$)", re.I
)
# The title word alone ("INVOICE 2024-001", "Facture 2022089083", "Rechnung RE-1001").
INVOICE_TITLE = re.compile(
    r"^\W*(?:tax\s*)?(?:invoice|rechnung|facture|factura|factuur|fattura)\b", re.I
)
OTHER_NUMBER_LABEL = re.compile(
    r"customer|client|account|kunden|konto|klant|cliente|debiteur|"
    r"order|bestell|auftrag|commande|pedido|bestelling|ordine|\bpo\b|purchase|"
    r"vat|tax|gst|ust|mwst|btw|tva|iva|siret|siren|kvk|reg|steuer|cif|nif|partita|"
    r"iban|bic|swift|phone|tel|fax|mobile|contract|vertrag|contrat|contrato|"
    r"reference|referenz|r[ée]f[ée]rence|referencia|referentie|riferimento|"
    r"delivery|lieferschein|livraison|albar[áa]n|pakbon|\bddt\b|tracking|"
    r"member|mitglied|terminal|cashier|table|tisch|page|seite",
    re.I,
)

# What marks the buyer's block on an invoice: the issuer is never in it.
BUYER_LABEL = re.compile(
    r"bill(?:ed)?\s*to|invoice\s*to|invoiced\s*to|sold\s*to|ship(?:ped)?\s*to|deliver\s*to|"
    r"customer(?:\s*(?:name|address))?\s*:|client\s*:|billing\s*address|shipping\s*address|"
    r"rechnungs(?:adresse|empf[äa]nger|anschrift)|lieferadresse|lieferanschrift|"
    r"empf[äa]nger|kunde\s*:|an\s*:|"
    r"factur(?:[ée]e?|er)\s*[àa]|adresse\s*de\s*(?:facturation|livraison)|destinataire|"
    r"client\s*:|"
    r"factura(?:r|do)?\s*a\b|facturar\s*a|cliente\s*:|destinatario|direcci[óo]n\s*de\s*"
    r"(?:facturaci[óo]n|env[íi]o)|"
    r"factuuradres|afleveradres|klant\s*:|geadresseerde|"
    r"fatturat[oa]\s*a|intestat[oa]\s*a|spett(?:\.|abile)|indirizzo\s*di\s*(?:fatturazione|"
    r"spedizione)",
    re.I,
)
# What marks the issuer: tax and company registrations, bank details, the legal footer.
ISSUER_MARKER = re.compile(
    r"\biban\b|\bbic\b|swift|vat\s*(?:reg|id|no)|tax\s*id|\bgst\s*(?:id|reg|no)|"
    r"ust[\s.-]*id|steuer[\s-]*nr|steuernummer|handelsregister|\bhrb?\b|amtsgericht|"
    r"gesch[äa]ftsf[üu]hrer|siret|siren|\brcs\b|capital\s*(?:social|de)|tva\s*intra|"
    r"\bcif\b|\bnif\b|registro\s*mercantil|\bkvk\b|btw[\s-]*(?:nr|nummer|id)|"
    r"partita\s*iva|p\.\s*iva|codice\s*fiscale|company\s*(?:no|reg)|registered\s*(?:office|in)|"
    r"reg(?:istration)?\s*no|\bco\.?\s*reg|\bssm\b|account\s*(?:holder|name)|kontoinhaber|"
    r"titulaire|beneficiar|payee",
    re.I,
)
