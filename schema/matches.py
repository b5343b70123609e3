"""Contract models of the matches resource: a person confirms which documents account for a
bank transaction, rejects a candidate, or undoes a match."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from domain.transactions import MARGIN_MAX, MARGIN_MIN, THRESHOLD_MAX, THRESHOLD_MIN
from schema.base import Boolean, CapabilityInput, CapabilityOutput, NotBoolean
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


class GetMatchSettings(CapabilityInput):
    """matches.settings takes no parameters; send ``{}``."""


class ConfigureMatching(CapabilityInput):
    """Input of matches.configure: any of autoMatch, threshold and margin (what is left out
    keeps its value)."""

    autoMatch: Boolean | None = Field(
        default=None, description="false: nothing is matched without a person"
    )
    threshold: Annotated[float, NotBoolean] | None = Field(
        default=None,
        ge=THRESHOLD_MIN,
        le=THRESHOLD_MAX,
        description=f"The score an automatic match needs, {THRESHOLD_MIN:g} to {THRESHOLD_MAX:g}",
    )
    margin: Annotated[float, NotBoolean] | None = Field(
        default=None,
        ge=MARGIN_MIN,
        le=MARGIN_MAX,
        description=f"How far ahead of any rival the best must be, {MARGIN_MIN:g} to "
        f"{MARGIN_MAX:g}",
    )


class MatchingSettings(CapabilityOutput):
    """The workspace's automatic matching: whether it runs, the score it needs, and the margin
    over any rival."""

    autoMatch: bool = Field(description="Whether statements.import matches automatically")
    threshold: float = Field(description="The score an automatic match needs")
    margin: float = Field(description="How far ahead of any rival the best must be")
