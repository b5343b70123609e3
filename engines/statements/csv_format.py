"""CSV statements: a column mapping, detected from the header for the common layouts.

Banks export CSV in many layouts. A ``CsvMapping`` names the column of each field (booking
date, value date, amount or debit and credit, currency, counterparty, reference, account, bank
transaction id), the delimiter, the decimal separator and the date format. ``detect_mapping``
finds one from the header and the values: the header row is the first of the file's first
rows that names a booking date and an amount (German exports put account details above it),
the delimiter is the one that splits that row most, the decimal separator and the date format
are read from the values (a date like 03/04/2026 that could be either day or month first is
refused: the mapping must say).
"""

from __future__ import annotations

import csv
import hashlib
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields, replace
from datetime import date, datetime

from engines.statements.model import ParsedStatement, StatementError, StatementLine
from engines.statements.text import currency_code, one_line, parse_amount

DATE_FORMATS: dict[str, str] = {
    "YYYY-MM-DD": "%Y-%m-%d",
    "DD.MM.YYYY": "%d.%m.%Y",
    "DD.MM.YY": "%d.%m.%y",
    "DD/MM/YYYY": "%d/%m/%Y",
    "MM/DD/YYYY": "%m/%d/%Y",
    "DD-MM-YYYY": "%d-%m-%Y",
}
DELIMITERS = (";", ",", "\t", "|")
HEADER_SEARCH_ROWS = 30

# Header names of each field in the layouts fincap knows (lower case, compared trimmed).
SYNONYMS: dict[str, tuple[str, ...]] = {
    "bookingDate": (
        "buchungstag",
        "buchungsdatum",
        "buchung",
        "booking date",
        "transaction date",
        "posting date",
        "posted date",
        "date",
        "datum",
    ),
    "valueDate": ("valutadatum", "valuta", "wertstellung", "value date"),
    "amount": ("betrag", "betrag (eur)", "umsatz", "amount", "transaction amount"),
    "debit": ("debit amount", "debit", "soll", "paid out", "money out", "withdrawals"),
    "credit": ("credit amount", "credit", "haben", "paid in", "money in", "deposits"),
    "currency": ("waehrung", "währung", "currency", "ccy"),
    "counterparty": (
        "beguenstigter/zahlungspflichtiger",
        "begünstigter/zahlungspflichtiger",
        "zahlungsempfänger*in",
        "auftraggeber / begünstigter",
        "name",
        "payee",
        "counterparty",
    ),
    "reference": (
        "verwendungszweck",
        "transaction description",
        "description",
        "details",
        "reference",
        "memo",
    ),
    "account": ("auftragskonto", "account number", "account", "iban"),
    "bankId": ("transaction id", "bank reference", "buchungsreferenz"),
}


MAPPED_FIELDS = (
    "bookingDate",
    "valueDate",
    "amount",
    "debit",
    "credit",
    "currency",
    "counterparty",
    "reference",
    "account",
    "bankId",
)


@dataclass(frozen=True)
class CsvMapping:
    """Which column holds each field, and how the file writes numbers and dates.

    Either ``amount`` (signed) or ``debit`` and/or ``credit`` (unsigned, or signed as the bank
    writes them: a debit is always booked negative). ``currency`` is a column; ``defaultCurrency``
    the currency of every row when the file has no such column.
    """

    bookingDate: str
    delimiter: str = ","
    decimalComma: bool = False
    dateFormat: str = "YYYY-MM-DD"
    valueDate: str | None = None
    amount: str | None = None
    debit: str | None = None
    credit: str | None = None
    currency: str | None = None
    defaultCurrency: str | None = None
    counterparty: str | None = None
    reference: str | None = None
    account: str | None = None
    bankId: str | None = None

    def columns(self) -> dict[str, str]:
        """The mapped fields and their columns."""
        names = MAPPED_FIELDS
        return {name: getattr(self, name) for name in names if getattr(self, name)}

    def as_dict(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _line_print(line: str) -> str:
    return hashlib.sha256(re.sub(r'[\s"]', "", line.lower()).encode()).hexdigest()[:32]


def header_signature(header: list[str], delimiter: str) -> str:
    """The header row's fingerprint (case, quotes and spaces aside): how a saved mapping
    recognises the bank's layout next time."""
    return _line_print(delimiter.join(header))


def candidate_signatures(text: str) -> list[str]:
    """The fingerprints of the lines that could be the header (the first few)."""
    return [_line_print(line) for line in text.splitlines()[:HEADER_SEARCH_ROWS] if line.strip()]


def _norm(cell: str) -> str:
    return re.sub(r"\s+", " ", cell.strip().strip('"').lower())


def _rows(text: str, delimiter: str) -> Iterator[tuple[int, list[str]]]:
    """Rows with the line each starts on (a quoted field may span lines)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    line = 1
    try:
        for row in reader:
            yield line, row
            line = reader.line_num + 1
    except csv.Error as exc:
        raise StatementError(f"line {reader.line_num}", f"not valid CSV: {exc}") from None


def _header_row(text: str, delimiter: str) -> tuple[int, list[str]] | None:
    """The line and cells of the first of the first rows that names a date and an amount."""
    for count, (line, row) in enumerate(_rows(text, delimiter)):
        if count >= HEADER_SEARCH_ROWS:
            return None
        cells = {_norm(cell) for cell in row}
        has_date = any(name in cells for name in SYNONYMS["bookingDate"])
        has_amount = any(
            name in cells for key in ("amount", "debit", "credit") for name in SYNONYMS[key]
        )
        if has_date and has_amount:
            return line, row
    return None


def _find_header(text: str, mapping: CsvMapping | None) -> tuple[str, int, list[str]]:
    delimiters = (mapping.delimiter,) if mapping else DELIMITERS
    for delimiter in delimiters:
        if mapping is not None:
            wanted = {_norm(c) for c in mapping.columns().values()}
            for count, (line, row) in enumerate(_rows(text, delimiter)):
                if count >= HEADER_SEARCH_ROWS:
                    break
                if wanted <= {_norm(cell) for cell in row}:
                    return delimiter, line, row
            continue
        try:
            found = _header_row(text, delimiter)
        except StatementError:
            continue
        if found is not None and len(found[1]) > 1:
            return delimiter, found[0], found[1]
    if mapping is not None:
        missing = ", ".join(f"'{c}'" for c in mapping.columns().values())
        raise StatementError(
            "line 1",
            f"no header row among the first {HEADER_SEARCH_ROWS} lines has the mapping's "
            f"columns ({missing})",
        )
    raise StatementError(
        "line 1",
        "no header row naming a booking date and an amount was found among the first "
        f"{HEADER_SEARCH_ROWS} lines; give a mapping",
    )


def _pick(header: list[str], field_name: str) -> str | None:
    cells = {_norm(cell): cell for cell in header}
    for name in SYNONYMS[field_name]:
        if name in cells:
            return cells[name].strip()
    return None


def _guess_date_format(values: list[str], place: str) -> str:
    samples = [v.strip() for v in values if v.strip()][:200]
    for name, pattern in (
        ("YYYY-MM-DD", r"\d{4}-\d{2}-\d{2}"),
        ("DD.MM.YYYY", r"\d{1,2}\.\d{1,2}\.\d{4}"),
        ("DD.MM.YY", r"\d{1,2}\.\d{1,2}\.\d{2}"),
        ("DD-MM-YYYY", r"\d{1,2}-\d{1,2}-\d{4}"),
    ):
        if samples and all(re.fullmatch(pattern, v) for v in samples):
            return name
    if samples and all(re.fullmatch(r"\d{1,2}/\d{1,2}/\d{4}", v) for v in samples):
        firsts = [int(v.split("/")[0]) for v in samples]
        seconds = [int(v.split("/")[1]) for v in samples]
        if max(firsts) > 12 >= max(seconds):
            return "DD/MM/YYYY"
        if max(seconds) > 12 >= max(firsts):
            return "MM/DD/YYYY"
        raise StatementError(
            place,
            "dates such as "
            f"'{samples[0]}' could be day/month or month/day; give mapping.dateFormat",
        )
    raise StatementError(
        place,
        f"the date format of '{samples[0] if samples else ''}' is not one fincap detects; "
        f"give mapping.dateFormat ({', '.join(DATE_FORMATS)})",
    )


def _guess_decimal_comma(values: list[str], delimiter: str) -> bool:
    commas = points = 0
    for value in values:
        match = re.search(r"([.,])\d{1,2}-?\)?$", value.strip())
        if match:
            commas += match.group(1) == ","
            points += match.group(1) == "."
    if commas or points:
        return commas > points
    return delimiter == ";"  # German exports: ';' between fields, ',' in numbers


def detect_mapping(text: str, mapping: CsvMapping | None = None) -> tuple[CsvMapping, list[str]]:
    """The mapping for ``text`` (``mapping`` completed with nothing, or one detected) and the
    header row it was found for."""
    delimiter, line, header = _find_header(text, mapping)
    if mapping is not None:
        return mapping, header
    found: dict[str, str | None] = {name: _pick(header, name) for name in SYNONYMS}
    booking = found.pop("bookingDate")
    assert booking is not None  # _header_row found one
    if found["amount"] and (found["debit"] or found["credit"]):
        found["debit"] = found["credit"] = None
    body = [row for _, row in _rows(text, delimiter)][line:]
    index = {cell.strip(): i for i, cell in enumerate(header)}

    def column(name: str | None) -> list[str]:
        if name is None:
            return []
        return [row[index[name]] for row in body if len(row) > index[name]]

    money = [v for key in ("amount", "debit", "credit") for v in column(found[key]) if v.strip()]
    return (
        CsvMapping(
            bookingDate=booking,
            delimiter=delimiter,
            decimalComma=_guess_decimal_comma(money, delimiter),
            dateFormat=_guess_date_format(column(booking), f"line {line + 1}"),
            **found,
        ),
        header,
    )


def _date(value: str, date_format: str, place: str, column: str) -> date:
    try:
        return datetime.strptime(value.strip(), DATE_FORMATS[date_format]).date()
    except ValueError:
        raise StatementError(
            place, f"column '{column}': '{value}' is not a date written {date_format}"
        ) from None


def read_csv(
    text: str,
    mapping: CsvMapping | None,
    *,
    max_lines: int,
    account: str | None = None,
    default_currency: str | None = None,
) -> tuple[ParsedStatement, CsvMapping, list[str]]:
    """The statement in ``text``; the mapping used (given or detected) and the header row.
    ``default_currency`` is every row's currency when the mapping names no currency column."""
    used, header = detect_mapping(text, mapping)
    if default_currency and not used.currency and not used.defaultCurrency:
        used = replace(used, defaultCurrency=default_currency)
    if used.dateFormat not in DATE_FORMATS:
        raise StatementError("mapping", f"dateFormat must be one of {', '.join(DATE_FORMATS)}")
    if not used.amount and not (used.debit or used.credit):
        raise StatementError("mapping", "give amount, or debit and/or credit")
    index = {cell.strip(): i for i, cell in enumerate(header)}
    for name, column in used.columns().items():
        if column.strip() not in index:
            raise StatementError("header", f"mapping.{name}: no column '{column}' in the header")
    if not used.currency and not used.defaultCurrency:
        raise StatementError(
            "mapping", "the file has no currency column; give the statement's currency"
        )
    statement = ParsedStatement(format="csv", account=account)
    header_seen = False
    for line, row in _rows(text, used.delimiter):
        if not header_seen:
            header_seen = [c.strip() for c in row] == [c.strip() for c in header]
            continue
        if not any(cell.strip() for cell in row):
            continue
        place = f"line {line}"
        if len(statement.lines) >= max_lines:
            raise StatementError(place, f"more than {max_lines:,} transactions in one file")
        statement.lines.append(_line(row, used, index, place, account))
    if not statement.lines:
        raise StatementError("header", "no transactions below the header")
    currencies = {line.currency for line in statement.lines}
    statement.currency = currencies.pop() if len(currencies) == 1 else None
    accounts = {line.account for line in statement.lines}
    if statement.account is None and len(accounts) == 1:
        statement.account = accounts.pop()
    dates = [line.booking_date for line in statement.lines]
    statement.period_start, statement.period_end = min(dates), max(dates)
    return statement, used, header


def _line(
    row: list[str], mapping: CsvMapping, index: dict[str, int], place: str, account: str | None
) -> StatementLine:
    def cell(name: str | None) -> str:
        if not name:
            return ""
        position = index[name.strip()]
        if position >= len(row):
            raise StatementError(
                place, f"the row has {len(row)} fields; column '{name}' is missing"
            )
        return row[position]

    booking = cell(mapping.bookingDate)
    if not booking.strip():
        raise StatementError(place, f"column '{mapping.bookingDate}': no booking date")
    try:
        if mapping.amount:
            amount = parse_amount(cell(mapping.amount), mapping.decimalComma)
        else:
            debit, credit = cell(mapping.debit).strip(), cell(mapping.credit).strip()
            if bool(debit) == bool(credit):
                raise ValueError("exactly one of the debit and credit columns must hold an amount")
            amount = (
                -abs(parse_amount(debit, mapping.decimalComma))
                if debit
                else abs(parse_amount(credit, mapping.decimalComma))
            )
    except ValueError as exc:
        raise StatementError(place, str(exc)) from None
    value_text = cell(mapping.valueDate).strip()
    currency = cell(mapping.currency) if mapping.currency else mapping.defaultCurrency
    return StatementLine(
        booking_date=_date(booking, mapping.dateFormat, place, mapping.bookingDate),
        value_date=(
            _date(value_text, mapping.dateFormat, place, str(mapping.valueDate))
            if value_text
            else None
        ),
        amount=amount,
        currency=currency_code(currency, place),
        counterparty=one_line(cell(mapping.counterparty)),
        reference=one_line(cell(mapping.reference)),
        account=one_line(cell(mapping.account), 100) or account,
        bank_id=one_line(cell(mapping.bankId), 200),
        place=place,
    )


__all__ = [
    "CsvMapping",
    "candidate_signatures",
    "detect_mapping",
    "header_signature",
    "read_csv",
]
