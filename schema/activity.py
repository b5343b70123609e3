"""Contract models of the activity resource: what happened to everything that came in."""

from __future__ import annotations

from datetime import datetime
from typing import Literal, get_args

from pydantic import Field

from domain.documents import ActivitySource, ActivityStatus
from schema.base import (
    CONNECTOR_ERROR_REASON,
    Boolean,
    CapabilityInput,
    CapabilityOutput,
    Integer,
)

ALL_SOURCES: list[ActivitySource] = list(get_args(ActivitySource))


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

    subject: str | None = Field(
        default=None, description="The e-mail's subject line (e-mail sources)"
    )
    sender: str | None = Field(
        default=None, description="Who sent the item: an e-mail address or a phone number"
    )
    snippet: str | None = Field(default=None, description="The first words of the message text")
    recipient: str | None = Field(default=None, description="Receiving address (inbound email)")
    fileName: str | None = Field(default=None, description="Name of the attached or uploaded file")
    mailboxId: str | None = Field(
        default=None, description="The connected mailbox the item was read from"
    )
    fromProvider: bool = Field(
        default=False, description="True when reloaded from the connected mailbox just now"
    )


class ActivityItem(CapabilityOutput):
    """One incoming item and what processing made of it."""

    id: str = Field(description="Activity item id (act_…)")
    sourceType: ActivitySource = Field(description="How the item arrived")
    status: ActivityStatus = Field(description="Where processing stands, or how it ended")
    reasoning: str = Field(description="Why processing ended as it did, in words")
    errorReason: str | None = Field(default=None, description=CONNECTOR_ERROR_REASON)
    documentIds: list[str] = Field(
        description="Documents made from the item (none when it was skipped or failed)"
    )
    messageId: str | None = Field(
        default=None,
        description="The message's id at its source (an e-mail's Message-ID, else a digest of "
        "it; a WhatsApp message id)",
    )
    createdAt: datetime = Field(description="When the item arrived")
    updatedAt: datetime = Field(description="When its status last changed")
    source: ActivitySourceDetails | None = Field(
        default=None, description="With includeSourceDetails: subject, sender, snippet"
    )


class ProviderReport(CapabilityOutput):
    """How one connected mailbox answered the search."""

    mailboxId: str = Field(description="The connected mailbox")
    username: str = Field(description="The account name the mailbox signs in with")
    server: str = Field(description="The mail server's host name")
    status: Literal["ok", "error"] = Field(
        description="ok when the mailbox answered, error when it did not"
    )
    matched: int = Field(description="Messages the provider found")
    error: str | None = Field(
        default=None, description="Why the mailbox did not answer (status error)"
    )
    errorReason: str | None = Field(default=None, description=CONNECTOR_ERROR_REASON)


class ActivitySearchResult(CapabilityOutput):
    """A page of matching activity items, newest first."""

    items: list[ActivityItem] = Field(description="The matching items of this page")
    page: int = Field(description="This page's number, from 1")
    limit: int = Field(description="Items per page")
    total: int = Field(description="Matching items on all pages")
    hasMore: bool = Field(description="True when a next page has more items")
    providers: list[ProviderReport] = Field(
        description="Connected mailboxes searched for the email source; a failing one is "
        "reported here and the search goes on"
    )
