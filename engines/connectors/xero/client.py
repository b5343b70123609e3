"""Xero: OAuth 2.0 (authorization code), tenants from ``/connections``, bills as ACCPAY invoices.

A document becomes an ``ACCPAY`` invoice (a bill) in DRAFT, so the accountant approves it in
Xero: the contact by name (Xero reuses a contact of that name, else creates it), date, due
date, currency, tax-inclusive line items with account code and tax type, the supplier's
invoice number as ``InvoiceNumber`` (what Xero shows as the bill's reference) and the original
as an attachment. Every creating request carries an ``Idempotency-Key`` (the export id and the
step), so a retry after a lost response gets the first answer back instead of a second bill.
Unlinking voids an AUTHORISED bill and deletes a DRAFT or SUBMITTED one; Xero's API cannot
delete attachments, so they stay on the voided or deleted bill (orphaned).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from engines.connectors.base import (
    Bill,
    OAuthApp,
    OAuthConnector,
    Plan,
    PlannedRequest,
    RemoteTenant,
    SaveProgress,
    TokenSet,
    money,
    send,
    string_literal,
)
from engines.connectors.errors import InvalidAnswer, OriginalUnreadable, RemotePaid
from engines.connectors.xero import XERO

INVOICES = "/api.xro/2.0/Invoices"


def _quoted(text: str) -> str:
    """A string literal for Xero's ``where`` filter."""
    return string_literal(text, '"')


class XeroConnector(OAuthConnector[OAuthApp]):
    """Xero's accounting API."""

    settings_type = OAuthApp
    id = XERO.id
    name = XERO.title
    scope = (
        "openid profile email offline_access accounting.transactions accounting.contacts "
        "accounting.attachments"
    )

    def request_url(self, tenant_id: str, path: str) -> str:
        return self.settings.api_url + path

    def _headers(self, access_token: str, tenant_id: str | None = None) -> dict[str, str]:
        headers = self._bearer(access_token)
        if tenant_id is not None:
            headers["xero-tenant-id"] = tenant_id
        return headers

    async def tenants(self, tokens: TokenSet, callback: Mapping[str, str]) -> list[RemoteTenant]:
        async with self._client() as client:
            response = await send(
                client,
                "GET",
                f"{self.settings.api_url}/connections",
                "list Xero connections",
                headers=self._headers(tokens.access_token),
            )
        return [
            RemoteTenant(
                id=str(item["tenantId"]),
                name=str(item.get("tenantName") or item["tenantId"]),
                connection_id=str(item["id"]),
            )
            for item in response.json()
            if item.get("tenantType", "ORGANISATION") == "ORGANISATION"
        ]

    async def disconnect(self, tokens: TokenSet, tenants: list[RemoteTenant]) -> None:
        async with self._client() as client:
            for tenant in tenants:
                if tenant.connection_id:
                    await send(
                        client,
                        "DELETE",
                        f"{self.settings.api_url}/connections/{tenant.connection_id}",
                        "disconnect a Xero tenant",
                        headers=self._headers(tokens.access_token),
                    )

    async def plan(self, access_token: str, tenant_id: str, bill: Bill) -> Plan:
        warnings: list[str] = []
        async with self._client() as client:
            found = await send(
                client,
                "GET",
                f"{self.settings.api_url}/api.xro/2.0/Contacts",
                "look up the Xero contact",
                params={"where": f"Name=={_quoted(bill.vendor)}"},
                headers=self._headers(access_token, tenant_id),
            )
        contacts = found.json().get("Contacts") or []
        contact_id = str(contacts[0]["ContactID"]) if contacts else None
        if contact_id is None:
            warnings.append(f"Unknown vendor: Xero will create the contact '{bill.vendor}'")
        contact: dict[str, Any] = {"ContactID": contact_id} if contact_id else {"Name": bill.vendor}
        lines = []
        for line in bill.lines:
            item: dict[str, Any] = {
                "Description": line.description,
                "Quantity": float(line.quantity),
                "UnitAmount": money(line.unit_amount),
                "LineAmount": money(line.amount),
                "AccountCode": line.account_code,
            }
            if line.tax_code:
                item["TaxType"] = line.tax_code
            if line.tax_amount is not None:
                item["TaxAmount"] = money(line.tax_amount)
            lines.append(item)
        invoice = {
            "Type": "ACCPAY",
            "Contact": contact,
            "Date": bill.date.isoformat(),
            "DueDate": bill.due_date.isoformat(),
            "CurrencyCode": bill.currency,
            "LineAmountTypes": "Inclusive",
            "LineItems": lines,
            "InvoiceNumber": bill.reference,
            "Status": "DRAFT",
        }
        requests = [
            PlannedRequest(
                "bill",
                "PUT",
                INVOICES,
                {"Invoices": [invoice]},
                {"Content-Type": "application/json"},
                "creates the bill (ACCPAY invoice) in DRAFT",
            )
        ]
        if bill.attachment is not None:
            requests.append(
                PlannedRequest(
                    "attachment",
                    "PUT",
                    f"{INVOICES}/{{InvoiceID}}/Attachments/{quote(bill.attachment.file_name)}",
                    {
                        "fileName": bill.attachment.file_name,
                        "size": bill.attachment.size,
                        "sha256": bill.attachment.sha256,
                    },
                    {"Content-Type": bill.attachment.mime_type},
                    "uploads the original (the body is the file's bytes)",
                )
            )
        return Plan(tuple(requests), tuple(warnings), contact_id)

    async def deliver(
        self,
        access_token: str,
        tenant_id: str,
        plan: Plan,
        original: bytes | None,
        key: str,
        progress: dict[str, Any],
        save: SaveProgress,
    ) -> dict[str, Any]:
        api = self.settings.api_url
        async with self._client() as client:
            for request in plan.requests:
                headers = {**self._headers(access_token, tenant_id), **request.headers}
                # Xero keeps the answer to a key for a while: the same key replays it.
                headers["Idempotency-Key"] = f"{key}:{request.step}"
                if request.step == "bill" and not progress.get("invoiceId"):
                    response = await send(
                        client,
                        request.method,
                        api + request.path,
                        "create the Xero bill",
                        json=request.body,
                        headers=headers,
                    )
                    created = (response.json().get("Invoices") or [{}])[0]
                    if "InvoiceID" not in created:
                        raise InvalidAnswer("Xero answered without an InvoiceID")
                    progress["invoiceId"] = str(created["InvoiceID"])
                    progress["status"] = created.get("Status", "DRAFT")
                    progress["url"] = (
                        "https://go.xero.com/AccountsPayable/View.aspx?InvoiceID="
                        + progress["invoiceId"]
                    )
                    await save(progress)
                elif request.step == "attachment" and not progress.get("attachmentIds"):
                    if original is None:
                        raise OriginalUnreadable(
                            "the original could not be read for the attachment"
                        )
                    path = request.path.replace("{InvoiceID}", progress["invoiceId"])
                    response = await send(
                        client,
                        request.method,
                        api + path,
                        "attach the original in Xero",
                        content=original,
                        headers=headers,
                    )
                    attachments = response.json().get("Attachments") or []
                    progress["attachmentIds"] = [str(a["AttachmentID"]) for a in attachments]
                    await save(progress)
        return progress

    async def describe(
        self, access_token: str, tenant_id: str, remote: dict[str, Any]
    ) -> dict[str, Any]:
        invoice_id = remote["invoiceId"]
        async with self._client() as client:
            response = await send(
                client,
                "GET",
                f"{self.settings.api_url}{INVOICES}/{invoice_id}",
                "read the Xero bill",
                headers=self._headers(access_token, tenant_id),
            )
            invoice = (response.json().get("Invoices") or [{}])[0]
            listed = await send(
                client,
                "GET",
                f"{self.settings.api_url}{INVOICES}/{invoice_id}/Attachments",
                "list the Xero bill's attachments",
                headers=self._headers(access_token, tenant_id),
            )
        return {
            "invoiceId": invoice_id,
            "number": invoice.get("InvoiceNumber"),
            "status": invoice.get("Status"),
            "contact": (invoice.get("Contact") or {}).get("Name"),
            "date": invoice.get("DateString") or invoice.get("Date"),
            "total": invoice.get("Total"),
            "currency": invoice.get("CurrencyCode"),
            "attachments": [
                {"id": a.get("AttachmentID"), "fileName": a.get("FileName")}
                for a in listed.json().get("Attachments") or []
            ],
            # Xero's API cannot delete an attachment: it stays on the voided or deleted bill.
            "action": "void" if invoice.get("Status") == "AUTHORISED" else "delete",
        }

    async def remove(
        self, access_token: str, tenant_id: str, remote: dict[str, Any]
    ) -> dict[str, Any]:
        current = await self.describe(access_token, tenant_id, remote)
        if current["status"] in ("VOIDED", "DELETED"):
            return {"status": current["status"], "orphanedAttachments": current["attachments"]}
        if current["status"] == "PAID":
            raise RemotePaid("the Xero bill is paid; remove its payment in Xero before unlinking")
        status = "VOIDED" if current["action"] == "void" else "DELETED"
        async with self._client() as client:
            await send(
                client,
                "POST",
                f"{self.settings.api_url}{INVOICES}/{remote['invoiceId']}",
                "void or delete the Xero bill",
                json={"Invoices": [{"InvoiceID": remote["invoiceId"], "Status": status}]},
                headers=self._headers(access_token, tenant_id),
            )
        return {"status": status, "orphanedAttachments": current["attachments"]}
