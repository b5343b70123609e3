"""Contract models of the integrations and exports resources."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from engines.connectors.registry import provider_ids
from schema.base import Boolean, CapabilityInput, CapabilityOutput

IntegrationCategory = Literal["email", "accounting", "storage", "social"]
IntegrationStatus = Literal["available", "connected", "error"]
ExportRecordStatus = Literal["queued", "sending", "exported", "failed", "unlinked"]
Id = Field(min_length=1, max_length=100, description="integrationId from integrations.list")


class ListIntegrations(CapabilityInput):
    """Input of integrations.list: both filters are optional; ``{}`` lists every integration."""

    category: IntegrationCategory | None = Field(
        default=None, description="Only integrations of this category"
    )
    status: IntegrationStatus | None = Field(
        default=None, description="Only integrations with this status in the workspace"
    )


class IntegrationTenant(CapabilityOutput):
    """An organisation (Xero) or company (QuickBooks realm) the connection reaches: pass its
    id as tenantId to integrations.send."""

    id: str
    name: str


class IntegrationSettings(CapabilityOutput):
    """How documents become bills in this integration, for this workspace (defaults filled)."""

    accountCodes: dict[str, str] = Field(description="Document category → account code")
    defaultAccountCode: str = Field(description="Account for categories not mapped")
    taxCodes: dict[str, str] = Field(
        description="Tax rate in percent ('20', '5.5') → the product's tax type/code"
    )
    paymentAccount: str | None = Field(
        default=None, description="Account receipts were paid from (QuickBooks purchases)"
    )


class Integration(CapabilityOutput):
    """An integration and its state in the current workspace."""

    id: str = Field(description="integrationId for integrations.send")
    name: str
    category: IntegrationCategory
    status: IntegrationStatus
    configured: bool = Field(description="Whether this server has the provider's client id")
    connectUrl: str | None = Field(
        default=None, description="GET it (with your API key) to start the OAuth connection"
    )
    tenants: list[IntegrationTenant]
    connectedAt: datetime | None = None
    lastError: str | None = None
    settings: IntegrationSettings | None = None


class IntegrationList(CapabilityOutput):
    """The integrations matching the filters."""

    integrations: list[Integration]


class IntegrationRef(CapabilityInput):
    """An integration by id."""

    integrationId: str = Id


class ConfigureIntegration(CapabilityInput):
    """Changes how documents map to this integration's accounts (only the fields sent)."""

    integrationId: str = Id
    accountCodes: dict[str, str | None] | None = Field(
        default=None, description="Category → account code; null removes a category's mapping"
    )
    defaultAccountCode: str | None = Field(
        default=None, min_length=1, max_length=100, description="Account for unmapped categories"
    )
    taxCodes: dict[str, str | None] | None = Field(
        default=None, description="Rate in percent → tax code; null removes one"
    )
    paymentAccount: str | None = Field(
        default=None, min_length=1, max_length=100, description="Account purchases are paid from"
    )


class SendToIntegration(CapabilityInput):
    """Input of integrations.send."""

    documentId: str = Field(min_length=1, max_length=100, description="Document to send")
    integrationId: str = Field(
        min_length=1,
        max_length=100,
        description=f"From integrations.list ({', '.join(provider_ids())})",
    )
    tenantId: str = Field(
        min_length=1,
        max_length=200,
        description="Tenant/company id from the integration's tenants",
    )
    dryRun: Boolean = Field(
        default=True, description="true previews the exact request; false queues the export"
    )


class ExportRequest(CapabilityOutput):
    """One HTTP request of the delivery, exactly as it will be sent (authorization omitted)."""

    step: str = Field(description="vendor, bill or attachment")
    method: str
    url: str
    headers: dict[str, str]
    body: Any = Field(description="The JSON body (for an upload: its metadata)")
    note: str


class SendResult(CapabilityOutput):
    """Preview: the requests and warnings. Execute: the queued export record."""

    status: Literal["preview", "queued"]
    dryRun: bool
    documentId: str
    integrationId: str
    tenantId: str
    requests: list[ExportRequest]
    warnings: list[str]
    exportRecordId: str | None = Field(default=None, description="For exports.get")


class UnlinkDocument(CapabilityInput):
    """Input of integrations.unlink."""

    documentId: str = Field(min_length=1, max_length=100, description="Document to unlink")
    exportRecordId: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="The export to undo; default: the document's current export",
    )
    dryRun: Boolean = Field(
        default=True, description="true previews; false voids/deletes remotely (IRREVERSIBLE)"
    )


class RemoteAttachment(CapabilityOutput):
    id: str | None = None
    fileName: str | None = None


class UnlinkResult(CapabilityOutput):
    """Preview: the remote bill and the attachments that would be orphaned. Execute: done."""

    status: Literal["preview", "unlinked"]
    dryRun: bool
    documentId: str
    exportRecordId: str
    integrationId: str
    tenantId: str
    action: str = Field(description="void or delete (what happens to the remote bill)")
    remoteInvoice: dict[str, Any]
    orphanedAttachments: list[RemoteAttachment]
    warnings: list[str]
    exportStatus: Literal["exported", "not-exported"]


class GetExport(CapabilityInput):
    """Input of exports.get."""

    id: str = Field(min_length=1, max_length=100, description="Export record id (exp_…)")


class ExportHistoryEntry(CapabilityOutput):
    status: str
    at: datetime
    note: str | None = None


class ExportRemote(CapabilityOutput):
    """What the provider created."""

    invoiceId: str | None = None
    entity: str | None = None
    vendorId: str | None = None
    attachmentIds: list[str] | None = None
    url: str | None = None
    status: str | None = None


class ExportPayloadSummary(CapabilityOutput):
    vendor: str
    date: str
    dueDate: str
    currency: str
    total: float
    taxTotal: float | None = None
    reference: str
    lines: int
    attachment: str | None = None


class ExportRecord(CapabilityOutput):
    """One export of a document to an accounting tenant."""

    id: str
    documentId: str
    integrationId: str
    tenantId: str
    status: ExportRecordStatus
    history: list[ExportHistoryEntry]
    remote: ExportRemote
    payloadSummary: ExportPayloadSummary
    warnings: list[str]
    error: str | None = None
    attempts: int
    requestedBy: str
    createdAt: datetime
    updatedAt: datetime
