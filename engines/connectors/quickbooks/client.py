"""QuickBooks Online: OAuth 2.0 (authorization code, the company's ``realmId`` on the
redirect), bills and purchases in the v3 accounting API, the original as an ``Attachable``.

An invoice (to pay later) becomes a ``Bill``; a receipt (already paid) a ``Purchase`` paid by
card or cash from the mapped payment account. The vendor is looked up by display name and
created when missing. Every creating request carries ``requestid`` (the export id and the
step), QuickBooks' idempotency key: a retry after a lost response returns the first answer
instead of a second bill. Unlinking deletes the bill or purchase (QuickBooks cannot void
bills); its attachables stay in the company's attachment list, unlinked (orphaned).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

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
from engines.connectors.errors import InvalidAnswer, OriginalUnreadable
from engines.connectors.quickbooks import QUICKBOOKS

MINOR_VERSION = "75"
ENTITY = {"bill": "Bill", "purchase": "Purchase"}
DOC_NUMBER_MAX = 21  # QuickBooks refuses a longer DocNumber


@dataclass(frozen=True)
class QuickBooksSettings(OAuthApp):
    """QuickBooks' app settings: the shared OAuth fields and where a grant is revoked
    (defaults in the declaration)."""

    revoke_url: str


def _quoted(text: str) -> str:
    """A string literal for the QuickBooks query language."""
    return string_literal(text, "'")


class QuickBooksConnector(OAuthConnector[QuickBooksSettings]):
    """QuickBooks Online's accounting API (v3)."""

    settings_type = QuickBooksSettings
    id = QUICKBOOKS.id
    name = QUICKBOOKS.title
    scope = "com.intuit.quickbooks.accounting"

    def request_url(self, tenant_id: str, path: str) -> str:
        return self._company(tenant_id) + path

    def _company(self, realm: str) -> str:
        return f"{self.settings.api_url}/v3/company/{realm}"

    async def tenants(self, tokens: TokenSet, callback: Mapping[str, str]) -> list[RemoteTenant]:
        realm = callback.get("realmId")
        if not realm:
            raise InvalidAnswer("QuickBooks redirected without a realmId (the company id)")
        async with self._client() as client:
            response = await send(
                client,
                "GET",
                f"{self._company(realm)}/companyinfo/{realm}",
                "read the QuickBooks company",
                params={"minorversion": MINOR_VERSION},
                headers=self._bearer(tokens.access_token),
            )
        info = response.json().get("CompanyInfo") or {}
        return [RemoteTenant(id=realm, name=str(info.get("CompanyName") or realm))]

    async def disconnect(self, tokens: TokenSet, tenants: list[RemoteTenant]) -> None:
        async with self._client() as client:
            await send(
                client,
                "POST",
                self.settings.revoke_url,
                "revoke the QuickBooks grant",
                json={"token": tokens.refresh_token},
                headers={"Authorization": self._auth(), "Accept": "application/json"},
            )

    async def _query(self, access_token: str, realm: str, query: str, what: str) -> Any:
        async with self._client() as client:
            response = await send(
                client,
                "GET",
                f"{self._company(realm)}/query",
                what,
                params={"query": query, "minorversion": MINOR_VERSION},
                headers=self._bearer(access_token),
            )
        return response.json().get("QueryResponse") or {}

    async def plan(self, access_token: str, tenant_id: str, bill: Bill) -> Plan:
        warnings: list[str] = []
        found = await self._query(
            access_token,
            tenant_id,
            f"select * from Vendor where DisplayName = {_quoted(bill.vendor)}",
            "look up the QuickBooks vendor",
        )
        vendors = found.get("Vendor") or []
        vendor_id = str(vendors[0]["Id"]) if vendors else None
        requests: list[PlannedRequest] = []
        if vendor_id is None:
            warnings.append(f"Unknown vendor: the vendor '{bill.vendor}' will be created")
            requests.append(
                PlannedRequest(
                    "vendor",
                    "POST",
                    "/vendor",
                    {"DisplayName": bill.vendor},
                    {},
                    "creates the vendor",
                )
            )
        vendor_ref = {"value": vendor_id or "{VendorId}"}
        names = {line.account_code for line in bill.lines}
        if bill.kind == "purchase" and bill.payment_account:
            names.add(bill.payment_account)
        accounts = await self._account_ids(access_token, tenant_id, names, warnings)
        lines = []
        for line in bill.lines:
            detail: dict[str, Any] = {"AccountRef": {"value": accounts[line.account_code]}}
            if line.tax_code:
                detail["TaxCodeRef"] = {"value": line.tax_code}
            lines.append(
                {
                    "DetailType": "AccountBasedExpenseLineDetail",
                    "Amount": money(line.amount),
                    "Description": line.description,
                    "AccountBasedExpenseLineDetail": detail,
                }
            )
        body: dict[str, Any] = {
            "TxnDate": bill.date.isoformat(),
            "CurrencyRef": {"value": bill.currency},
            "DocNumber": bill.reference[:DOC_NUMBER_MAX],
            "PrivateNote": bill.note,
            "GlobalTaxCalculation": "TaxInclusive",
            "Line": lines,
        }
        if bill.kind == "bill":
            body["VendorRef"] = vendor_ref
            body["DueDate"] = bill.due_date.isoformat()
        else:
            body["PaymentType"] = "CreditCard" if bill.paid_by_card else "Cash"
            body["AccountRef"] = {"value": accounts.get(bill.payment_account or "", "")}
            body["EntityRef"] = {**vendor_ref, "type": "Vendor"}
        if len(bill.reference) > DOC_NUMBER_MAX:
            warnings.append(
                f"The reference '{bill.reference}' is longer than QuickBooks' DocNumber "
                f"({DOC_NUMBER_MAX} characters): it is cut to '{bill.reference[:DOC_NUMBER_MAX]}'"
            )
        entity = ENTITY[bill.kind]
        requests.append(
            PlannedRequest("bill", "POST", f"/{entity.lower()}", body, {}, f"creates the {entity}")
        )
        if bill.attachment is not None:
            requests.append(
                PlannedRequest(
                    "attachment",
                    "POST",
                    "/upload",
                    {
                        "AttachableRef": [{"EntityRef": {"type": entity, "value": "{InvoiceId}"}}],
                        "FileName": bill.attachment.file_name,
                        "ContentType": bill.attachment.mime_type,
                    },
                    {"Content-Type": "multipart/form-data"},
                    "uploads the original: this JSON as file_metadata_01, the file as "
                    "file_content_01",
                )
            )
        return Plan(tuple(requests), tuple(warnings), vendor_id)

    async def _account_ids(
        self, access_token: str, realm: str, codes: set[str], warnings: list[str]
    ) -> dict[str, str]:
        """Account ids by code: ids stay, names are looked up in the company's accounts."""
        ids = {code: code for code in codes if code.isdigit()}
        names = sorted(code for code in codes if not code.isdigit())
        if names:
            listed = ", ".join(_quoted(name) for name in names)
            found = await self._query(
                access_token,
                realm,
                f"select * from Account where Name in ({listed})",
                "look up the QuickBooks accounts",
            )
            by_name = {str(a.get("Name")): str(a["Id"]) for a in found.get("Account") or []}
            for name in names:
                if name in by_name:
                    ids[name] = by_name[name]
                else:
                    warnings.append(
                        f"No QuickBooks account named '{name}': map the category to an "
                        "account id with integrations.configure, or the export will fail"
                    )
                    ids[name] = name
        return ids

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
        company = self._company(tenant_id)
        headers = self._bearer(access_token)
        async with self._client() as client:
            for request in plan.requests:
                params = {"minorversion": MINOR_VERSION, "requestid": f"{key}:{request.step}"}
                url = company + request.path
                if request.step == "vendor" and not progress.get("vendorId"):
                    response = await send(
                        client,
                        "POST",
                        url,
                        "create the QuickBooks vendor",
                        json=request.body,
                        params=params,
                        headers=headers,
                    )
                    progress["vendorId"] = str(response.json()["Vendor"]["Id"])
                    await save(progress)
                elif request.step == "bill" and not progress.get("invoiceId"):
                    body = json.loads(
                        json.dumps(request.body).replace(
                            '"{VendorId}"', json.dumps(progress.get("vendorId") or plan.vendor_id)
                        )
                    )
                    entity = "Bill" if "VendorRef" in body else "Purchase"
                    response = await send(
                        client,
                        "POST",
                        url,
                        f"create the QuickBooks {entity}",
                        json=body,
                        params=params,
                        headers=headers,
                    )
                    created = response.json().get(entity) or {}
                    if "Id" not in created:
                        raise InvalidAnswer(f"QuickBooks answered without the {entity} Id")
                    progress.update(
                        invoiceId=str(created["Id"]),
                        entity=entity,
                        syncToken=str(created.get("SyncToken", "0")),
                        status="created",
                        vendorId=progress.get("vendorId") or plan.vendor_id,
                    )
                    await save(progress)
                elif request.step == "attachment" and not progress.get("attachmentIds"):
                    if original is None:
                        raise OriginalUnreadable(
                            "the original could not be read for the attachment"
                        )
                    metadata = json.loads(
                        json.dumps(request.body).replace(
                            '"{InvoiceId}"', json.dumps(progress["invoiceId"])
                        )
                    )
                    files = {
                        "file_metadata_01": (None, json.dumps(metadata), "application/json"),
                        "file_content_01": (
                            metadata["FileName"],
                            original,
                            metadata["ContentType"],
                        ),
                    }
                    response = await send(
                        client,
                        "POST",
                        url,
                        "attach the original in QuickBooks",
                        files=files,
                        params=params,
                        headers=headers,
                    )
                    answers = response.json().get("AttachableResponse") or []
                    progress["attachmentIds"] = [
                        str(a["Attachable"]["Id"]) for a in answers if "Attachable" in a
                    ]
                    await save(progress)
        return progress

    async def describe(
        self, access_token: str, tenant_id: str, remote: dict[str, Any]
    ) -> dict[str, Any]:
        entity = remote.get("entity", "Bill")
        async with self._client() as client:
            response = await send(
                client,
                "GET",
                f"{self._company(tenant_id)}/{entity.lower()}/{remote['invoiceId']}",
                f"read the QuickBooks {entity}",
                params={"minorversion": MINOR_VERSION},
                headers=self._bearer(access_token),
            )
        record = response.json().get(entity) or {}
        attached = await self._query(
            access_token,
            tenant_id,
            "select * from Attachable where AttachableRef.EntityRef.value = "
            + _quoted(str(remote["invoiceId"])),
            "list the QuickBooks attachables",
        )
        return {
            "invoiceId": remote["invoiceId"],
            "entity": entity,
            "number": record.get("DocNumber"),
            "status": "paid" if entity == "Bill" and record.get("Balance") == 0 else "open",
            "contact": (record.get("VendorRef") or record.get("EntityRef") or {}).get("name"),
            "date": record.get("TxnDate"),
            "total": record.get("TotalAmt"),
            "currency": (record.get("CurrencyRef") or {}).get("value"),
            "syncToken": record.get("SyncToken"),
            "attachments": [
                {"id": a.get("Id"), "fileName": a.get("FileName")}
                for a in attached.get("Attachable") or []
            ],
            "action": "delete",
        }

    async def remove(
        self, access_token: str, tenant_id: str, remote: dict[str, Any]
    ) -> dict[str, Any]:
        current = await self.describe(access_token, tenant_id, remote)
        entity = current["entity"]
        async with self._client() as client:
            await send(
                client,
                "POST",
                f"{self._company(tenant_id)}/{entity.lower()}",
                f"delete the QuickBooks {entity}",
                params={"operation": "delete", "minorversion": MINOR_VERSION},
                json={"Id": remote["invoiceId"], "SyncToken": current["syncToken"] or "0"},
                headers=self._bearer(access_token),
            )
        return {"status": "DELETED", "orphanedAttachments": current["attachments"]}
