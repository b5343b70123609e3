"""The pipeline's contract: the document on its way (``Intake``), what a step may use
(``StepContext``), what a step is (``Step``) and how it ends the pipeline early (``StopPipeline``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from domain.documents import NothingSaved
from engines.analysis import Analysis
from persistence.documents import Loaded, StoredDocument, StoredFile

if TYPE_CHECKING:
    from resolvers.framework.services import Services


@dataclass(frozen=True)
class Intake:
    """A document on its way through the pipeline: what the steps have found so far."""

    workspace_id: str
    document_id: str
    activity_id: str
    loaded: Loaded  # as read when processing began: its write compares and derives from it
    received_by: str | None = None  # the user whose preferences apply (the uploader), if any
    original: bytes | None = None
    preferred_currency: str | None = None
    category_overrides: Mapping[str, str] = field(default_factory=dict)
    analysis: Analysis | None = None
    fields: Mapping[str, Any] = field(default_factory=dict)  # API-level document fields
    duplicate: tuple[str, str] | None = None  # (original id, why)
    # Documents that arrived after this one, were finished first and are its duplicates.
    later_copies: tuple[tuple[str, str], ...] = ()  # ((document id, why), …)
    vector: Any = None  # the embedding of the fields' text (unit float32 row), when made
    notes: tuple[str, ...] = ()  # what makes the outcome a warning, in order
    events: tuple[str, ...] = ()  # what else happened (automation rules), for the reasoning

    @property
    def record(self) -> StoredDocument:
        """The stored record as processing began: the steps need its stored-only parts (the
        original's GridFS id, its place among an item's originals for arrival order)."""
        return self.loaded.stored

    @property
    def file(self) -> StoredFile:
        return self.record["file"]


@dataclass(frozen=True)
class StepContext:
    """What every step may use; built once per document (no settings are read in steps)."""

    services: Services
    today: date


class Step(Protocol):
    """One step of the pipeline."""

    name: ClassVar[str]

    def applies(self, intake: Intake) -> bool:
        """Whether the step has anything to do for this document."""
        ...

    async def run(self, intake: Intake, ctx: StepContext) -> Intake:
        """The intake with what this step found or did; raise ``StopPipeline`` to end here."""
        ...


class StopPipeline(Exception):
    """The document ends here with ``status`` and ``reason`` (not a receipt; unreadable)."""

    def __init__(self, status: NothingSaved, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
