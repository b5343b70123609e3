"""Secondary fields that add up (issue 40, item 2), on constructed documents.

Tax per rate read by what the rate says, a tip, no-tax notices, line items and their checks:
when the amounts of a document do not agree, the value read is kept and flagged with a
sentence, never changed into agreement. Names, numbers and layouts are made up here.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from engines.extraction import ParseHints, parse_fields
from engines.extraction.review import review_reason

TODAY = ParseHints(today=date(2025, 6, 1))
D = Decimal


def test_the_rate_decides_which_amount_of_a_tax_row_is_the_tax() -> None:
    # The net 35.00 printed first on the GST row was taken as the tax.
    text = "\n".join(
        [
            "KEDAI ALAT SDN BHD",
            "Date: 12-03-2019",
            "HAMMER 2 x 17.50 35.00",
            "TOTAL INCL GST 37.10",
            "GST 6% 35.00 2.10",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert fields.tax_amount == D("2.10")
    assert fields.subtotal == D("35.00")
    assert [(line.rate, line.net, line.tax) for line in fields.tax_lines] == [
        (D(6), D("35.00"), D("2.10"))
    ]
    assert fields.evidence["tax_amount"].warning is None


def test_a_german_tax_table_gives_one_line_per_rate() -> None:
    text = "\n".join(
        [
            "Frischmarkt Paderborn",
            "Milch 1,19 A",
            "Rotwein 5,99 B",
            "SUMME EUR 7,18",
            "MWST Netto MWST-BETRAG BRUTTO",
            "A 7,00% 1,11 0,08 1,19",
            "B 19,00% 5,03 0,96 5,99",
            "Datum 02.03.2020",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert [(line.rate, line.net, line.tax) for line in fields.tax_lines] == [
        (D(7), D("1.11"), D("0.08")),
        (D(19), D("5.03"), D("0.96")),
    ]
    assert fields.tax_amount == D("1.04")
    assert fields.subtotal == D("6.14")


def test_a_rate_in_an_item_description_is_no_tax_line() -> None:
    text = "Acme Ltd\nDate: 05/03/2024\nDesign work (20%) 5 760.11 3,800.55\nTotal 3,800.55"
    assert parse_fields(text, TODAY).tax_lines == ()


def test_subtotal_and_tax_that_do_not_make_the_total_are_flagged_not_changed() -> None:
    text = "Cafe Nord\nDate: 05.03.2024\nSubtotal 10.00\nVAT 20% 2.00\nTotal 13.00"
    fields = parse_fields(text, TODAY)
    assert (fields.amount, fields.subtotal, fields.tax_amount) == (
        D("13.00"),
        D("10.00"),
        D("2.00"),
    )
    warning = fields.evidence["subtotal"].warning
    assert warning == "subtotal 10.00 + tax 2.00 = 12.00, but the total is 13.00"
    assert fields.evidence["subtotal"].confidence < 0.8
    reason = review_reason(fields)
    assert reason is not None and warning in reason


def test_parts_that_add_up_are_confident() -> None:
    text = "Cafe Nord\nDate: 05.03.2024\nSubtotal 10.00\nVAT 20% 2.00\nTotal 12.00"
    fields = parse_fields(text, TODAY)
    assert fields.evidence["subtotal"].confidence > 0.95
    assert fields.evidence["subtotal"].warning is None


def test_a_tip_is_read_and_counted_in_the_parts() -> None:
    text = "Trattoria Sole\nDate: 05/03/2024\nSubtotal 40.00\nTax 3.20\nTip 8.00\nTotal 51.20"
    fields = parse_fields(text, TODAY)
    assert fields.tip_amount == D("8.00")
    assert not any(found.warning for found in fields.evidence.values())


def test_a_no_tax_notice_makes_the_tax_zero() -> None:
    for notice in (
        "Gemäß § 19 UStG wird keine Umsatzsteuer berechnet.",
        "TVA non applicable, art. 293 B du CGI",
        "No VAT charged: not VAT registered",
        "Reverse charge: the customer accounts for the VAT",
    ):
        text = f"Studio Klein\nRechnungsdatum: 05.03.2024\n{notice}\nGesamtbetrag 500,00 EUR"
        fields = parse_fields(text, TODAY)
        assert (fields.tax_amount, fields.subtotal) == (D("0.00"), D("500.00")), notice


def test_lines_that_do_not_add_up_are_flagged() -> None:
    text = "\n".join(
        ["Baumarkt West", "Datum 05.03.2024", "Schrauben 3,50", "Dübel 2,10", "SUMME 7,60"]
    )
    fields = parse_fields(text, TODAY)
    assert len(fields.line_items) == 2
    assert fields.evidence["line_items"].warning == (
        "the 2 lines add up to 5.60, not the total 7.60"
    )


def test_opening_hours_are_no_line_item() -> None:
    # A till header's opening hours became a line item of -20.00.
    text = "\n".join(
        [
            "DISCOUNTER",
            "MO.-SA. 9.00 Uhr - 20.00 Uhr",
            "BIO HONIG 3,29 C",
            "KIWI 1,49 C",
            "ZU ZAHLEN 4,78",
            "Datum 02.03.2020",
        ]
    )
    items = parse_fields(text, TODAY).line_items
    assert [item.description for item in items] == ["BIO HONIG", "KIWI"]


def test_a_row_of_figures_takes_its_description_from_the_row_above() -> None:
    text = "\n".join(
        [
            "Möbelhaus Nord",
            "LAMPE GU10 2er",
            "2,000 3,99 7,98",
            "Tisch 20,00",
            "Summe 27,98",
            "Anzahl Artikel: 3",
            "Datum 08.10.2016",
        ]
    )
    fields = parse_fields(text, TODAY)
    lamp, table = fields.line_items
    assert lamp.description.startswith("LAMPE GU10")
    assert (lamp.quantity, lamp.unit_price, lamp.amount) == (D(2), D("3.99"), D("7.98"))
    assert table.amount == D("20.00")
    # The till counts 3 articles: 2 lamps and a table.
    assert "line_items" not in fields.evidence or fields.evidence["line_items"].warning is None


def test_a_printed_article_count_that_disagrees_is_flagged() -> None:
    text = "Markt\nDatum 08.10.2016\nBrot 2,00\nKäse 3,00\nSumme 5,00\nAnzahl Artikel: 3"
    warning = parse_fields(text, TODAY).evidence["line_items"].warning
    assert warning == "the receipt counts 3 articles; 2 lines were read"


def test_a_note_of_what_a_price_includes_is_not_a_line() -> None:
    text = "\n".join(
        [
            "Elektro Shop B.V.",
            "Factuurdatum: 19-04-2014",
            "Tablet 16 GB 399,00",
            "Incl. Thuiskopieheffing 3,50",
            "Hoes 69,99",
            "Totaal 468,99",
        ]
    )
    assert [item.description for item in parse_fields(text, TODAY).line_items] == [
        "Tablet 16 GB",
        "Hoes",
    ]


def test_a_space_grouped_line_amount_is_read_so_the_lines_add_up() -> None:
    text = "\n".join(
        [
            "Rheintal Medien GmbH",
            "Rechnungsdatum: 17.07.2024",
            "Reinigung 1 457,34 457,34",
            "Bürostuhl 12 605,58 7 266,96",
            "Zwischensumme 7 724,30",
            "MwSt. 19% 1 467,62",
            "Gesamt brutto 9 191,92 EUR",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert [item.amount for item in fields.line_items] == [D("457.34"), D("7266.96")]
    assert fields.tax_amount == D("1467.62")
    assert not any(found.warning for found in fields.evidence.values())


def test_a_till_slip_titled_tax_invoice_its_rows_and_its_numbers() -> None:
    """A Malaysian hardware till slip (made up): the product code under "TAX INVOICE" is no
    invoice or receipt number; the total row naming the GST rate is no tax line; a measure
    in an article's name ("3X1.25MM") is no price; each article's quantity is the one on its
    row of figures, so the quantities make the printed count."""
    text = "\n".join(
        [
            "KEDAI PERKAKAS (M) SDN BHD",
            "(GST ID No :000123456789)",
            "-TAX INVOICE-",
            "SCOURING PAD 1018-4 4S",
            "WA03 - 24/240",
            "9555221301081 4 X 2.80 11.20",
            "TRAILING SOCKET 3X1.25MM CABLE 2 *S",
            "WA27 -20",
            "9553114461966 1 X 22.90 22.90",
            "Item(s) : 2 Qty(s) : 5",
            "Total Incl. GST@6% RM 34.10",
            "CASH RM 50.00",
            "CHANGE RM 15.90",
            "GST Summary Amt(RM) Tax(RM)",
            "GST S@6% 32.17 1.93",
            "14-03-18 21:49 SH03 R000418193",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert fields.invoice_id is None and fields.receipt_id != "1018-4"
    assert fields.merchant_tax_id == "000123456789"
    assert [(line.rate, line.net, line.tax) for line in fields.tax_lines] == [
        (D(6), D("32.17"), D("1.93"))
    ]
    assert (fields.amount, fields.subtotal, fields.tax_amount) == (
        D("34.10"),
        D("32.17"),
        D("1.93"),
    )
    assert [
        (item.description.split()[0], item.quantity, item.amount) for item in fields.line_items
    ] == [
        ("SCOURING", D(4), D("11.20")),
        ("TRAILING", D(1), D("22.90")),
    ]
    assert not any(found.warning for found in fields.evidence.values()), fields.evidence
