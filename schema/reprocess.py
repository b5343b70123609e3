"""Contract models of documents.reprocess: documents read again by the current extraction."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from schema.base import Boolean, CapabilityInput, CapabilityOutput

MAX_REPROCESS = 50


class ReprocessDocuments(CapabilityInput):
    """Documents to read again, by id."""

    ids: list[Annotated[str, Field(min_length=1, max_length=100)]] = Field(
        min_length=1, max_length=MAX_REPROCESS, description="Document ids (at most 50)"
    )
    keepCorrections: Boolean = Field(
        default=True,
        description="Keep the fields a person corrected (false: the new reading replaces them)",
    )


class ReprocessQueued(CapabilityOutput):
    """What documents.reprocess queued."""

    queued: list[str] = Field(description="Ids queued to be read again")
    missing: list[str] = Field(description="Ids not found in the workspace")
    notReady: list[str] = Field(
        description="Ids with no stored original, or still being read for the first time"
    )
