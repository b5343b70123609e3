"""Bank statements in: CSV, OFX/QFX, CAMT.053 and MT940 read into one shape (``model``).

``read_statement`` takes the file's bytes, the format (or ``auto``: told from the content) and,
for CSV, a column mapping; it reads the whole file before anything is stored, and raises
``StatementError`` naming the line or element where the file is malformed. Pure code, no
database: ``resolvers/resources/statements.py`` stores what it returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from engines.statements.camt import looks_like_camt, read_camt053
from engines.statements.csv_format import (
    CsvMapping,
    candidate_signatures,
    header_signature,
    read_csv,
)
from engines.statements.keys import line_keys, normalise
from engines.statements.model import Balance, ParsedStatement, StatementError, StatementLine
from engines.statements.mt940_format import looks_like_mt940, read_mt940
from engines.statements.ofx import looks_like_ofx, read_ofx
from engines.statements.text import decode_text
from engines.statements.xml_safe import parse_xml

StatementFormat = Literal["csv", "ofx", "camt053", "mt940"]


@dataclass(frozen=True)
class ReadStatement:
    """What reading a file gave: the statement, and for CSV the mapping used and the header."""

    statement: ParsedStatement
    mapping: CsvMapping | None = None
    header: list[str] | None = None


def detect_format(data: bytes) -> StatementFormat:
    """The format told from the content (never from the file name)."""
    head = data[:4096].lstrip()
    text = decode_text(data[:65536])
    if looks_like_ofx(text):
        return "ofx"
    if head.startswith(b"<") or head.startswith(b"\xef\xbb\xbf<"):
        if looks_like_camt(data):
            return "camt053"
        raise StatementError("line 1", "an XML file that is neither CAMT.053 nor OFX")
    if looks_like_mt940(text):
        return "mt940"
    return "csv"


def read_statement(
    data: bytes,
    format: StatementFormat | Literal["auto"] = "auto",
    *,
    mapping: CsvMapping | None = None,
    account: str | None = None,
    currency: str | None = None,
    max_lines: int,
) -> ReadStatement:
    """Read the whole file; ``account`` names the account when the file does not (CSV)."""
    chosen = detect_format(data) if format == "auto" else format
    if chosen == "csv":
        statement, used, header = read_csv(
            decode_text(data),
            mapping,
            max_lines=max_lines,
            account=account,
            default_currency=currency,
        )
        return ReadStatement(statement, used, header)
    if chosen == "camt053":
        return ReadStatement(read_camt053(parse_xml(data), max_lines=max_lines))
    if chosen == "mt940":
        return ReadStatement(read_mt940(decode_text(data), max_lines=max_lines))
    return ReadStatement(read_ofx(data, decode_text(data), max_lines=max_lines))


__all__ = [
    "Balance",
    "CsvMapping",
    "ParsedStatement",
    "ReadStatement",
    "StatementError",
    "StatementFormat",
    "StatementLine",
    "candidate_signatures",
    "decode_text",
    "detect_format",
    "header_signature",
    "line_keys",
    "normalise",
    "read_statement",
]
