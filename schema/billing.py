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
    currency: str = Field(description="Currency the account is billed in (ISO 4217)")
    provider: Literal["local"] = Field(description="Where charges are recorded: the local ledger")
    ownedByCaller: bool = Field(description="True when the caller is the account's owner")
    createdAt: datetime = Field(description="When the account was opened")


class BillingPlan(CapabilityOutput):
    """A plan of the catalog."""

    id: str = Field(description="Plan id")
    name: str = Field(description="Plan name, as shown to people")
    price: Money = Field(description="Price per period")
    currency: str = Field(description="Currency of the plan's prices (ISO 4217)")
    interval: Literal["month", "year"] = Field(description="How often the plan is billed")
    documentsIncluded: int = Field(description="Documents processed per period within the price")
    overagePerDocument: Money | None = Field(
        description="Price of each document beyond the quota; null: not billed"
    )
    seats: int = Field(description="Members the plan includes")
    apiCallsIncluded: int = Field(description="Capability calls per period within the price")
    storageBytesIncluded: int = Field(description="Bytes of stored originals within the price")
    features: list[str] = Field(
        description="Keys of the features the plan includes (see BillingFeature)"
    )


class BillingSubscription(CapabilityOutput):
    """A workspace's subscription."""

    id: str = Field(description="Subscription id, sub_…")
    workspaceId: str = Field(description="The workspace the subscription is for")
    workspaceName: str | None = Field(description="That workspace's name")
    status: Literal["active"] = Field(description="The subscription's state")
    plan: BillingPlan = Field(description="The plan subscribed to")
    pendingPlanId: str | None = Field(
        description="A plan of another interval that starts at the next renewal"
    )
    currentPeriodStart: datetime = Field(description="Start of the current billing period")
    currentPeriodEnd: datetime = Field(description="End of the current billing period")
    createdAt: datetime = Field(description="When the subscription began")


class BillingUsage(CapabilityOutput):
    """Usage of the current period, counted as it happens (storage: now)."""

    periodStart: datetime = Field(description="Start of the period counted")
    periodEnd: datetime = Field(description="End of the period counted")
    documentsProcessed: int = Field(description="Documents that finished processing this period")
    documentsIncluded: int = Field(description="The quota, prorated when the plan changed")
    documentsOverQuota: int = Field(
        description="Documents processed beyond the quota (billed as overage)"
    )
    apiCalls: int = Field(description="Capability calls made in this workspace this period")
    apiCallsIncluded: int = Field(description="Capability calls the plan includes this period")
    storageBytes: int = Field(description="Size of the stored originals")
    storageBytesIncluded: int = Field(description="Bytes of stored originals the plan includes")
    seatsUsed: int = Field(description="Members of the workspace")
    seatsIncluded: int = Field(description="Members the plan includes")


class BillingFeature(CapabilityOutput):
    """A feature of the catalog."""

    key: str = Field(description="The feature's key, as plans list it")
    name: str = Field(description="The feature's name, as shown to people")
    included: bool = Field(description="True when the workspace's plan includes it")


class BillingInvoiceLine(CapabilityOutput):
    """One line of an invoice or charge."""

    kind: Literal["plan", "overage", "charge"] = Field(description="What the line bills")
    description: str = Field(description="The line's text, as printed on the invoice")
    quantity: int = Field(description="How many units")
    unitAmount: Money = Field(description="Price of one unit")
    amount: Money = Field(description="quantity × unitAmount")
    planId: str | None = Field(description="The plan a plan line bills")
    periodStart: datetime | None = Field(description="Start of the period the line covers")
    periodEnd: datetime | None = Field(description="End of the period the line covers")


class BillingUpcomingInvoice(CapabilityOutput):
    """The invoice of the current period, as it stands now (issued after the period ends)."""

    periodStart: datetime = Field(description="Start of the period invoiced")
    periodEnd: datetime = Field(description="End of the period invoiced")
    currency: str = Field(description="Currency of the amounts (ISO 4217)")
    lines: list[BillingInvoiceLine] = Field(description="The invoice's lines so far")
    total: Money = Field(description="The sum of the lines")


class BillingOverview(CapabilityOutput):
    """The billing account and subscription of the active workspace, or the caller's own
    account (and the subscriptions it pays for) when no workspace is active."""

    account: BillingAccount = Field(description="The billing account")
    subscription: BillingSubscription | None = Field(
        description="The active workspace's subscription; null without a workspace"
    )
    subscriptions: list[BillingSubscription] = Field(
        description="Without a workspace: every subscription billed to the caller's account"
    )
    usage: BillingUsage | None = Field(
        description="The active workspace's usage this period; null without a workspace"
    )
    features: list[BillingFeature] | None = Field(
        description="Features of the active workspace's plan; null without a workspace"
    )
    upcomingInvoice: BillingUpcomingInvoice | None = Field(
        description="The active workspace's invoice so far; null without a workspace"
    )


class BillingHistoryEntry(CapabilityOutput):
    """An invoice or a one-off charge of the caller's billing account."""

    id: str = Field(description="inv_… for invoices, chg_… for one-off charges")
    kind: Literal["invoice", "charge"] = Field(
        description="An invoice for a period, or a one-off charge"
    )
    status: Literal["issued"] = Field(description="The entry's state")
    description: str = Field(description="What the entry bills, in words")
    workspaceId: str | None = Field(description="The workspace billed, when the entry is for one")
    subscriptionId: str | None = Field(
        description="The subscription invoiced, when the entry is for one"
    )
    periodStart: datetime | None = Field(description="Start of the period invoiced")
    periodEnd: datetime | None = Field(description="End of the period invoiced")
    currency: str = Field(description="Currency of the amounts (ISO 4217)")
    total: Money = Field(description="The sum of the lines")
    lines: list[BillingInvoiceLine] = Field(description="The entry's lines")
    issuedAt: datetime = Field(description="When the entry was issued")


class BillingHistory(CapabilityOutput):
    """One page of billing history, newest first."""

    entries: list[BillingHistoryEntry] = Field(description="The entries of this page, newest first")
    hasMore: bool = Field(description="True when older entries follow")
    nextCursor: str | None = Field(description="Pass as startingAfter for the next page")
