"""Contract models of the activity resource: what happened to everything that came in."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer

ActivitySource = Literal["email", "whatsapp", "upload", "inbound-email"]
ActivityStatus = Literal["queued", "processed", "skipped", "failed", "processing", "warning"]
ALL_SOURCES: list[ActivitySource] = ["email", "whatsapp", "upload", "inbound-email"]


class SearchActivity(CapabilityInput):
    """activity.search (spec §4.4)."""

    query: str = Field(
        min_length=2,
        max_length=200,
        description="Words in the sender, subject, file name, caption, message id or reasoning; "
        "a receiving address finds all that arrived at it",
    )
    sourceTypes: list[ActivitySource] = Field(
        default_factory=lambda: list(ALL_SOURCES),
        min_length=1,
        description="Sources to search (default all four)",
    )
    statuses: list[ActivityStatus] | None = Field(
        default=None, min_length=1, description="Only items with one of these statuses"
    )
    page: Integer = Field(default=1, ge=1, le=10000, description="Page, from 1")
    limit: Integer = Field(default=10, ge=1, le=50, description="Items per page")
    includeSourceDetails: Boolean = Field(
        default=True,
        description="Reload matching provider messages for subject, sender and snippet",
    )
    providerResultLimit: Integer = Field(
        default=25, ge=1, le=100, description="Messages asked of each connected provider"
    )


class ActivitySourceDetails(CapabilityOutput):
    """Where an item came from, as the source shows it."""

    subject: str | None = None
    sender: str | None = None
    snippet: str | None = None
    recipient: str | None = Field(default=None, description="Receiving address (inbound email)")
    fileName: str | None = None
    mailboxId: str | None = None
    fromProvider: bool = Field(
        default=False, description="True when reloaded from the connected mailbox just now"
    )


class ActivityItem(CapabilityOutput):
    """One incoming item and what processing made of it."""

    id: str
    sourceType: ActivitySource
    status: ActivityStatus
    reasoning: str
    documentIds: list[str]
    messageId: str | None = None
    createdAt: datetime
    updatedAt: datetime
    source: ActivitySourceDetails | None = Field(
        default=None, description="With includeSourceDetails: subject, sender, snippet"
    )


class ProviderReport(CapabilityOutput):
    """How one connected mailbox answered the search."""

    mailboxId: str
    username: str
    server: str
    status: Literal["ok", "error"]
    matched: int = Field(description="Messages the provider found")
    error: str | None = None


class ActivitySearchResult(CapabilityOutput):
    """A page of matching activity items, newest first."""

    items: list[ActivityItem]
    page: int
    limit: int
    total: int = Field(description="Matching items on all pages")
    hasMore: bool
    providers: list[ProviderReport] = Field(
        description="Connected mailboxes searched for the email source; a failing one is "
        "reported here and the search goes on"
    )
