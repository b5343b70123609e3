"""Contract models of the billing resource (spec §4.4: billing.get, billing.listHistory)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer
from schema.money import Money


class GetBilling(CapabilityInput):
    """billing.get: what to include besides the account and the subscription."""

    includeUsage: Boolean = Field(
        default=True,
        description="Usage of the current period (documents, API calls, storage, seats)",
    )
    includeFeatures: Boolean = Field(
        default=True, description="Every feature of the catalog and whether the plan includes it"
    )
    includeUpcomingInvoice: Boolean = Field(
        default=True, description="The invoice the current period comes to if nothing changes"
    )


class ListBillingHistory(CapabilityInput):
    """billing.listHistory: one page of the caller's own invoices and charges, newest first."""

    limit: Integer = Field(default=100, ge=1, le=100, description="Entries per page")
    startingAfter: str | None = Field(
        default=None,
        min_length=1,
        max_length=2048,
        description="The nextCursor of the previous page",
    )


class ChangeBillingPlan(CapabilityInput):
    """billing.change-plan: the plan the active workspace moves to."""

    planId: str = Field(min_length=1, max_length=40, description="A plan id of the catalog")


class BillingAccount(CapabilityOutput):
    """A billing account: the person who pays for the workspaces they own."""

    id: str = Field(description="Billing account id, bac_…")
    currency: str
    provider: Literal["local"] = Field(description="Where charges are recorded: the local ledger")
    ownedByCaller: bool = Field(description="True when the caller is the account's owner")
    createdAt: datetime


class BillingPlan(CapabilityOutput):
    """A plan of the catalog."""

    id: str
    name: str
    price: Money = Field(description="Price per period")
    currency: str
    interval: Literal["month", "year"]
    documentsIncluded: int
    overagePerDocument: Money | None = Field(
        description="Price of each document beyond the quota; null: not billed"
    )
    seats: int
    apiCallsIncluded: int
    storageBytesIncluded: int
    features: list[str]


class BillingSubscription(CapabilityOutput):
    """A workspace's subscription."""

    id: str = Field(description="Subscription id, sub_…")
    workspaceId: str
    workspaceName: str | None
    status: Literal["active"]
    plan: BillingPlan
    pendingPlanId: str | None = Field(
        description="A plan of another interval that starts at the next renewal"
    )
    currentPeriodStart: datetime
    currentPeriodEnd: datetime
    createdAt: datetime


class BillingUsage(CapabilityOutput):
    """Usage of the current period, counted as it happens (storage: now)."""

    periodStart: datetime
    periodEnd: datetime
    documentsProcessed: int = Field(description="Documents that finished processing this period")
    documentsIncluded: int = Field(description="The quota, prorated when the plan changed")
    documentsOverQuota: int
    apiCalls: int = Field(description="Capability calls made in this workspace this period")
    apiCallsIncluded: int
    storageBytes: int = Field(description="Size of the stored originals")
    storageBytesIncluded: int
    seatsUsed: int = Field(description="Members of the workspace")
    seatsIncluded: int


class BillingFeature(CapabilityOutput):
    """A feature of the catalog."""

    key: str
    name: str
    included: bool = Field(description="True when the workspace's plan includes it")


class BillingInvoiceLine(CapabilityOutput):
    """One line of an invoice or charge."""

    kind: Literal["plan", "overage", "charge"]
    description: str
    quantity: int
    unitAmount: Money
    amount: Money
    planId: str | None
    periodStart: datetime | None
    periodEnd: datetime | None


class BillingUpcomingInvoice(CapabilityOutput):
    """The invoice of the current period, as it stands now (issued after the period ends)."""

    periodStart: datetime
    periodEnd: datetime
    currency: str
    lines: list[BillingInvoiceLine]
    total: Money


class BillingOverview(CapabilityOutput):
    """The billing account and subscription of the active workspace, or the caller's own
    account (and the subscriptions it pays for) when no workspace is active."""

    account: BillingAccount
    subscription: BillingSubscription | None = Field(
        description="The active workspace's subscription; null without a workspace"
    )
    subscriptions: list[BillingSubscription] = Field(
        description="Without a workspace: every subscription billed to the caller's account"
    )
    usage: BillingUsage | None
    features: list[BillingFeature] | None
    upcomingInvoice: BillingUpcomingInvoice | None


class BillingHistoryEntry(CapabilityOutput):
    """An invoice or a one-off charge of the caller's billing account."""

    id: str = Field(description="inv_… for invoices, chg_… for one-off charges")
    kind: Literal["invoice", "charge"]
    status: Literal["issued"]
    description: str
    workspaceId: str | None
    subscriptionId: str | None
    periodStart: datetime | None
    periodEnd: datetime | None
    currency: str
    total: Money
    lines: list[BillingInvoiceLine]
    issuedAt: datetime


class BillingHistory(CapabilityOutput):
    """One page of billing history, newest first."""

    entries: list[BillingHistoryEntry]
    hasMore: bool
    nextCursor: str | None = Field(description="Pass as startingAfter for the next page")
