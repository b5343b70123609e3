"""Contract models of the integrations and exports resources."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import Field

from engines.connectors.registry import provider_ids
from schema.base import (
    CONNECTOR_ERROR_REASON,
    Boolean,
    CapabilityInput,
    CapabilityOutput,
    Integer,
)

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

    id: str = Field(description="The tenant's id at the provider (tenantId for integrations.send)")
    name: str = Field(description="The tenant's name at the provider")


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
    name: str = Field(description="The product's name, as shown to people")
    category: IntegrationCategory = Field(description="What kind of product it is")
    status: IntegrationStatus = Field(
        description="Whether it is connected in this workspace, or failing"
    )
    configured: bool = Field(description="Whether this server has the provider's client id")
    connectUrl: str | None = Field(
        default=None, description="GET it (with your API key) to start the OAuth connection"
    )
    tenants: list[IntegrationTenant] = Field(
        description="Organisations or companies the connection reaches"
    )
    connectedAt: datetime | None = Field(default=None, description="When it was connected")
    lastError: str | None = Field(default=None, description="The last failure, in words")
    lastErrorReason: str | None = Field(default=None, description=CONNECTOR_ERROR_REASON)
    settings: IntegrationSettings | None = Field(
        default=None, description="The workspace's settings for it (mappings), if any"
    )


class IntegrationList(CapabilityOutput):
    """The integrations matching the filters."""

    integrations: list[Integration] = Field(description="The integrations")


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
    method: str = Field(description="HTTP method")
    url: str = Field(description="The provider's URL")
    headers: dict[str, str] = Field(description="Request headers (authorization omitted)")
    body: Any = Field(description="The JSON body (for an upload: its metadata)")
    note: str = Field(description="What the request does, in words")


class SendResult(CapabilityOutput):
    """Preview: the requests and warnings. Execute: the queued export record."""

    status: Literal["preview", "queued"]
    dryRun: bool = Field(description="True for a preview: nothing was sent or queued")
    documentId: str = Field(description="The document sent")
    integrationId: str = Field(description="The integration it goes to")
    tenantId: str = Field(description="The tenant it goes to")
    requests: list[ExportRequest] = Field(description="The HTTP requests of the delivery, in order")
    warnings: list[str] = Field(description="What may not come through as expected")
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
    """An attachment at the provider."""

    id: str | None = Field(default=None, description="The attachment's id at the provider")
    fileName: str | None = Field(default=None, description="The attachment's file name")


class UnlinkResult(CapabilityOutput):
    """Preview: the remote bill and the attachments that would be orphaned. Execute: done."""

    status: Literal["preview", "unlinked"]
    dryRun: bool = Field(description="True for a preview: nothing was changed")
    documentId: str = Field(description="The document unlinked")
    exportRecordId: str = Field(description="The export record ended")
    integrationId: str = Field(description="The integration it was exported to")
    tenantId: str = Field(description="The tenant it was exported to")
    action: str = Field(description="void or delete (what happens to the remote bill)")
    remoteInvoice: dict[str, Any] = Field(
        description="The remote bill, as the provider describes it"
    )
    orphanedAttachments: list[RemoteAttachment] = Field(
        description="Attachments left at the provider without their bill"
    )
    warnings: list[str] = Field(description="What to check at the provider")
    exportStatus: Literal["exported", "not-exported"] = Field(
        description="The document's export status afterwards"
    )


class GetExport(CapabilityInput):
    """Input of exports.get."""

    id: str = Field(min_length=1, max_length=100, description="Export record id (exp_…)")


class ListExports(CapabilityInput):
    """Input of exports.list: both filters are optional; ``{}`` lists the newest exports."""

    documentId: str | None = Field(
        default=None, min_length=1, max_length=100, description="Only this document's exports"
    )
    status: ExportRecordStatus | None = Field(
        default=None, description="Only exports with this status"
    )
    limit: Integer = Field(default=20, ge=1, le=100, description="Page size")
    cursor: str | None = Field(
        default=None, min_length=1, max_length=2000, description="nextCursor of the previous page"
    )


class ExportHistoryEntry(CapabilityOutput):
    """One step of an export: the status reached and when."""

    status: str = Field(description="The status the export reached")
    at: datetime = Field(description="When it reached it")
    note: str | None = Field(default=None, description="What happened, in words")


class ExportRemote(CapabilityOutput):
    """What the provider created."""

    invoiceId: str | None = Field(default=None, description="The bill's id at the provider")
    entity: str | None = Field(default=None, description="The kind of record created (e.g. a bill)")
    vendorId: str | None = Field(
        default=None, description="The supplier's contact id at the provider"
    )
    attachmentIds: list[str] | None = Field(
        default=None, description="Ids of the attachments uploaded"
    )
    url: str | None = Field(default=None, description="Where to open the record at the provider")
    status: str | None = Field(default=None, description="The record's status at the provider")


class ExportPayloadSummary(CapabilityOutput):
    """What a delivery sends the provider, in short."""

    vendor: str = Field(description="The supplier named on the bill")
    date: str = Field(description="The bill's date (YYYY-MM-DD)")
    dueDate: str = Field(description="The bill's due date (YYYY-MM-DD)")
    currency: str = Field(description="Currency of the bill (ISO 4217)")
    total: float = Field(description="The bill's total")
    taxTotal: float | None = Field(default=None, description="Its tax, when known")
    reference: str = Field(description="The reference sent (invoice or receipt number)")
    lines: int = Field(description="How many lines the bill has")
    attachment: str | None = Field(default=None, description="File name of the original attached")


class ExportRecord(CapabilityOutput):
    """One export of a document to an accounting tenant."""

    id: str = Field(description="Export record id")
    documentId: str = Field(description="The document exported")
    integrationId: str = Field(description="The integration it goes to")
    tenantId: str = Field(description="The tenant it goes to")
    status: ExportRecordStatus = Field(description="Where the delivery stands")
    history: list[ExportHistoryEntry] = Field(description="Each status reached, oldest first")
    remote: ExportRemote = Field(description="What the provider created")
    payloadSummary: ExportPayloadSummary = Field(description="What was sent, in short")
    warnings: list[str] = Field(description="What may not have come through as expected")
    error: str | None = Field(default=None, description="The last failure, in words")
    errorReason: str | None = Field(default=None, description=CONNECTOR_ERROR_REASON)
    attempts: int = Field(description="Delivery attempts so far")
    requestedBy: str = Field(description="The user who asked for the export")
    approvedBy: str | None = Field(
        default=None, description="The owner or admin who approved it (null: not gated)"
    )
    createdAt: datetime = Field(description="When the export was requested")
    updatedAt: datetime = Field(description="When its status last changed")


class ExportPage(CapabilityOutput):
    """One page of export records, newest first; ``nextCursor`` is null on the last page."""

    exports: list[ExportRecord] = Field(description="The page, newest first")
    nextCursor: str | None = Field(default=None, description="For the next page; null on the last")
