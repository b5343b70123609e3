"""Contract models of the statements and transactions resources."""

from __future__ import annotations

import datetime as dt
import typing
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.transactions import (
    CSV_DATE_FORMATS,
    MAX_STATEMENT_LINES,
    MAX_STATEMENT_TEXT,
    TRANSACTION_FILTERS,
    CsvDelimiter,
    MatchKind,
    MatchOutcome,
    StatementFormat,
    StatementFormatChoice,
    TotalsKey,
    TransactionSortField,
)
from domain.where import WhereClause, describe_where
from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer, NotBoolean
from schema.money import Money

TRANSACTION_ID = "Transaction id (txn_…)"
MappingSource = Literal["given", "saved", "detected"]


def _column(what: str) -> Any:
    return Field(default=None, min_length=1, max_length=100, description=what)


CurrencyCode = Annotated[str, Field(pattern=r"^[A-Za-z]{3}$", description="ISO 4217 code")]


class CsvMapping(BaseModel):
    """Which CSV column holds each field (header names, exactly as in the file)."""

    model_config = ConfigDict(extra="forbid")

    bookingDate: str = Field(min_length=1, max_length=100, description="Booking date column")
    delimiter: CsvDelimiter = Field(default="comma", description="Between fields")
    decimalComma: Boolean = Field(default=False, description="true: 1.234,56; false: 1,234.56")
    dateFormat: str = Field(
        default="YYYY-MM-DD",
        pattern="^(" + "|".join(f.replace(".", "\\.") for f in CSV_DATE_FORMATS) + ")$",
        description=", ".join(CSV_DATE_FORMATS),
    )
    valueDate: str | None = _column("Value date column")
    amount: str | None = Field(
        default=None, min_length=1, max_length=100, description="Signed amount; or debit/credit"
    )
    debit: str | None = Field(
        default=None, min_length=1, max_length=100, description="Money out (booked negative)"
    )
    credit: str | None = _column("Money in column")
    currency: str | None = _column("Currency column")
    defaultCurrency: CurrencyCode | None = Field(
        default=None, description="Every row's currency when no column has it"
    )
    counterparty: str | None = _column("Payee or payer column")
    reference: str | None = _column("Booking text column")
    account: str | None = _column("Account column")
    bankId: str | None = Field(
        default=None, min_length=1, max_length=100, description="The bank's transaction id"
    )


class ImportStatement(CapabilityInput):
    """Input of statements.import."""

    fileName: str = Field(min_length=1, max_length=255, description="Original name")
    base64Data: str = Field(
        min_length=1, description=f"Base64 file content, at most {MAX_STATEMENT_TEXT} decoded"
    )
    format: StatementFormatChoice = Field(default="auto", description="auto: told from content")
    mapping: CsvMapping | None = Field(
        default=None,
        description="CSV only; default: saved for the account or header, else detected",
    )
    account: str | None = Field(
        default=None, min_length=1, max_length=100, description="The account, if the file lacks it"
    )
    currency: CurrencyCode | None = Field(
        default=None, description="CSV without a currency column: the rows' currency"
    )
    saveMapping: Boolean = Field(default=True, description="CSV: remember the mapping used")


class StatedBalance(CapabilityOutput):
    """A balance the statement states."""

    amount: Money = Field(description="Signed: negative is overdrawn")
    currency: str = Field(description="ISO 4217 code")
    date: dt.date | None = Field(default=None, description="As of")


class StatementImported(CapabilityOutput):
    """What an import added; importing the same statement again adds nothing."""

    format: StatementFormat = Field(description="The format read")
    added: int = Field(description="Transactions stored now")
    alreadyThere: int = Field(description="Transactions an earlier import had stored")
    autoMatched: int = Field(
        description="Of those added, how many were matched to a document automatically"
    )
    notBooked: int = Field(description="Entries left out: pending, not booked")
    account: str | None = Field(default=None, description="The statement's account")
    currency: str | None = Field(default=None, description="Its currency, if one")
    periodStart: dt.date | None = Field(default=None, description="First day covered")
    periodEnd: dt.date | None = Field(default=None, description="Last day covered")
    openingBalance: StatedBalance | None = Field(default=None, description="If stated")
    closingBalance: StatedBalance | None = Field(default=None, description="If stated")
    statementId: str | None = Field(default=None, description="The bank's statement id")
    mapping: CsvMapping | None = Field(default=None, description="CSV: the mapping used")
    mappingSource: MappingSource | None = Field(
        default=None, description="CSV: where the mapping came from"
    )


class TransactionSource(CapabilityOutput):
    """Where a transaction was read."""

    format: StatementFormat = Field(description="The statement's format")
    fileName: str = Field(description="The file")
    place: str = Field(description="Its line or element")
    importedAt: datetime = Field(description="When")


class TransactionBatch(CapabilityOutput):
    """The batch booking (one line on the bank's statement) a transaction is part of."""

    reference: str | None = Field(default=None, description="The entry's bank reference")
    amount: Money = Field(description="The whole batch's amount")


class TransactionEdit(CapabilityOutput):
    """One correction of one field."""

    field: str = Field(description="The field corrected")
    oldValue: Any = Field(default=None, description="Its value before")
    newValue: Any = Field(default=None, description="Its value after")
    editedBy: str = Field(description="Who (usr_…)")
    editedAt: datetime = Field(description="When")


class Transaction(CapabilityOutput):
    """A booked bank transaction. amount is signed: debits (money out) are negative."""

    id: str = Field(description=TRANSACTION_ID)
    account: str | None = Field(default=None, description="The account")
    bookingDate: dt.date = Field(description="Booking date")
    valueDate: dt.date | None = Field(default=None, description="Value date")
    amount: Money = Field(description="Signed: negative is money out")
    currency: str = Field(description="ISO 4217 code")
    counterparty: str | None = Field(default=None, description="The other side")
    reference: str | None = Field(default=None, description="Booking text or reference")
    bankTransactionId: str | None = Field(default=None, description="The bank's id")
    category: str | None = Field(default=None, description="Set by a person")
    notes: str | None = Field(default=None, description="Set by a person")
    matched: bool = Field(description="Whether a document accounts for it")
    matches: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Documents matched to it: documentIds, kind, score, reasons, by, at, via",
    )
    rejectedDocumentIds: list[str] = Field(
        default_factory=list, description="Documents never proposed for it again"
    )
    matchHistory: list[dict[str, Any]] = Field(
        default_factory=list, description="Confirmations, rejections, undos: who and when"
    )
    batch: TransactionBatch | None = Field(default=None, description="Its batch booking")
    source: TransactionSource = Field(description="Where it was read")
    bankCounterparty: str | None = Field(default=None, description="As the bank wrote it")
    bankReference: str | None = Field(default=None, description="As the bank wrote it")
    editHistory: list[TransactionEdit] = Field(default_factory=list, description="Corrections")


class BankTransaction(Transaction):
    """A booked bank transaction as a node of the graph (node(id:), Workspace.transactions, a
    document's transactions): the fields of Transaction, its id unique across every
    workspace."""


def as_node(transaction: Transaction) -> BankTransaction:
    """``transaction`` as the graph's node (the same values, the fields it has set kept)."""
    return BankTransaction.model_construct(
        _fields_set=set(transaction.model_fields_set), **dict(transaction)
    )


TRANSACTIONS_WHERE = describe_where(
    TRANSACTION_FILTERS,
    {
        "conditions": [
            {"field": "amount", "op": "lt", "value": 0},
            {"field": "matched", "op": "eq", "value": False},
        ]
    },
)


class SearchTransactions(CapabilityInput):
    """Input of transactions.search."""

    where: WhereClause | None = Field(default=None, description=TRANSACTIONS_WHERE)
    sortBy: TransactionSortField = Field(default="bookingDate", description="Ties broken by id")
    sortOrder: Annotated[Literal[1, -1], NotBoolean] = Field(
        default=-1, description="1 ascending, -1 descending"
    )
    limit: Integer = Field(default=20, ge=1, le=100, description="Page size")
    cursor: str | None = Field(
        default=None, min_length=1, max_length=2000, description="nextCursor of the previous page"
    )


class TransactionPage(CapabilityOutput):
    """One page of transactions; ``nextCursor`` is null on the last page."""

    transactions: list[Transaction] = Field(description="The page")
    nextCursor: str | None = Field(default=None, description="For the next page; null on the last")


class GetTransaction(CapabilityInput):
    """Input of transactions.get."""

    id: str = Field(min_length=1, max_length=100, description=TRANSACTION_ID)


class TransactionResult(CapabilityOutput):
    """One transaction."""

    transaction: Transaction = Field(description="The transaction")


class CountTransactions(CapabilityInput):
    """Input of transactions.count."""

    where: WhereClause | None = Field(
        default=None, description="The where clause of transactions.search"
    )


class CurrencyFlow(CapabilityOutput):
    """Money out and in, in one currency."""

    currency: str = Field(description="ISO 4217 code")
    count: int = Field(description="Transactions")
    debits: Money = Field(description="Sum of money out (negative)")
    credits: Money = Field(description="Sum of money in")
    net: Money = Field(description="credits + debits")


class TransactionCount(CapabilityOutput):
    """How many transactions match, and their sums per currency."""

    count: int = Field(description="All matching")
    totals: list[CurrencyFlow] = Field(description="Per currency")


class UpdateTransaction(CapabilityInput):
    """Input of transactions.update: the id and only the fields to change (at least one).

    A field sent as null clears it. The amount, dates, currency and account are the bank's and
    cannot change.
    """

    model_config = ConfigDict(json_schema_extra={"minProperties": 2})

    id: str = Field(min_length=1, max_length=100, description=TRANSACTION_ID)
    counterparty: str | None = Field(default=None, min_length=1, max_length=200, description="Who")
    reference: str | None = Field(default=None, min_length=1, max_length=500, description="What")
    category: str | None = Field(default=None, min_length=1, max_length=100, description="Category")
    notes: str | None = Field(default=None, min_length=1, max_length=2000, description="Notes")


__all__ = [
    "MAX_STATEMENT_LINES",
    "CountTransactions",
    "CsvMapping",
    "GetTransaction",
    "ImportStatement",
    "SearchTransactions",
    "StatementImported",
    "Transaction",
    "TransactionCount",
    "TransactionPage",
    "TransactionResult",
    "UpdateTransaction",
]


class TransactionCandidatesInput(CapabilityInput):
    """Input of transactions.candidates."""

    id: str = Field(min_length=1, max_length=100, description=TRANSACTION_ID)


class MatchSignal(CapabilityOutput):
    """One piece of evidence for or against a candidate."""

    name: str = Field(description="amount, date, merchant, reference, currency or card")
    contribution: float = Field(description="Points it adds to the score (negative: against)")
    reason: str = Field(description="What it found, in words")


class MatchCandidate(CapabilityOutput):
    """Documents that could account for the transaction, and why."""

    documentIds: list[str] = Field(description="One document, or several (split)")
    kind: MatchKind = Field(
        description="single: one document pays it all; split: receipts adding up to it; "
        "partial: it pays part of one"
    )
    score: float = Field(description="The signals' contributions added up")
    signals: list[MatchSignal] = Field(description="Each signal with its contribution")


class TransactionCandidates(CapabilityOutput):
    """The documents that could account for a transaction, best first, with the decision the
    matcher would take."""

    transactionId: str = Field(description=TRANSACTION_ID)
    outcome: MatchOutcome = Field(
        description="auto_match: the best is above the threshold with no rival within the "
        "margin; needs_review: a person decides; no_candidate: nothing scores"
    )
    why: str = Field(description="Why it would or would not be matched automatically")
    threshold: float = Field(description="The score an automatic match needs")
    margin: float = Field(description="How far ahead of any rival it must be")
    candidates: list[MatchCandidate] = Field(description="Best first")


TOTALS_KEY_MEANINGS: dict[str, str] = {
    "year": "Year of the booking date (YYYY)",
    "month": "Month of the booking date (YYYY-MM)",
    "currency": "Currency (ISO 4217); groups are always split by it",
    "account": "The account booked on",
    "matched": "Whether a document accounts for the transaction",
}
if set(TOTALS_KEY_MEANINGS) != set(typing.get_args(TotalsKey)):
    raise ValueError("every TotalsKey needs its meaning in TOTALS_KEY_MEANINGS")


class TransactionGroupKey(CapabilityOutput):
    """What a group of transactions shares: the keys asked for, and always the currency."""

    year: str | None = Field(default=None, description=TOTALS_KEY_MEANINGS["year"])
    month: str | None = Field(default=None, description=TOTALS_KEY_MEANINGS["month"])
    currency: str | None = Field(default=None, description=TOTALS_KEY_MEANINGS["currency"])
    account: str | None = Field(default=None, description=TOTALS_KEY_MEANINGS["account"])
    matched: bool | None = Field(default=None, description=TOTALS_KEY_MEANINGS["matched"])


class TransactionFlow(CapabilityOutput):
    """How many transactions, and their amounts added up (signed as booked)."""

    count: int = Field(description="Transactions")
    sum: Money = Field(description="Their amounts added up, signed (money out is negative)")


class TransactionTotalsGroup(CapabilityOutput):
    """One group: money spent, how much of it documents account for, and money received."""

    key: TransactionGroupKey = Field(description="What its transactions share")
    count: int = Field(description="All its transactions, in and out")
    spent: TransactionFlow = Field(description="Money out (negative amounts)")
    receipted: TransactionFlow = Field(
        description="The part of spent matched to documents (receipts, invoices)"
    )
    missing: TransactionFlow = Field(description="The part of spent no document accounts for")
    received: TransactionFlow = Field(description="Money in (positive amounts)")


class TransactionTotals(CapabilityOutput):
    """Transactions grouped by several keys and currency: spent vs receipted per group."""

    totalCount: int = Field(description="Transactions the filter matches")
    groups: list[TransactionTotalsGroup] = Field(description="By key, in key order")
    groupsTruncated: bool = Field(description="More groups exist than the 500 listed")
