"""Build ``engines/extraction/data/brands.tsv.gz`` from OpenStreetMap's name-suggestion-index.

    python scripts/build_brands.py                 # fetches the pinned package with npm
    python scripts/build_brands.py --tarball FILE  # or reads a tarball fetched before

The name-suggestion-index (npm package ``name-suggestion-index``, BSD-3-Clause; copyright
the name-suggestion-index contributors) lists the brands mappers tag in OpenStreetMap with
their kind of place (``shop=supermarket``, ``amenity=fuel``, …) and the countries they
operate in. This script keeps the brands of places that issue receipts or invoices, maps
their kind to fincap's categories, and writes one brand per line::

    name <TAB> category <TAB> osm tag <TAB> countries (comma-separated) <TAB> other names (|)

The package version and its sha512 integrity are pinned, so the output is reproducible:
run it again and the file comes out byte for byte the same.
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import io
import json
import re
import subprocess
import tarfile
import tempfile
import unicodedata
from pathlib import Path

PACKAGE = "name-suggestion-index"
VERSION = "8.0.20260918"
# npm's integrity of the tarball (``npm view name-suggestion-index@VERSION dist.integrity``).
INTEGRITY = (
    "sha512-g09kxye3aswAETIa//gA56MjonmjcyXCzdIwlDhpBVAwLKXOUJA1QZL5eE4ZRstTF"
    "Fx9I2o9eARONUXVC72SAw=="
)
OUTPUT = Path(__file__).resolve().parents[1] / "engines/extraction/data/brands.tsv.gz"

# OSM kind of place → fincap category. Kinds not listed (ATMs, banks, advertising, parcel
# lockers, schools, government offices, ...) do not issue the receipts fincap reads.
CATEGORIES: dict[str, str] = {
    **dict.fromkeys(
        (
            "amenity/restaurant",
            "amenity/fast_food",
            "amenity/cafe",
            "amenity/ice_cream",
            "amenity/pub",
            "amenity/bar",
            "amenity/biergarten",
            "amenity/food_court",
        ),
        "Meals",
    ),
    **dict.fromkeys(
        (
            "shop/supermarket",
            "shop/convenience",
            "shop/greengrocer",
            "shop/butcher",
            "shop/bakery",
            "shop/pastry",
            "shop/confectionery",
            "shop/deli",
            "shop/seafood",
            "shop/cheese",
            "shop/dairy",
            "shop/frozen_food",
            "shop/health_food",
            "shop/alcohol",
            "shop/beverages",
            "shop/wine",
            "shop/tea",
            "shop/coffee",
            "shop/chocolate",
            "shop/food",
            "shop/wholesale",
            "shop/farm",
            "shop/spices",
        ),
        "Groceries",
    ),
    **dict.fromkeys(("amenity/fuel", "amenity/charging_station", "man_made/charge_point"), "Fuel"),
    **dict.fromkeys(
        (
            "tourism/hotel",
            "tourism/motel",
            "tourism/hostel",
            "tourism/guest_house",
            "tourism/apartment",
            "tourism/camp_site",
            "tourism/chalet",
        ),
        "Lodging",
    ),
    **dict.fromkeys(
        (
            "amenity/pharmacy",
            "shop/chemist",
            "shop/optician",
            "shop/hearing_aids",
            "shop/medical_supply",
            "amenity/clinic",
            "amenity/dentist",
            "amenity/doctors",
            "amenity/hospital",
            "amenity/veterinary",
            "healthcare/laboratory",
            "healthcare/sample_collection",
            "healthcare/clinic",
            "healthcare/dentist",
            "healthcare/physiotherapist",
            "healthcare/optometrist",
            "healthcare/pharmacy",
            "healthcare/blood_donation",
            "healthcare/dialysis",
            "healthcare/rehabilitation",
        ),
        "Healthcare",
    ),
    **dict.fromkeys(
        ("shop/books", "shop/stationery", "shop/copyshop", "craft/printer"), "Office Supplies"
    ),
    **dict.fromkeys(
        ("shop/mobile_phone", "shop/telecommunication", "office/telecommunication"), "Telecom"
    ),
    **dict.fromkeys(
        (
            "amenity/car_rental",
            "amenity/taxi",
            "amenity/parking",
            "amenity/car_wash",
            "shop/car_repair",
            "amenity/car_sharing",
            "amenity/motorcycle_rental",
            "amenity/bicycle_rental",
            "amenity/boat_rental",
            "amenity/vehicle_inspection",
        ),
        "Transport",
    ),
    **dict.fromkeys(("shop/travel_agency", "office/travel_agent"), "Travel"),
    **dict.fromkeys(
        (
            "amenity/cinema",
            "amenity/theatre",
            "amenity/nightclub",
            "amenity/casino",
            "leisure/fitness_centre",
            "leisure/sports_centre",
            "leisure/bowling_alley",
            "leisure/amusement_arcade",
            "leisure/water_park",
            "tourism/theme_park",
            "shop/music",
            "shop/video_games",
            "shop/video",
            "shop/lottery",
            "shop/bookmaker",
            "leisure/escape_game",
            "leisure/trampoline_park",
        ),
        "Entertainment",
    ),
    **dict.fromkeys(
        (
            "office/insurance",
            "office/estate_agent",
            "office/accountant",
            "office/lawyer",
            "office/tax_advisor",
            "office/employment_agency",
            "office/courier",
            "amenity/post_office",
            "shop/dry_cleaning",
            "shop/laundry",
            "shop/hairdresser",
            "shop/beauty",
            "shop/massage",
            "shop/tattoo",
            "shop/funeral_directors",
            "shop/storage_rental",
            "shop/money_lender",
            "shop/pawnbroker",
            "office/consulting",
            "office/it",
            "shop/photo",
            "amenity/driving_school",
            "shop/locksmith",
        ),
        "Professional Services",
    ),
    **dict.fromkeys(("amenity/internet_cafe",), "Telecom"),
}
# Every other shop kind sells goods: Shopping.
SHOPPING_PREFIX = "shop/"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tarball", type=Path, help="a fetched name-suggestion-index tarball")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    data = args.tarball.read_bytes() if args.tarball else fetch()
    check_integrity(data)
    index = read_index(data)
    rows = brand_rows(index)
    data = encode(rows)
    args.output.write_bytes(data)
    print(f"{len(rows)} brands → {args.output} ({len(data) // 1024} KiB)")


def encode(rows: list[tuple[str, ...]]) -> bytes:
    """The rows as gzipped TSV; mtime 0 and no file name, so equal rows give equal bytes."""
    text = "".join("\t".join(row) + "\n" for row in rows)
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(text.encode("utf-8"))
    return buffer.getvalue()


def fetch() -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        subprocess.run(
            ["npm", "pack", f"{PACKAGE}@{VERSION}", "--pack-destination", folder, "--silent"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        return next(Path(folder).glob("*.tgz")).read_bytes()


def check_integrity(data: bytes) -> None:
    digest = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if digest != INTEGRITY:
        raise SystemExit(f"{PACKAGE}@{VERSION}: integrity {digest} is not the pinned one")


def read_index(data: bytes) -> dict[str, dict]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        member = archive.extractfile("package/dist/json/nsi.json")
        assert member is not None
        return json.load(member)["nsi"]


def category_of(path: str) -> str | None:
    kind = path.removeprefix("brands/")
    if kind in CATEGORIES:
        return CATEGORIES[kind]
    if kind.startswith(SHOPPING_PREFIX):
        return "Shopping"
    return None


def brand_rows(index: dict[str, dict]) -> list[tuple[str, ...]]:
    """One row per brand name. A brand listed under several kinds of place (a furniture chain as a
    furniture shop, a café and a food market) keeps the kind it has in the most countries,
    the worldwide listing ("001") counting as fifty."""
    found: dict[str, list[tuple[int, int, str, str, str, list[str], set[str]]]] = {}
    for path in sorted(index):
        if not path.startswith("brands/"):
            continue
        category = category_of(path)
        if category is None:
            continue
        tag = path.removeprefix("brands/").replace("/", "=", 1)
        for item in index[path]["items"]:
            tags = item.get("tags", {})
            name = clean(tags.get("brand") or tags.get("name") or item.get("displayName", ""))
            if not latin(name):
                continue
            names = {
                clean(value)
                for value in (
                    tags.get("name"),
                    tags.get("brand"),
                    tags.get("name:en"),
                    tags.get("brand:en"),
                    tags.get("short_name"),
                    tags.get("official_name"),
                    re.sub(r"\s*\(.*?\)\s*$", "", item.get("displayName", "")),
                    *item.get("matchNames", ()),
                )
                if value and latin(value)
            }
            countries = sorted(
                {
                    str(code).lower()
                    for code in item.get("locationSet", {}).get("include", ())
                    if re.fullmatch(r"[a-z]{2}|\d{3}", str(code).lower())
                }
            )
            reach = sum(50 if code == "001" else 1 for code in countries)
            found.setdefault(name.lower(), []).append(
                (reach, len(names), path, name, category, countries, names)
            )
    rows = []
    for listings in found.values():
        # Most countries first, then most names; the path breaks ties reproducibly.
        listings.sort(key=lambda entry: (-entry[0], -entry[1], entry[2]))
        _, _, path, name, category, _, _ = listings[0]
        countries = sorted({code for entry in listings for code in entry[5]})
        others = {other for entry in listings for other in entry[6]}
        others = {other for other in others if other.lower() != name.lower() and other}
        tag = path.removeprefix("brands/").replace("/", "=", 1)
        rows.append((name, category, tag, ",".join(countries), "|".join(sorted(others))))
    return sorted(rows, key=lambda row: (row[0].lower(), row[0]))


def clean(value: str) -> str:
    return " ".join(str(value).replace("\t", " ").replace("|", " ").split())


def latin(value: str) -> bool:
    """True for names written in Latin script (what receipts fincap reads print)."""
    letters = [ch for ch in str(value) if ch.isalpha()]
    return bool(letters) and all("LATIN" in unicodedata.name(ch, "") for ch in letters)


if __name__ == "__main__":
    main()
