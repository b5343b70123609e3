"""Field parsing on small hand-written texts: each test pins one decision of the parser."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from engines.extraction import ParseHints, parse_fields

TODAY = ParseHints(today=date(2025, 6, 1))


def test_ambiguous_date_follows_the_country_us_month_first() -> None:
    text = "Joe's Diner\nSan Francisco, CA, USA\nDate: 05/03/2024\nTotal $12.00"
    assert parse_fields(text, TODAY).doc_date == date(2024, 5, 3)


def test_ambiguous_date_follows_the_country_germany_day_first() -> None:
    text = "Bäckerei Schmidt GmbH\nBerlin\nDatum: 05.03.2024\nSumme EUR 12,00"
    assert parse_fields(text, TODAY).doc_date == date(2024, 3, 5)


def test_an_unambiguous_date_decides_the_order_of_the_others() -> None:
    # 25/12 can only be day-first, so 05/03 on the same document is 5 March too.
    text = "Shop\nPrinted 25/12/2023\nDate: 05/03/2024\nTotal $12.00"
    assert parse_fields(text, TODAY).doc_date == date(2024, 3, 5)


def test_future_reading_is_rejected_for_the_plausible_order() -> None:
    # Month-first would give 12 Nov 2025, after "today": the day-first reading wins.
    text = "Cafe\nSeattle, WA, USA\nDate: 11/12/2025\nTotal $3.00"
    assert parse_fields(text, ParseHints(today=date(2025, 11, 20))).doc_date == date(2025, 11, 12)
    # Before either reading (both in the future), no date is plausible at all.
    assert parse_fields(text, ParseHints(today=date(2025, 6, 1))).doc_date is None


def test_month_names_and_two_digit_years() -> None:
    assert parse_fields("Shop\n05 MAR 2018\nTotal 8.20", TODAY).doc_date == date(2018, 3, 5)
    assert parse_fields("Shop\nDate: 18-10-17\nTotal 5.90", TODAY).doc_date == date(2017, 10, 18)
    text = "Invoice Date: August 3 , 2014\nTotal $4.11"
    assert parse_fields(text, TODAY).doc_date == date(2014, 8, 3)


def test_total_is_the_labelled_line_consistent_with_subtotal_and_tax() -> None:
    text = (
        "Shop\nItem A 4.00\nItem B 6.00\nTotal Qty 2\nSubtotal 10.00\nTax 0.80\n"
        "Total 10.80\nCash 20.00\nChange 9.20"
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == Decimal("10.80")
    assert fields.subtotal == Decimal("10.00")
    assert fields.tax_amount == Decimal("0.80")
    assert fields.totals_consistent is True
    assert fields.amount_source == "total-line"


def test_total_from_subtotal_and_tax_when_no_total_line() -> None:
    fields = parse_fields("Shop\nSubtotal 100.00\nVAT 20.00\nPaid by card", TODAY)
    assert fields.amount == Decimal("120.00")
    assert fields.amount_source == "subtotal+tax"


def test_amounts_are_exact_decimals_in_both_conventions() -> None:
    assert parse_fields("Laden\nSumme EUR 1.234,56", TODAY).amount == Decimal("1234.56")
    assert parse_fields("Store\nGrand Total 1,234.56", TODAY).amount == Decimal("1234.56")


def test_currency_from_symbols_codes_and_country() -> None:
    assert parse_fields("Cafe\nTotal 4,50 €", TODAY).currency == "EUR"
    assert parse_fields("KEDAI SDN BHD\nJOHOR\nTotal RM 9.00", TODAY).currency == "MYR"
    assert parse_fields("Shop\nTotal GBP 5.00", TODAY).currency == "GBP"
    # A bare "$" means the country's dollar; with no country, US dollars.
    assert parse_fields("Shop\nSydney, Australia\nTotal $5.00", TODAY).currency == "AUD"
    assert parse_fields("Shop\nTotal $5.00", TODAY).currency == "USD"
    # Nothing printed: the hint decides.
    hinted = ParseHints(currency="CHF", today=date(2025, 6, 1))
    assert parse_fields("Shop\nTotal 5.00", hinted).currency == "CHF"


def test_card_ending_and_payment_method() -> None:
    fields = parse_fields("Shop\nTotal 9.99\nVISA XXXX XXXX XXXX 4821", TODAY)
    assert fields.payment_method == "visa"
    assert fields.payment_method_ending == "4821"
    girocard = parse_fields("Laden\nSumme 9,99\ngirocard\nPAN ############9165", TODAY)
    assert girocard.payment_method == "debit_card"
    assert girocard.payment_method_ending == "9165"
    assert parse_fields("Shop\nTotal 9.99\nCash 10.00", TODAY).payment_method == "cash"


def test_non_financial_text_is_flagged_for_skipping() -> None:
    letter = "Dear team,\nthe meeting moves to Thursday at 10.\nSee you there,\nAnna"
    fields = parse_fields(letter, TODAY)
    assert fields.financial is False
    assert fields.skip_reason
    assert fields.doc_type == "other"
    assert parse_fields("", TODAY).financial is False


def test_invoice_fields_and_line_items() -> None:
    text = (
        "Northwind Consulting GmbH\nMusterstraße 1, 10115 Berlin\nInvoice Number: INV-2024-0042\n"
        "Invoice Date: 2024-02-29\nWidget 2 x 5.00 10.00\nService 1 90.00 90.00\n"
        "Subtotal 100.00\nVAT 19% 19.00\nTotal EUR 119.00"
    )
    fields = parse_fields(text, TODAY)
    assert fields.doc_type == "invoice"
    assert fields.invoice_id == "INV-2024-0042"
    assert fields.merchant == "Northwind Consulting GmbH"
    assert fields.doc_date == date(2024, 2, 29)
    assert fields.amount == Decimal("119.00")
    assert fields.expense_location.country_code == "DE"
    assert fields.expense_location.city == "Berlin"
    first, second = fields.line_items
    assert (first.description, first.quantity, first.amount) == ("Widget", 2, Decimal("10.00"))
    assert second.unit_price == Decimal("90.00")
    assert "Invoice" in fields.summary and "119.00" in fields.summary


def test_hints_may_be_a_plain_mapping() -> None:
    fields = parse_fields("Shop\nDate: 05/03/2024\nTotal 5.00", {"countryCode": "US"})
    assert fields.doc_date == date(2024, 5, 3)


def test_tendered_minus_change_picks_the_total_over_a_tax_table_cell() -> None:
    # The tax-analysis header has no amount of its own: its next line is a table row.
    text = (
        "Grocer Sdn Bhd\nItem with GST 6% 77.20\nSaving 0.00 Total 77.20\nCash 100.00\n"
        "Change 22.80\nGST Analysis Goods Tax Amount\nS = 6% 50.47 3.03"
    )
    assert parse_fields(text, TODAY).amount == Decimal("77.20")


def test_tax_worded_around_total_is_not_the_total() -> None:
    text = (
        "Hardware Store\nTotal Incl. GST@6% RM 50.80\nCASH RM 51.00\nCHANGE RM 0.20\n"
        "GST @6% included in total RM 2.88"
    )
    assert parse_fields(text, TODAY).amount == Decimal("50.80")
    text = "Cafe\nTakeOut Total (incl GST) 25.40\nTOTAL INCLUDES 6% GST 1.44"
    assert parse_fields(text, TODAY).amount == Decimal("25.40")


def test_total_row_of_a_tax_summary_table_is_not_the_total() -> None:
    text = (
        "Pharmacy\nTotal Sales (inclusive of GST) 20.50\nCASH 21.00\nChange 0.50\n"
        "GST SUMMARY\nTax Code % Amt(RM) Tax(RM)\nSR 6 19.34 1.16\nTotal : 19.34 1"
    )
    assert parse_fields(text, TODAY).amount == Decimal("20.50")


def test_total_after_rounding_and_garbled_total_labels() -> None:
    text = "Shop\nlotal Sales Incl. GST 48.93\nRounding Adjustment 0.02\nTotal After Rounding 48.95"
    assert parse_fields(text, TODAY).amount == Decimal("48.95")
    assert parse_fields("Shop\nItem 3.00\nTotai 12.50", TODAY).amount == Decimal("12.50")


def test_printed_rounding_adjustment_is_applied_when_the_paid_amount_shows_it() -> None:
    text = (
        "Mart\nTotal Sales (Inclusive GST) RM 45.34\nRounding Adjustment RM .01\n"
        "CREDIT RM 45.35\nCHANGE RM .00"
    )
    assert parse_fields(text, TODAY).amount == Decimal("45.35")


def test_subtotal_tax_and_rounding_agree_with_the_total() -> None:
    text = (
        "Books\nSUB-TOTAL (EX) 52.00\nTOTAL TAX 3.12\nROUNDING -0.02\nTOTAL 55.10\n"
        "GST SUMMARY\nTAX CODE % AMOUNT TAX\n(RM) (RM)\nSR 6.00 52.00 3.12\nTOTAL : 52.00 3.12"
    )
    fields = parse_fields(text, TODAY)
    assert fields.amount == Decimal("55.10")


def test_a_column_title_is_not_a_total_label_for_the_next_row() -> None:
    text = "Bakery\nCode Desc Qty RM Amt\nPuff 4 1.60 6.40\nQty 8 25.15\nDue 25.15\nPay 25.15"
    assert parse_fields(text, TODAY).amount == Decimal("25.15")


def test_registered_company_name_beats_the_trading_name_and_drops_the_address() -> None:
    text = "KIKU JAPANESE RESTAURANT\nTK DIVISION KITCHEN SDN BHD\n1202152-P\nTotal 9.00"
    assert parse_fields(text, TODAY).merchant == "TK DIVISION KITCHEN SDN BHD"
    text = "GALLERY ONE SDN BHD No: 28, JALAN ASTANA 1C,\nKLANG\nTotal 9.00"
    assert parse_fields(text, TODAY).merchant == "GALLERY ONE SDN BHD"
    # An address word inside the registered name does not disqualify it.
    text = "cashier copy\nBOOK SHOP (TAMAN DAYA) SDN BHD\n789417-W\nTotal 9.00"
    assert parse_fields(text, TODAY).merchant == "BOOK SHOP (TAMAN DAYA) SDN BHD"


def test_registration_numbers_do_not_hide_the_name() -> None:
    text = "A030\nYONG HARDWARE TRADING (JM0292487-D)\nNO 4, JALAN 10\nTotal 9.00"
    assert parse_fields(text, TODAY).merchant == "YONG HARDWARE TRADING"
    text = "3180301\nFor staff: leong\nFarmasi Sejahtera S/B(587969-U)\nTotal 9.00"
    assert parse_fields(text, TODAY).merchant == "Farmasi Sejahtera S/B"


def test_column_titles_and_labelled_lines_are_not_merchants() -> None:
    text = "Code Desc Qty RM D% Amt\nCashier: Anna\nPuff 4 1.60 6.40\nTotal 6.40"
    assert parse_fields(text, TODAY).merchant is None


def test_invoice_issuer_from_the_bank_account_holder() -> None:
    text = (
        "CUSTOMER NAME\n27 rue Henri Rolland\n69100 Villeurbanne\nFacture n° 2022089083\n"
        "Total TTC : 56,02 €\nVirement BRED – Titulaire du compte : NETPRESSE\nIBAN : FR76 1010"
    )
    assert parse_fields(text, TODAY).merchant == "NETPRESSE"


def test_time_glued_to_the_year_still_gives_the_date() -> None:
    text = "Hardware\nDate 03/02/201815:28\nTotal 7.00"
    assert parse_fields(text, TODAY).doc_date == date(2018, 2, 3)


def test_a_payment_row_under_a_column_title_is_not_the_total() -> None:
    text = (
        "Rice Shop\nTotal Amount: $8.20\nNett Total: $8.20\nPayment Mode Amount\n"
        "CASH 58.20\nChange $0.00"
    )
    assert parse_fields(text, TODAY).amount == Decimal("8.20")


def test_rounding_adjustment_that_misses_five_cents_is_a_misread() -> None:
    # "Rounding 0.03" and "Cash 10.03" are OCR misreads of 0.00 and 10.00.
    text = "Shop\nTotal 5.00\nRounding Adjustment 0.03\nCash 10.03\nChange 5.00"
    assert parse_fields(text, TODAY).amount == Decimal("5.00")
