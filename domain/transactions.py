"""The value types of a bank transaction: the statement formats, the limits of one import, and
the fields a where clause may test (one declaration the contract and storage both read)."""

from __future__ import annotations

from typing import Literal

from domain.uploads import MAX_UPLOAD_BYTES
from domain.vocabulary import vocabulary
from domain.where import Filterable

StatementFormat = Literal["csv", "ofx", "camt053", "mt940"]
StatementFormatChoice = Literal["auto", "csv", "ofx", "camt053", "mt940"]
# Written as the file writes them; a str with a pattern, not an enum: GraphQL enum names
# cannot hold the separators that tell these apart.
CSV_DATE_FORMATS = (
    "YYYY-MM-DD",
    "DD.MM.YYYY",
    "DD.MM.YY",
    "DD/MM/YYYY",
    "MM/DD/YYYY",
    "DD-MM-YYYY",
)
CsvDelimiter = Literal["comma", "semicolon", "tab", "pipe"]
DELIMITERS: dict[str, str] = {"comma": ",", "semicolon": ";", "tab": "\t", "pipe": "|"}

# One statement file: the size of an upload, and at most this many transactions (a year of a
# busy business account; the whole file is read and checked before anything is stored).
MAX_STATEMENT_BYTES = MAX_UPLOAD_BYTES
MAX_STATEMENT_TEXT = "10 MB"
MAX_STATEMENT_LINES = 20_000

_TEXT = Filterable("string")

# transactions.search and transactions.count. Amounts are signed: money leaving the account
# (a debit) is negative, so "amount lt 0" finds the payments.
TRANSACTION_FILTERS: dict[str, Filterable] = {
    "bookingDate": Filterable("date"),
    "valueDate": Filterable("date"),
    "amount": Filterable("money"),
    "currency": Filterable("string", upper=True),
    "counterparty": _TEXT,
    "reference": _TEXT,
    "account": _TEXT,
    "category": _TEXT,
    # Whether a document (receipt, invoice) accounts for the transaction: false until matching
    # (issue 42, item 2) confirms one.
    "matched": Filterable("boolean"),
}
TransactionSortField = Literal["bookingDate", "valueDate", "amount", "counterparty"]
# What the graph's transaction totals group by (several at once); currency always splits
# groups, so sums are never added across currencies.
TotalsKey = Literal["year", "month", "currency", "account", "matched"]
# How a time key is cut from the booking date (MongoDB's $dateToString formats).
TOTALS_TIME_FORMATS: dict[str, str] = {"year": "%Y", "month": "%Y-%m"}

# What a matching candidate is: one document paying the whole amount, several receipts of one
# merchant that add up to the booking, or a document the booking pays only part of.
MatchKind = Literal["single", "split", "partial"]
# The bounds of a workspace's automatic matching (matches.configure; the defaults are in
# engines/reconciliation/policy.py). The threshold's floor is above what the amount, date and
# currency alone score (60): a second agreeing signal is always needed before anything is
# matched without a person; its ceiling is every signal agreeing in full (125).
THRESHOLD_MIN = 65.0
THRESHOLD_MAX = 125.0
MARGIN_MIN = 0.0
MARGIN_MAX = 50.0
# What matching decides for a transaction.
MatchOutcome = Literal["auto_match", "needs_review", "no_candidate"]

# What each value means (the GraphQL enum values' descriptions read it).
STATEMENT_FORMATS = vocabulary(
    StatementFormat,
    {
        "csv": "CSV with a column mapping",
        "ofx": "OFX or QFX, 1.x (SGML) or 2.x (XML)",
        "camt053": "ISO 20022 CAMT.053 (XML)",
        "mt940": "SWIFT MT940",
    },
)
STATEMENT_FORMAT_CHOICES = vocabulary(
    StatementFormatChoice,
    {"auto": "Told from the file's content", **STATEMENT_FORMATS.meanings},
)
MATCH_KINDS = vocabulary(
    MatchKind,
    {
        "single": "One document pays the whole amount",
        "split": "Receipts of one merchant that add up to the booking",
        "partial": "The booking pays part of one document",
    },
)

MATCH_OUTCOMES = vocabulary(
    MatchOutcome,
    {
        "auto_match": "Matched without a person: above the threshold, no rival",
        "needs_review": "A person decides among the candidates",
        "no_candidate": "No document fits",
    },
)

CSV_DELIMITERS = vocabulary(
    CsvDelimiter,
    {"comma": "','", "semicolon": "';' (German exports)", "tab": "A tab", "pipe": "'|'"},
)

TRANSACTION_SORT_FIELDS = vocabulary(
    TransactionSortField,
    {
        "bookingDate": "When the bank booked it",
        "valueDate": "When it took effect",
        "amount": "Signed amount (debits negative)",
        "counterparty": "The other side's name",
    },
)
