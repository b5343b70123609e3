"""A small table of countries: names, currency, date order and tell-tale words.

It covers the countries fincap's users file most receipts from; anything else falls back
to hints and to neutral defaults. Tell-tale words are legal forms, tax names and state
names that identify a country on a receipt without a country line.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    cities: tuple[str, ...] = ()  # large cities, upper case


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
        (
            "NEW YORK",
            "SAN FRANCISCO",
            "LOS ANGELES",
            "SEATTLE",
            "CHICAGO",
            "BOSTON",
            "AUSTIN",
            "DENVER",
            "MIAMI",
            "PORTLAND",
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
        ("TORONTO", "MONTREAL", "VANCOUVER", "OTTAWA", "CALGARY"),
    ),
    Country(
        "GB",
        "United Kingdom",
        "GBP",
        "DMY",
        ("UNITED KINGDOM", "UK", "ENGLAND", "SCOTLAND"),
        ("LTD", "PLC", "VAT REG"),
        (),
        ("LONDON", "MANCHESTER", "EDINBURGH", "BIRMINGHAM"),
    ),
    Country(
        "DE",
        "Germany",
        "EUR",
        "DMY",
        ("DEUTSCHLAND", "GERMANY"),
        ("GMBH", "MWST", "UST-ID", "UST.", "STEUER-NR", "SUMME", "RÜCKGELD", "E.K.", "BONSUMME"),
        ("BAYERN", "HESSEN", "NORDRHEIN-WESTFALEN", "BADEN-WÜRTTEMBERG", "SACHSEN"),
        (
            "BERLIN",
            "HAMBURG",
            "MÜNCHEN",
            "MUENCHEN",
            "KÖLN",
            "FRANKFURT",
            "STUTTGART",
            "DÜSSELDORF",
            "LEIPZIG",
            "DORTMUND",
            "ESSEN",
            "BREMEN",
            "HANNOVER",
            "NÜRNBERG",
            "REGENSBURG",
            "AUGSBURG",
            "MANNHEIM",
            "KARLSRUHE",
            "BONN",
        ),
    ),
    Country(
        "AT",
        "Austria",
        "EUR",
        "DMY",
        ("ÖSTERREICH", "AUSTRIA"),
        (),
        (),
        ("WIEN", "GRAZ", "LINZ", "SALZBURG", "INNSBRUCK"),
    ),
    Country(
        "CH",
        "Switzerland",
        "CHF",
        "DMY",
        ("SCHWEIZ", "SUISSE", "SWITZERLAND"),
        ("CHF",),
        (),
        ("ZÜRICH", "ZURICH", "GENÈVE", "GENEVA", "BASEL", "BERN", "LAUSANNE"),
    ),
    Country(
        "FR",
        "France",
        "EUR",
        "DMY",
        ("FRANCE",),
        ("TVA", "TTC", "SIREN", "SIRET", "SARL"),
        (),
        ("PARIS", "LYON", "MARSEILLE", "TOULOUSE", "NICE", "BORDEAUX", "LILLE"),
    ),
    Country(
        "NL",
        "Netherlands",
        "EUR",
        "DMY",
        ("NEDERLAND", "NETHERLANDS"),
        ("BTW", "B.V.", "KVK"),
        (),
        ("AMSTERDAM", "ROTTERDAM", "UTRECHT", "DEN HAAG", "EINDHOVEN"),
    ),
    Country(
        "BE",
        "Belgium",
        "EUR",
        "DMY",
        ("BELGIQUE", "BELGIË", "BELGIUM"),
        (),
        (),
        ("BRUXELLES", "BRUSSEL", "ANTWERPEN", "GENT", "LIÈGE"),
    ),
    Country(
        "ES",
        "Spain",
        "EUR",
        "DMY",
        ("ESPAÑA", "SPAIN"),
        ("IVA", "S.L."),
        (),
        ("MADRID", "BARCELONA", "VALENCIA", "SEVILLA"),
    ),
    Country(
        "IT",
        "Italy",
        "EUR",
        "DMY",
        ("ITALIA", "ITALY"),
        ("S.R.L.", "S.P.A."),
        (),
        ("ROMA", "MILANO", "NAPOLI", "TORINO", "FIRENZE"),
    ),
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
        (
            "KUALA LUMPUR",
            "JOHOR BAHRU",
            "PETALING JAYA",
            "SHAH ALAM",
            "SUBANG JAYA",
            "KLANG",
            "IPOH",
            "GEORGE TOWN",
            "PUCHONG",
            "CHERAS",
            "SERI KEMBANGAN",
            "KAJANG",
            "SEREMBAN",
            "MELAKA",
            "KOTA KINABALU",
            "KUCHING",
            "RAWANG",
            "SETIA ALAM",
        ),
    ),
    Country(
        "SG", "Singapore", "SGD", "DMY", ("SINGAPORE",), ("PTE LTD", "PTE. LTD"), (), ("SINGAPORE",)
    ),
    Country(
        "IN",
        "India",
        "INR",
        "DMY",
        ("INDIA",),
        ("GSTIN", "PVT LTD", "PVT. LTD", "CGST", "SGST", "IGST"),
        ("KARNATAKA", "MAHARASHTRA", "TAMIL NADU", "DELHI", "TELANGANA"),
        ("BANGALORE", "BENGALURU", "MUMBAI", "NEW DELHI", "CHENNAI", "HYDERABAD", "PUNE"),
    ),
    Country(
        "AU",
        "Australia",
        "AUD",
        "DMY",
        ("AUSTRALIA",),
        ("ABN", "PTY LTD"),
        ("NEW SOUTH WALES", "VICTORIA", "QUEENSLAND"),
        ("SYDNEY", "MELBOURNE", "BRISBANE", "PERTH", "ADELAIDE"),
    ),
    Country("JP", "Japan", "JPY", "YMD", ("JAPAN",), (), (), ("TOKYO", "OSAKA", "KYOTO")),
    Country("CN", "China", "CNY", "YMD", ("CHINA",), (), (), ("BEIJING", "SHANGHAI")),
)

BY_CODE = {country.code: country for country in COUNTRIES}
BY_CURRENCY: dict[str, Country] = {}
for _country in COUNTRIES:
    BY_CURRENCY.setdefault(_country.currency, _country)
