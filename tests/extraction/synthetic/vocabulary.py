"""What invoices say, per language: titles, labels, legal forms, places and goods.

Each list holds the variants real invoices use, so generated documents vary the way real
ones do (several invoice-number labels, due and order dates beside the invoice date, the
buyer's block under its own label or in a letter's address window).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    code: str
    country: str  # ISO 3166 of the issuer
    currency: str
    decimal_comma: bool
    months: tuple[str, ...]
    title: tuple[str, ...]
    number_label: tuple[str, ...]
    date_label: tuple[str, ...]
    due_label: tuple[str, ...]
    order_date_label: tuple[str, ...]
    delivery_label: tuple[str, ...]
    period_label: tuple[str, ...]
    customer_no_label: tuple[str, ...]
    order_no_label: tuple[str, ...]
    buyer_label: tuple[str, ...]
    subtotal_label: tuple[str, ...]
    tax_name: str
    total_label: tuple[str, ...]
    columns: tuple[str, str, str, str]  # description, quantity, unit price, amount
    vat_id_label: tuple[str, ...]
    bank_label: str
    holder_label: tuple[str, ...]
    phone_label: str
    legal_forms: tuple[str, ...]
    streets: tuple[str, ...]
    cities: tuple[tuple[str, str], ...]  # (postcode format, city)
    goods: tuple[str, ...]
    words: tuple[str, ...]  # for made-up company names
    trades: tuple[str, ...]  # what the company does, as part of its name
    terms: tuple[str, ...]
    thanks: tuple[str, ...]
    tax_rates: tuple[int, ...]


# fmt: off
ENGLISH = Language(
    code="en",
    country="GB",
    currency="GBP",
    decimal_comma=False,
    months=(
        "January", "February", "March", "April", "May", "June", "July", "August", "September",
        "October", "November", "December",
    ),
    title=("INVOICE", "Invoice", "TAX INVOICE", "Sales Invoice"),
    number_label=(
        "Invoice No.", "Invoice Number", "Invoice #", "Invoice no:", "Inv. No.", "Invoice ID",
        "Document No.",
    ),
    date_label=("Invoice Date", "Date", "Date of issue", "Issue date", "Invoice date:", "Dated"),
    due_label=("Due Date", "Payment due", "Due by", "Pay by"),
    order_date_label=("Order Date", "Date ordered", "Order placed"),
    delivery_label=("Delivery Date", "Ship date", "Dispatched"),
    period_label=("Billing period", "Service period", "Period"),
    customer_no_label=("Customer No.", "Account No.", "Customer ID", "Client ref."),
    order_no_label=("Order No.", "PO Number", "Purchase Order", "Your ref."),
    buyer_label=("Bill to", "Billed to", "Invoice to", "Sold to", "Customer:", "BILL TO"),
    subtotal_label=("Subtotal", "Net amount", "Total excl. VAT", "Sub-total"),
    tax_name="VAT",
    total_label=(
        "Total", "Total due", "Amount due", "Grand Total", "Balance due", "Total (incl. VAT)",
        "TOTAL",
    ),
    columns=("Description", "Qty", "Unit price", "Amount"),
    vat_id_label=("VAT Reg. No.", "VAT No.", "VAT number", "Company No."),
    bank_label="Bank details",
    holder_label=("Account name:", "Account holder:", "Payee:"),
    phone_label="Tel.",
    legal_forms=("Ltd", "Limited", "LLP", "PLC", "Ltd."),
    streets=(
        "High Street", "Station Road", "Church Lane", "Mill Road", "King Street", "Victoria Road",
        "Park Avenue", "Market Place",
    ),
    cities=(
        ("SW1A 1AA", "London"), ("M1 1AE", "Manchester"), ("B1 1AA", "Birmingham"),
        ("LS1 4DY", "Leeds"), ("BS1 5TR", "Bristol"), ("EH1 1YZ", "Edinburgh"),
    ),
    goods=(
        "Consulting services", "Website maintenance", "Office chairs", "Printer toner",
        "Cloud hosting (monthly)", "Software licence", "Delivery charge", "Training day",
        "Catering", "Cleaning service", "Design work", "Laptop stand", "Cable set",
    ),
    words=(
        "Northwind", "Bluebell", "Kestrel", "Harbour", "Oakfield", "Redstone", "Silverline",
        "Brightwater", "Fenwick", "Ashdown", "Cobalt", "Thornbury", "Marlow", "Pinecrest",
    ),
    trades=(
        "Consulting", "Design", "Supplies", "Systems", "Services", "Print", "Logistics", "Studio",
    ),
    terms=(
        "Payment within 30 days.", "Please pay by bank transfer within 14 days.", "Terms: net 30.",
    ),
    thanks=("Thank you for your business.", "Thank you for your order!"),
    tax_rates=(20, 5, 0),
)

GERMAN = Language(
    code="de",
    country="DE",
    currency="EUR",
    decimal_comma=True,
    months=(
        "Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September",
        "Oktober", "November", "Dezember",
    ),
    title=("Rechnung", "RECHNUNG", "Rechnung Nr.", "Ihre Rechnung"),
    number_label=(
        "Rechnungsnummer", "Rechnungs-Nr.", "Rechnung Nr.", "Rechnungsnr.", "Beleg-Nr.", "Nr.",
    ),
    date_label=("Rechnungsdatum", "Datum", "Belegdatum", "Ausstellungsdatum"),
    due_label=("Fällig am", "Zahlbar bis", "Fälligkeitsdatum", "Zahlungsziel"),
    order_date_label=("Bestelldatum", "Auftragsdatum", "Bestellt am"),
    delivery_label=("Lieferdatum", "Leistungsdatum", "Liefertag"),
    period_label=("Leistungszeitraum", "Abrechnungszeitraum", "Zeitraum"),
    customer_no_label=("Kundennummer", "Kunden-Nr.", "Kundennr."),
    order_no_label=("Bestellnummer", "Auftragsnummer", "Auftrags-Nr.", "Ihre Bestellung"),
    buyer_label=("Rechnungsadresse", "Rechnungsempfänger", "Kunde:", "Rechnungsanschrift"),
    subtotal_label=("Zwischensumme", "Nettobetrag", "Summe netto", "Gesamt netto"),
    tax_name="MwSt.",
    total_label=(
        "Gesamtbetrag", "Rechnungsbetrag", "Summe", "Gesamtsumme", "Zu zahlen", "Endbetrag",
        "Gesamt brutto",
    ),
    columns=("Bezeichnung", "Menge", "Einzelpreis", "Gesamt"),
    vat_id_label=("USt-IdNr.", "USt-ID", "Steuernummer", "St.-Nr."),
    bank_label="Bankverbindung",
    holder_label=("Kontoinhaber:", "Empfänger:"),
    phone_label="Tel.",
    legal_forms=("GmbH", "GmbH & Co. KG", "AG", "KG", "e.K.", "UG (haftungsbeschränkt)"),
    streets=(
        "Hauptstraße", "Bahnhofstraße", "Gartenweg", "Lindenallee", "Marktplatz", "Schillerstraße",
        "Industriestraße", "Am Hafen",
    ),
    cities=(
        ("10115", "Berlin"), ("80331", "München"), ("20095", "Hamburg"), ("50667", "Köln"),
        ("60311", "Frankfurt am Main"), ("70173", "Stuttgart"), ("04109", "Leipzig"),
    ),
    goods=(
        "Beratungsleistung", "Wartungsvertrag", "Bürostuhl", "Druckerpatrone", "Webhosting",
        "Softwarelizenz", "Versandkosten", "Schulung", "Reinigung", "Montage", "Kabelsatz",
        "Monitorhalterung", "Projektarbeit",
    ),
    words=(
        "Nordlicht", "Bergmann", "Sonnenfeld", "Weber", "Brückner", "Lindhorst", "Falkner",
        "Rheintal", "Eichenhof", "Steinberg", "Hansen", "Albrecht", "Werkraum",
    ),
    trades=(
        "Beratung", "Technik", "Handel", "Systeme", "Druck", "Logistik", "Bürobedarf", "Medien",
    ),
    terms=(
        "Zahlbar innerhalb von 14 Tagen ohne Abzug.",
        "Bitte überweisen Sie den Betrag innerhalb von 30 Tagen.", "Zahlungsziel: 14 Tage netto.",
    ),
    thanks=("Vielen Dank für Ihren Auftrag.", "Wir danken für Ihre Bestellung."),
    tax_rates=(19, 7),
)

FRENCH = Language(
    code="fr",
    country="FR",
    currency="EUR",
    decimal_comma=True,
    months=(
        "janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre",
        "octobre", "novembre", "décembre",
    ),
    title=("FACTURE", "Facture", "Facture n°"),
    number_label=("Facture n°", "N° de facture", "Numéro de facture", "Facture N°", "Réf. facture"),
    date_label=("Date de facture", "Date", "Date d'émission", "Facturée le", "Date :"),
    due_label=("Date d'échéance", "Échéance", "À payer avant le", "Payable avant le"),
    order_date_label=("Date de commande", "Commandé le"),
    delivery_label=("Date de livraison", "Livré le"),
    period_label=("Période", "Période de facturation"),
    customer_no_label=("N° client", "Code client", "Référence client"),
    order_no_label=("N° de commande", "Bon de commande", "Votre référence"),
    buyer_label=("Adresse de facturation", "Facturé à", "Client :", "Destinataire"),
    subtotal_label=("Total HT", "Montant HT", "Sous-total"),
    tax_name="TVA",
    total_label=("Total TTC", "Montant TTC", "Net à payer", "Montant total", "Total à payer"),
    columns=("Désignation", "Qté", "Prix unitaire HT", "Montant HT"),
    vat_id_label=("TVA intracom.", "N° TVA", "SIRET", "RCS"),
    bank_label="Coordonnées bancaires",
    holder_label=("Titulaire du compte :", "Bénéficiaire :"),
    phone_label="Tél.",
    legal_forms=("SARL", "SAS", "SA", "EURL", "SASU"),
    streets=(
        "rue de la République", "avenue Jean Jaurès", "boulevard Voltaire", "rue Victor Hugo",
        "place de la Gare", "rue des Lilas", "chemin des Vignes",
    ),
    cities=(
        ("75011", "Paris"), ("69002", "Lyon"), ("13001", "Marseille"), ("31000", "Toulouse"),
        ("33000", "Bordeaux"), ("44000", "Nantes"), ("67000", "Strasbourg"),
    ),
    goods=(
        "Prestation de conseil", "Maintenance du site", "Chaise de bureau", "Cartouche d'encre",
        "Hébergement web", "Licence logicielle", "Frais de port", "Formation", "Nettoyage",
        "Installation", "Traduction", "Impression de brochures",
    ),
    words=(
        "Lumière", "Duval", "Montclair", "Beaulieu", "Rivière", "Chêne", "Marchand", "Soleil",
        "Lefèvre", "Vallon", "Horizon", "Fontaine",
    ),
    trades=("Conseil", "Services", "Technologies", "Distribution", "Bureautique", "Imprimerie"),
    terms=(
        "Paiement à 30 jours.", "Règlement par virement sous 30 jours.",
        "Pénalités de retard : trois fois le taux d'intérêt légal.",
    ),
    thanks=("Merci de votre confiance.", "Merci pour votre commande."),
    tax_rates=(20, 10, 5),
)

SPANISH = Language(
    code="es",
    country="ES",
    currency="EUR",
    decimal_comma=True,
    months=(
        "enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre",
        "octubre", "noviembre", "diciembre",
    ),
    title=("FACTURA", "Factura", "Factura n.º"),
    number_label=("Factura n.º", "Nº de factura", "Número de factura", "Factura Nº", "N.º factura"),
    date_label=("Fecha de factura", "Fecha", "Fecha de emisión", "Fecha factura"),
    due_label=("Fecha de vencimiento", "Vencimiento", "Vence"),
    order_date_label=("Fecha de pedido", "Pedido el"),
    delivery_label=("Fecha de entrega", "Entrega"),
    period_label=("Periodo", "Periodo de facturación"),
    customer_no_label=("Nº cliente", "Código cliente"),
    order_no_label=("Nº pedido", "Pedido nº", "Su referencia"),
    buyer_label=("Factura a", "Facturar a", "Cliente:", "Datos del cliente", "Destinatario"),
    subtotal_label=("Base imponible", "Subtotal", "Importe neto"),
    tax_name="IVA",
    total_label=("Total", "Total factura", "Importe total", "Total a pagar", "TOTAL"),
    columns=("Descripción", "Cant.", "Precio unitario", "Importe"),
    vat_id_label=("CIF", "NIF", "N.I.F."),
    bank_label="Datos bancarios",
    holder_label=("Titular de la cuenta:", "Beneficiario:"),
    phone_label="Tel.",
    legal_forms=("S.L.", "S.A.", "S.L.U.", "S.Coop."),
    streets=(
        "Calle Mayor", "Avenida de la Constitución", "Calle del Sol", "Paseo de Gracia",
        "Plaza de España", "Calle Alcalá", "Avenida Diagonal",
    ),
    cities=(
        ("28013", "Madrid"), ("08001", "Barcelona"), ("46001", "Valencia"), ("41001", "Sevilla"),
        ("48001", "Bilbao"), ("29001", "Málaga"),
    ),
    goods=(
        "Servicios de consultoría", "Mantenimiento web", "Silla de oficina", "Cartucho de tinta",
        "Alojamiento web", "Licencia de software", "Gastos de envío", "Formación", "Limpieza",
        "Instalación", "Diseño gráfico",
    ),
    words=(
        "Solana", "Ibérica", "Montes", "Vega", "Río Claro", "Olivar", "Mirador", "Castell", "Alba",
        "Sierra", "Horizonte", "Luna",
    ),
    trades=("Consultores", "Servicios", "Tecnología", "Distribuciones", "Suministros", "Gráficas"),
    terms=("Pago a 30 días.", "Forma de pago: transferencia bancaria."),
    thanks=("Gracias por su confianza.", "Gracias por su pedido."),
    tax_rates=(21, 10, 4),
)

DUTCH = Language(
    code="nl",
    country="NL",
    currency="EUR",
    decimal_comma=True,
    months=(
        "januari", "februari", "maart", "april", "mei", "juni", "juli", "augustus", "september",
        "oktober", "november", "december",
    ),
    title=("FACTUUR", "Factuur"),
    number_label=("Factuurnummer", "Factuurnr.", "Factuur nr.", "Nummer"),
    date_label=("Factuurdatum", "Datum", "Datum factuur"),
    due_label=("Vervaldatum", "Te betalen voor", "Uiterlijk betalen"),
    order_date_label=("Orderdatum", "Besteldatum"),
    delivery_label=("Leverdatum", "Afleverdatum"),
    period_label=("Periode", "Factuurperiode"),
    customer_no_label=("Klantnummer", "Klantnr."),
    order_no_label=("Ordernummer", "Bestelnummer", "Uw referentie"),
    buyer_label=("Factuuradres", "Aan:", "Klant:", "Afleveradres"),
    subtotal_label=("Subtotaal", "Totaal excl. btw", "Exclusief btw"),
    tax_name="btw",
    total_label=("Totaal", "Te betalen", "Totaal incl. btw", "Totaalbedrag"),
    columns=("Omschrijving", "Aantal", "Prijs", "Bedrag"),
    vat_id_label=("Btw-nummer", "BTW-nr.", "KvK"),
    bank_label="Bankgegevens",
    holder_label=("Ten name van:", "Rekeninghouder:"),
    phone_label="Tel.",
    legal_forms=("B.V.", "BV", "N.V.", "V.O.F."),
    streets=(
        "Kerkstraat", "Dorpsstraat", "Stationsweg", "Molenlaan", "Prinsengracht", "Marktplein",
        "Havenkade",
    ),
    cities=(
        ("1012 AB", "Amsterdam"), ("3011 AD", "Rotterdam"), ("3511 LJ", "Utrecht"),
        ("2511 CV", "Den Haag"), ("5611 AZ", "Eindhoven"), ("9711 LV", "Groningen"),
    ),
    goods=(
        "Advieswerkzaamheden", "Onderhoud website", "Bureaustoel", "Inktcartridge", "Webhosting",
        "Softwarelicentie", "Verzendkosten", "Training", "Schoonmaak", "Installatie",
    ),
    words=(
        "Zonneveld", "Van Dijk", "Polder", "Windmolen", "Dekker", "Tulp", "Hollands", "Bakker",
        "Lindeboom", "Kanaal", "Duin", "Meerzicht",
    ),
    trades=("Advies", "Techniek", "Handel", "Diensten", "Kantoorartikelen", "Drukwerk"),
    terms=("Betaling binnen 14 dagen.", "Gelieve binnen 30 dagen te betalen."),
    thanks=("Bedankt voor uw bestelling.", "Hartelijk dank voor uw opdracht."),
    tax_rates=(21, 9),
)

ITALIAN = Language(
    code="it",
    country="IT",
    currency="EUR",
    decimal_comma=True,
    months=(
        "gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto",
        "settembre", "ottobre", "novembre", "dicembre",
    ),
    title=("FATTURA", "Fattura", "Fattura n."),
    number_label=("Fattura n.", "Numero fattura", "N. fattura", "Fattura N°", "Numero documento"),
    date_label=("Data fattura", "Data", "Data documento", "Data emissione"),
    due_label=("Scadenza", "Data scadenza", "Pagamento entro"),
    order_date_label=("Data ordine", "Ordinato il"),
    delivery_label=("Data consegna", "Data spedizione"),
    period_label=("Periodo", "Periodo di fatturazione"),
    customer_no_label=("Codice cliente", "Cliente n."),
    order_no_label=("Ordine n.", "Rif. ordine", "Vs. riferimento"),
    buyer_label=("Spett.le", "Destinatario", "Intestato a", "Fatturato a", "Cliente:"),
    subtotal_label=("Imponibile", "Totale imponibile", "Subtotale"),
    tax_name="IVA",
    total_label=(
        "Totale", "Totale fattura", "Totale documento", "Importo totale", "Totale da pagare",
    ),
    columns=("Descrizione", "Q.tà", "Prezzo unitario", "Importo"),
    vat_id_label=("P. IVA", "Partita IVA", "Codice fiscale"),
    bank_label="Coordinate bancarie",
    holder_label=("Intestatario:", "Beneficiario:"),
    phone_label="Tel.",
    legal_forms=("S.r.l.", "S.p.A.", "S.n.c.", "S.a.s."),
    streets=(
        "Via Roma", "Via Garibaldi", "Corso Italia", "Piazza del Duomo", "Viale dei Mille",
        "Via Dante", "Via Verdi",
    ),
    cities=(
        ("00184", "Roma"), ("20121", "Milano"), ("10121", "Torino"), ("50122", "Firenze"),
        ("40121", "Bologna"), ("80133", "Napoli"),
    ),
    goods=(
        "Consulenza", "Manutenzione sito web", "Sedia da ufficio", "Cartuccia toner",
        "Hosting web", "Licenza software", "Spese di spedizione", "Formazione", "Pulizia uffici",
        "Installazione",
    ),
    words=(
        "Sole", "Bellavista", "Rossi", "Marino", "Colombo", "Aurora", "Vigneto", "Ferrari",
        "Fontana", "Montebello", "Stella", "Riviera",
    ),
    trades=("Consulenze", "Servizi", "Tecnologie", "Forniture", "Grafica", "Logistica"),
    terms=("Pagamento a 30 giorni data fattura.", "Pagamento tramite bonifico bancario."),
    thanks=("Grazie per la fiducia.", "Grazie per il vostro ordine."),
    tax_rates=(22, 10, 4),
)
# fmt: on

# American English: dollars, month-first dates, states and ZIP codes, sales tax.
AMERICAN = Language(
    **{
        **ENGLISH.__dict__,
        "code": "en-us",
        "country": "US",
        "currency": "USD",
        "legal_forms": ("Inc.", "LLC", "Corp.", "Co."),
        "streets": (
            "Main Street",
            "Oak Avenue",
            "Maple Drive",
            "Broadway",
            "Market Street",
            "Sunset Blvd",
        ),
        "cities": (
            ("NY 10001", "New York"),
            ("CA 94103", "San Francisco"),
            ("IL 60601", "Chicago"),
            ("TX 78701", "Austin"),
            ("WA 98101", "Seattle"),
            ("MA 02108", "Boston"),
        ),
        "subtotal_label": ("Subtotal", "Sub-total", "Net total"),
        "total_label": ("Total", "Total due", "Amount due", "Balance due", "TOTAL", "Grand total"),
        "vat_id_label": ("EIN", "Tax ID"),
        "tax_name": "Sales tax",
        "tax_rates": (8, 6, 0),
    }
)

LANGUAGES = (ENGLISH, AMERICAN, GERMAN, FRENCH, SPANISH, DUTCH, ITALIAN)
FIRST_NAMES = (
    "Anna",
    "Lukas",
    "Marie",
    "Jan",
    "Sofia",
    "Pierre",
    "Lucía",
    "Marco",
    "Emma",
    "Daan",
    "Giulia",
    "Oliver",
    "Clara",
    "Hugo",
    "Elena",
    "Noah",
)
LAST_NAMES = (
    "Schmidt",
    "Martin",
    "García",
    "de Vries",
    "Rossi",
    "Smith",
    "Müller",
    "Dubois",
    "López",
    "Jansen",
    "Bianchi",
    "Taylor",
    "Weber",
    "Moreau",
    "Romero",
    "Visser",
)
