"""A small table of countries: names, currency, date order and tell-tale words.

It covers the countries fincap's users file most receipts from; anything else falls back
to hints and to neutral defaults. Tell-tale words are legal forms, tax names and state
names that identify a country on a receipt without a country line. The cities of each
country come from GeoNames (``places``), not from a hand-made list.
"""

from __future__ import annotations

from dataclasses import dataclass

from .places import place_index

DateOrder = str  # "DMY", "MDY" or "YMD"


@dataclass(frozen=True)
class Country:
    code: str
    name: str
    currency: str
    date_order: DateOrder
    names: tuple[str, ...]  # how the country is written on documents (upper case)
    telltales: tuple[str, ...] = ()  # upper-case words that point to this country
    states: tuple[str, ...] = ()  # states / provinces, upper case

    @property
    def cities(self) -> tuple[str, ...]:
        """Cities of at least 100,000 inhabitants, largest first (upper case)."""
        return place_index().names(self.code)


COUNTRIES: tuple[Country, ...] = (
    Country(
        "US",
        "United States",
        "USD",
        "MDY",
        ("USA", "UNITED STATES", "U.S.A."),
        ("SALES TAX", "INC.", "LLC"),
        (
            "CALIFORNIA",
            "NEW YORK",
            "TEXAS",
            "FLORIDA",
            "WASHINGTON",
            "ILLINOIS",
            "MASSACHUSETTS",
            "NEW JERSEY",
            "COLORADO",
            "OREGON",
            "GEORGIA",
            "VIRGINIA",
        ),
    ),
    Country(
        "CA",
        "Canada",
        "CAD",
        "YMD",
        ("CANADA",),
        ("GST/HST", "HST", "PST", "QST"),
        ("ONTARIO", "QUEBEC", "BRITISH COLUMBIA", "ALBERTA"),
    ),
    Country(
        "GB",
        "United Kingdom",
        "GBP",
        "DMY",
        ("UNITED KINGDOM", "UK", "ENGLAND", "SCOTLAND"),
        ("LTD", "PLC", "VAT REG"),
        (),
    ),
    Country(
        "DE",
        "Germany",
        "EUR",
        "DMY",
        ("DEUTSCHLAND", "GERMANY"),
        ("GMBH", "MWST", "UST-ID", "UST.", "STEUER-NR", "SUMME", "RÜCKGELD", "E.K.", "BONSUMME"),
        ("BAYERN", "HESSEN", "NORDRHEIN-WESTFALEN", "BADEN-WÜRTTEMBERG", "SACHSEN"),
    ),
    Country("AT", "Austria", "EUR", "DMY", ("ÖSTERREICH", "AUSTRIA"), (), ()),
    Country("CH", "Switzerland", "CHF", "DMY", ("SCHWEIZ", "SUISSE", "SWITZERLAND"), ("CHF",), ()),
    Country(
        "FR", "France", "EUR", "DMY", ("FRANCE",), ("TVA", "TTC", "SIREN", "SIRET", "SARL"), ()
    ),
    Country(
        "NL", "Netherlands", "EUR", "DMY", ("NEDERLAND", "NETHERLANDS"), ("BTW", "B.V.", "KVK"), ()
    ),
    Country("BE", "Belgium", "EUR", "DMY", ("BELGIQUE", "BELGIË", "BELGIUM"), (), ()),
    Country("ES", "Spain", "EUR", "DMY", ("ESPAÑA", "SPAIN"), ("IVA", "S.L."), ()),
    Country("IT", "Italy", "EUR", "DMY", ("ITALIA", "ITALY"), ("S.R.L.", "S.P.A."), ()),
    Country(
        "MY",
        "Malaysia",
        "MYR",
        "DMY",
        ("MALAYSIA",),
        ("SDN BHD", "SDN. BHD", "S/B", "GST ID", "SST", "BHD"),
        (
            "JOHOR",
            "SELANGOR",
            "KUALA LUMPUR",
            "PULAU PINANG",
            "PENANG",
            "PERAK",
            "SABAH",
            "SARAWAK",
            "KEDAH",
            "MELAKA",
            "NEGERI SEMBILAN",
            "PAHANG",
            "KELANTAN",
            "TERENGGANU",
            "PUTRAJAYA",
            "LABUAN",
            "PERLIS",
        ),
    ),
    Country("SG", "Singapore", "SGD", "DMY", ("SINGAPORE",), ("PTE LTD", "PTE. LTD"), ()),
    Country(
        "IN",
        "India",
        "INR",
        "DMY",
        ("INDIA",),
        ("GSTIN", "PVT LTD", "PVT. LTD", "CGST", "SGST", "IGST"),
        ("KARNATAKA", "MAHARASHTRA", "TAMIL NADU", "DELHI", "TELANGANA"),
    ),
    Country(
        "AU",
        "Australia",
        "AUD",
        "DMY",
        ("AUSTRALIA",),
        ("ABN", "PTY LTD"),
        ("NEW SOUTH WALES", "VICTORIA", "QUEENSLAND"),
    ),
    Country("JP", "Japan", "JPY", "YMD", ("JAPAN",), (), ()),
    Country("CN", "China", "CNY", "YMD", ("CHINA",), (), ()),
)

BY_CODE = {country.code: country for country in COUNTRIES}
BY_CURRENCY: dict[str, Country] = {}
for _country in COUNTRIES:
    BY_CURRENCY.setdefault(_country.currency, _country)
