"""How invoices and till slips word things, per language, written from the documents'
own conventions — not from the parser's patterns.

These are the variants one meets on real invoices: abbreviations of the number label
("Rg.-Nr.", "Fact. n°"), the words for what is to be paid ("Please pay", "Te voldoen",
"Endsumme"), the delivery address beside the billing one, the cash rounding of a total to
five cents and the tendered / change rows of a cash sale. Some of them the parser does not
know; ``tests/extraction/test_synthetic_vocabulary.py`` checks that the generator keeps
words the parser's label patterns miss, so the generated invoices measure the parser rather
than mirror it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Conventions:
    number: tuple[str, ...]
    date: tuple[str, ...]
    payable: tuple[str, ...]  # the amount to pay, after any rounding
    ship_to: tuple[str, ...]  # a delivery address block beside the billing one
    rounding: tuple[str, ...]
    tendered: tuple[str, ...]
    change: tuple[str, ...]


CONVENTIONS: dict[str, Conventions] = {
    "en": Conventions(
        number=("Inv No", "Bill No.", "Invoice Ref.", "Tax Invoice No."),
        date=("Date Issued", "Tax Point", "Billing Date"),
        payable=("Please pay", "Amount Payable", "Total Payable", "Pay this amount"),
        ship_to=("Ship to", "Deliver to", "Delivery address"),
        rounding=("Rounding", "Cash rounding", "Round off"),
        tendered=("Cash tendered", "Cash", "Amount tendered"),
        change=("Change", "Change given"),
    ),
    "en-us": Conventions(
        number=("Inv #", "Invoice No", "Bill #"),
        date=("Date Issued", "Invoice Date", "Billing Date"),
        payable=("Please pay", "Amount Due", "Pay this amount", "Total Due"),
        ship_to=("Ship to", "Ship To:", "Deliver to"),
        rounding=("Rounding", "Round off"),
        tendered=("Cash tendered", "Cash"),
        change=("Change", "Change due"),
    ),
    "de": Conventions(
        number=("Rg.-Nr.", "Re.-Nr.", "Belegnummer", "Rechnungs-Nr."),
        date=("Rg.-Datum", "Datum der Rechnung", "Belegdatum"),
        payable=("Endsumme", "Zahlbetrag", "Zu zahlender Betrag", "Rechnungsbetrag"),
        ship_to=("Lieferanschrift", "Lieferadresse", "Warenempfänger"),
        rounding=("Rundung", "Rundungsdifferenz"),
        tendered=("Gegeben", "Bar", "Bar gegeben"),
        change=("Rückgeld", "Zurück"),
    ),
    "fr": Conventions(
        number=("Fact. n°", "N° facture", "Réf. facture"),
        date=("Émise le", "Date d'émission", "Le"),
        payable=("Net à payer", "À régler", "Montant à régler", "Total à régler"),
        ship_to=("Adresse de livraison", "Livrer à", "Livraison"),
        rounding=("Arrondi", "Arrondi espèces"),
        tendered=("Espèces", "Reçu", "Montant reçu"),
        change=("Rendu", "Monnaie rendue"),
    ),
    "es": Conventions(
        number=("Fra. nº", "Nº factura", "Número"),
        date=("Fecha de expedición", "Fecha emisión", "Emitida el"),
        payable=("Total a abonar", "Importe a pagar", "A pagar", "Líquido a pagar"),
        ship_to=("Dirección de envío", "Enviar a", "Entrega en"),
        rounding=("Redondeo",),
        tendered=("Efectivo", "Entregado", "Recibido"),
        change=("Cambio", "Vuelto"),
    ),
    "nl": Conventions(
        number=("Factuurnr.", "Nota nr.", "Fact.nr."),
        date=("Factuurdatum", "Datum", "Datum nota"),
        payable=("Te voldoen", "Totaal te betalen", "Te betalen bedrag", "Openstaand"),
        ship_to=("Afleveradres", "Leveradres", "Bezorgadres"),
        rounding=("Afronding", "Afrondingsverschil"),
        tendered=("Contant", "Ontvangen", "Betaald contant"),
        change=("Wisselgeld", "Terug"),
    ),
    "it": Conventions(
        number=("Fatt. n.", "Documento n.", "Nr. fattura"),
        date=("Data doc.", "Del", "Data emissione"),
        payable=("Netto a pagare", "Totale da corrispondere", "Da pagare", "Totale a pagare"),
        ship_to=("Destinazione merce", "Luogo di consegna", "Consegnare a"),
        rounding=("Arrotondamento", "Abbuono"),
        tendered=("Contanti", "Pagato", "Ricevuto"),
        change=("Resto", "Resto dovuto"),
    ),
}
