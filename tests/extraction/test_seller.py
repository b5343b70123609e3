"""Both names of the seller and its tax id, on constructed documents (issue 40, item 1).

``merchant`` is the name people know (often the brand heading the receipt);
``merchant_legal_name`` the registered company printed on the document; ``merchant_tax_id``
the seller's VAT, GST or tax number, only where a label names it and never the buyer's.
Names, numbers and layouts are made up here.
"""

from __future__ import annotations

from datetime import date

import pytest

from engines.extraction import ParseHints, parse_fields

TODAY = ParseHints(today=date(2025, 6, 1))


def test_a_franchise_receipt_gives_the_brand_and_the_operating_company() -> None:
    text = "\n".join(
        [
            "PIZZA PALACE",
            "Operated by Golden Crust Foods Sdn Bhd (123456-X)",
            "No. 3, Jalan Bunga, 50450 Kuala Lumpur",
            "GST Reg No: 001234567890",
            "Date: 12/03/2019",
            "Hawaiian Large      1     38.00",
            "TOTAL                     38.00",
        ]
    )
    fields = parse_fields(text, TODAY)
    assert fields.merchant_legal_name is not None
    assert "Golden Crust Foods Sdn Bhd" in fields.merchant_legal_name
    assert fields.merchant_tax_id == "001234567890"
    assert fields.evidence["merchant_tax_id"].text == "GST Reg No: 001234567890"


def test_the_legal_name_is_the_pick_when_it_carries_the_legal_form() -> None:
    text = "Muster Werkzeuge GmbH\nHauptstr. 5, 10115 Berlin\nDatum 05.03.2024\nSumme 12,00 EUR"
    fields = parse_fields(text, TODAY)
    assert fields.merchant == fields.merchant_legal_name == "Muster Werkzeuge GmbH"


def test_no_legal_form_no_legal_name() -> None:
    text = "Joe's Diner\nSan Francisco, CA\nDate: 05/03/2024\nTotal $12.00"
    assert parse_fields(text, TODAY).merchant_legal_name is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("USt-IdNr.: DE 123 456 789", "DE123456789"),
        ("VAT Reg. No. GB123456789", "GB123456789"),
        ("N° TVA intracom. : FR12345678901", "FR12345678901"),
        ("Steuernummer 12/345/67890", "12/345/67890"),
        ("CIF: B12345678", "B12345678"),
        ("BTW-nr. NL123456789B01", "NL123456789B01"),
        ("P. IVA 01234567890", "01234567890"),
        ("EIN 12-3456789", "12-3456789"),
        ("GST ID : 000306020352", "000306020352"),
    ],
)
def test_tax_ids_under_the_labels_of_each_country(line: str, expected: str) -> None:
    text = f"Acme Supplies\n{line}\nDate: 05.03.2024\nTotal 12.00"
    assert parse_fields(text, TODAY).merchant_tax_id == expected


def test_the_value_may_open_the_row_under_its_label() -> None:
    text = "Acme Supplies Ltd\nVAT number:\nGB987654321\nDate: 05/03/2024\nTotal £12.00"
    assert parse_fields(text, TODAY).merchant_tax_id == "GB987654321"


def test_the_buyers_tax_id_is_never_the_sellers() -> None:
    text = "\n".join(
        [
            "Kestrel Print GmbH",
            "Rechnung",
            "Rechnungsdatum: 05.03.2024",
            "Ihre USt-IdNr.: DE111111111",
            "Summe 119,00 EUR",
            "USt-IdNr.: DE222222222",
        ]
    )
    assert parse_fields(text, TODAY).merchant_tax_id == "DE222222222"


def test_a_number_without_a_tax_label_or_a_registration_number_is_not_a_tax_id() -> None:
    for line in (
        "Ref 123456789",
        "Company No. 01234567",
        "SIRET 123 456 789 00012",
        "KvK 12345678",
    ):
        text = f"Acme Supplies\n{line}\nDate: 05.03.2024\nTotal 12.00"
        assert parse_fields(text, TODAY).merchant_tax_id is None, line


def test_a_vat_rate_row_is_not_a_tax_id() -> None:
    text = "Acme Supplies\nDate: 05.03.2024\nVAT 20%      2.00\nTotal       12.00"
    assert parse_fields(text, TODAY).merchant_tax_id is None
