"""Contract models of the matches resource: a person confirms which documents account for a
bank transaction, rejects a candidate, or undoes a match."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from schema.base import CapabilityInput, CapabilityOutput
from schema.transactions import TRANSACTION_ID, Transaction

DocumentId = Annotated[str, Field(min_length=1, max_length=100)]


class ConfirmMatch(CapabilityInput):
    """The documents that account for a transaction: one, or the receipts of a split payment."""

    transactionId: str = Field(min_length=1, max_length=100, description=TRANSACTION_ID)
    documentIds: list[DocumentId] = Field(
        min_length=1, max_length=3, description="One document, or up to 3 (a split payment)"
    )


class RejectMatch(CapabilityInput):
    """A candidate that does not account for the transaction: never proposed for it again."""

    transactionId: str = Field(min_length=1, max_length=100, description=TRANSACTION_ID)
    documentId: DocumentId = Field(description="The document (doc_…)")


class UndoMatch(CapabilityInput):
    """A transaction whose match is taken back."""

    transactionId: str = Field(min_length=1, max_length=100, description=TRANSACTION_ID)


class MatchResult(CapabilityOutput):
    """The transaction as it is now: matched, its matches, what was rejected, its history."""

    transaction: Transaction = Field(description="The transaction")
