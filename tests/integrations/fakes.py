"""Local fake Xero and QuickBooks Online servers on real sockets.

They speak the providers' shapes and refuse what the real APIs refuse: OAuth clients
authenticate with HTTP Basic, codes are single-use and bound to their redirect URI, refresh
tokens rotate (an old one is ``invalid_grant``), access tokens expire, every API call names its
tenant, and bills are checked field by field (Xero ACCPAY invoices; QuickBooks Bills,
Purchases, vendors, multipart uploads). Creating requests honour the providers' idempotency
keys (Xero's ``Idempotency-Key`` header, QuickBooks' ``requestid`` parameter): the same key
replays the first answer. ``fail`` injects provider failures: before the work (a 429) or after
it (a 500 whose response is lost although the bill exists).
"""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from typing import Any, ClassVar
from urllib.parse import urlencode

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from tests.live import app_in_thread

CLIENT_ID = "fincap-test-client"
CLIENT_SECRET = "fincap-test-secret"


@dataclass
class Failure:
    method: str
    path_contains: str
    status: int
    after: bool = False  # do the work, then answer the error (a lost response)
    times: int = 1


@dataclass
class FakeProvider:
    """State shared by one fake provider's routes (read by the tests)."""

    name: str
    url: str = ""
    access_ttl: int = 1800
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    access: dict[str, float] = field(default_factory=dict)  # token → expiry
    refresh_tokens: set[str] = field(default_factory=set)
    refreshes: int = 0
    revoked: list[str] = field(default_factory=list)
    fail: list[Failure] = field(default_factory=list)
    idempotent: dict[str, tuple[int, Any]] = field(default_factory=dict)
    calls: list[tuple[str, str]] = field(default_factory=list)  # (method, path) of API calls
    bills: dict[str, dict[str, Any]] = field(default_factory=dict)
    attachments: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    vendors: dict[str, str] = field(default_factory=dict)  # name → id

    # -- OAuth -----------------------------------------------------------------------------

    def authorize(self, request: Request) -> Response:
        q = request.query_params
        if q.get("client_id") != CLIENT_ID or q.get("response_type") != "code":
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        if not q.get("redirect_uri") or not q.get("state") or not q.get("scope"):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(8)
        self.codes[code] = {"redirect_uri": q["redirect_uri"], "scope": q["scope"]}
        extra = self.authorize_extra()
        target = f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state'], **extra})}"
        return RedirectResponse(target, status_code=302)

    def authorize_extra(self) -> dict[str, str]:
        return {}

    def issue(self) -> dict[str, Any]:
        access, refresh = f"at-{uuid.uuid4().hex}", f"rt-{uuid.uuid4().hex}"
        self.access[access] = time.time() + self.access_ttl
        self.refresh_tokens.add(refresh)
        return {
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": self.access_ttl,
            "token_type": "Bearer",
        }

    async def token(self, request: Request) -> Response:
        expected = "Basic " + base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
        if request.headers.get("authorization") != expected:
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        if not request.headers.get("content-type", "").startswith(
            "application/x-www-form-urlencoded"
        ):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        form = await request.form()
        grant = form.get("grant_type")
        if grant == "authorization_code":
            pending = self.codes.pop(str(form.get("code")), None)
            if pending is None or pending["redirect_uri"] != form.get("redirect_uri"):
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            return JSONResponse(self.issue())
        if grant == "refresh_token":
            token = str(form.get("refresh_token"))
            if token not in self.refresh_tokens:
                return JSONResponse({"error": "invalid_grant"}, status_code=400)
            self.refresh_tokens.discard(token)  # rotation: the old one is spent
            self.refreshes += 1
            return JSONResponse(self.issue())
        return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)

    def authorized(self, request: Request) -> bool:
        header = request.headers.get("authorization", "")
        token = header.removeprefix("Bearer ")
        return header.startswith("Bearer ") and self.access.get(token, 0) > time.time()

    def expire_access_tokens(self) -> None:
        for token in self.access:
            self.access[token] = 0

    # -- failures and idempotency ------------------------------------------------------------

    def injected(self, method: str, path: str, after: bool) -> Failure | None:
        for failure in self.fail:
            if (
                failure.times > 0
                and failure.after == after
                and failure.method == method
                and failure.path_contains in path
            ):
                failure.times -= 1
                return failure
        return None

    def replay(self, key: str | None) -> Response | None:
        if key and key in self.idempotent:
            status, body = self.idempotent[key]
            return JSONResponse(body, status_code=status)
        return None

    def answer(self, key: str | None, body: Any, method: str, path: str) -> Response:
        if key:
            self.idempotent[key] = (200, body)
        failure = self.injected(method, path, after=True)
        if failure is not None:
            return JSONResponse({"Message": "server error"}, status_code=failure.status)
        return JSONResponse(body)

    def before(self, request: Request) -> Response | None:
        """Auth and injected failures common to every API call."""
        self.calls.append((request.method, request.url.path))
        if not self.authorized(request):
            return JSONResponse({"Title": "Unauthorized", "Status": 401}, status_code=401)
        failure = self.injected(request.method, request.url.path, after=False)
        if failure is not None:
            headers = {"Retry-After": "1"} if failure.status == 429 else {}
            return JSONResponse(
                {"Message": "injected"}, status_code=failure.status, headers=headers
            )
        return None


def bad(message: str) -> JSONResponse:
    return JSONResponse({"Type": "ValidationException", "Message": message}, status_code=400)


def _is_date(value: Any) -> bool:
    try:
        date.fromisoformat(str(value))
    except ValueError:
        return False
    return True


class FakeXero(FakeProvider):
    """login.xero.com, identity.xero.com and api.xero.com in one server."""

    tenants = (
        {"tenantId": "tenant-acme", "tenantName": "Acme Ltd"},
        {"tenantId": "tenant-beta", "tenantName": "Beta GmbH"},
    )

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/authorize", self.authorize, methods=["GET"]),
                Route("/token", self.token, methods=["POST"]),
                Route("/connections", self.connections, methods=["GET"]),
                Route("/connections/{id}", self.delete_connection, methods=["DELETE"]),
                Route("/api.xro/2.0/Contacts", self.contacts, methods=["GET"]),
                Route("/api.xro/2.0/Invoices", self.create_invoice, methods=["PUT"]),
                Route("/api.xro/2.0/Invoices/{id}", self.invoice, methods=["GET", "POST"]),
                Route(
                    "/api.xro/2.0/Invoices/{id}/Attachments",
                    self.list_attachments,
                    methods=["GET"],
                ),
                Route(
                    "/api.xro/2.0/Invoices/{id}/Attachments/{name}",
                    self.attach,
                    methods=["PUT"],
                ),
            ]
        )

    async def connections(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        return JSONResponse(
            [
                {
                    "id": f"conn-{t['tenantId']}",
                    "authEventId": "evt-1",
                    "tenantId": t["tenantId"],
                    "tenantType": "ORGANISATION",
                    "tenantName": t["tenantName"],
                    "createdDateUtc": "2026-11-23T10:00:00.0000000",
                    "updatedDateUtc": "2026-11-23T10:00:00.0000000",
                }
                for t in self.tenants
            ]
        )

    async def delete_connection(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        self.revoked.append(request.path_params["id"])
        return Response(status_code=204)

    def tenant_ok(self, request: Request) -> bool:
        return request.headers.get("xero-tenant-id") in {t["tenantId"] for t in self.tenants}

    async def contacts(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        if not self.tenant_ok(request):
            return bad("xero-tenant-id missing or unknown")
        match = re.fullmatch(r'Name=="((?:[^"\\]|\\.)*)"', request.query_params.get("where", ""))
        if match is None:
            return bad("unsupported where")
        name = match.group(1).replace('\\"', '"')
        found = [{"ContactID": cid, "Name": n} for n, cid in self.vendors.items() if n == name]
        return JSONResponse({"Contacts": found})

    def check_invoice(self, invoice: Any) -> str | None:
        if not isinstance(invoice, dict):
            return "Invoices[0] must be an object"
        if invoice.get("Type") != "ACCPAY":
            return "Type must be ACCPAY for a bill"
        contact = invoice.get("Contact") or {}
        if not (contact.get("ContactID") or contact.get("Name")):
            return "Contact needs ContactID or Name"
        for name in ("Date", "DueDate"):
            if not _is_date(invoice.get(name)):
                return f"{name} must be a date"
        if not re.fullmatch(r"[A-Z]{3}", str(invoice.get("CurrencyCode"))):
            return "CurrencyCode must be an ISO 4217 code"
        if invoice.get("LineAmountTypes") not in ("Exclusive", "Inclusive", "NoTax"):
            return "LineAmountTypes invalid"
        if invoice.get("Status") not in ("DRAFT", "SUBMITTED", "AUTHORISED"):
            return "Status invalid"
        lines = invoice.get("LineItems")
        if not isinstance(lines, list) or not lines:
            return "LineItems required"
        for line in lines:
            if not str(line.get("Description", "")).strip():
                return "Description needs to be at least 1 char long"
            for name in ("Quantity", "UnitAmount"):
                if not isinstance(line.get(name), int | float):
                    return f"LineItem {name} must be a number"
            if not line.get("AccountCode"):
                return "AccountCode required on each line"
        allowed = {
            "Type",
            "Contact",
            "Date",
            "DueDate",
            "CurrencyCode",
            "LineAmountTypes",
            "LineItems",
            "InvoiceNumber",
            "Reference",
            "Status",
        }
        if set(invoice) - allowed:
            return f"unknown fields {sorted(set(invoice) - allowed)}"
        return None

    async def create_invoice(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        if not self.tenant_ok(request):
            return bad("xero-tenant-id missing or unknown")
        key = request.headers.get("idempotency-key")
        if (replayed := self.replay(key)) is not None:
            return replayed
        body = await request.json()
        invoices = body.get("Invoices") if isinstance(body, dict) else None
        if not isinstance(invoices, list) or len(invoices) != 1:
            return bad("Invoices must hold one invoice")
        if (problem := self.check_invoice(invoices[0])) is not None:
            return bad(problem)
        invoice = dict(invoices[0])
        invoice_id = str(uuid.uuid4())
        contact = invoice["Contact"]
        if "ContactID" not in contact:
            contact_id = self.vendors.setdefault(contact["Name"], str(uuid.uuid4()))
            invoice["Contact"] = {"ContactID": contact_id, "Name": contact["Name"]}
        total = sum(
            line.get("LineAmount", line["UnitAmount"] * line["Quantity"])
            for line in invoice["LineItems"]
        )
        invoice.update(
            InvoiceID=invoice_id, Total=round(total, 2), TenantId=request.headers["xero-tenant-id"]
        )
        self.bills[invoice_id] = invoice
        self.attachments[invoice_id] = []
        return self.answer(key, {"Status": "OK", "Invoices": [invoice]}, "PUT", request.url.path)

    async def invoice(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        invoice = self.bills.get(request.path_params["id"])
        if invoice is None or invoice["TenantId"] != request.headers.get("xero-tenant-id"):
            return JSONResponse({"Title": "Not Found"}, status_code=404)
        if request.method == "POST":
            change = (await request.json())["Invoices"][0]
            allowed = {"DRAFT": {"DELETED"}, "SUBMITTED": {"DELETED"}, "AUTHORISED": {"VOIDED"}}
            if change.get("Status") not in allowed.get(invoice["Status"], set()):
                return bad(f"cannot change {invoice['Status']} to {change.get('Status')}")
            invoice["Status"] = change["Status"]
        return JSONResponse({"Invoices": [invoice]})

    async def list_attachments(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        listed = self.attachments.get(request.path_params["id"])
        if listed is None:
            return JSONResponse({"Title": "Not Found"}, status_code=404)
        return JSONResponse(
            {"Attachments": [{k: v for k, v in a.items() if k != "content"} for a in listed]}
        )

    async def attach(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        key = request.headers.get("idempotency-key")
        if (replayed := self.replay(key)) is not None:
            return replayed
        invoice_id = request.path_params["id"]
        if invoice_id not in self.bills:
            return JSONResponse({"Title": "Not Found"}, status_code=404)
        content = await request.body()
        if not content:
            return bad("empty attachment")
        attachment = {
            "AttachmentID": str(uuid.uuid4()),
            "FileName": request.path_params["name"],
            "MimeType": request.headers.get("content-type"),
            "ContentLength": len(content),
            "content": content,
        }
        self.attachments[invoice_id].append(attachment)
        shown = {k: v for k, v in attachment.items() if k != "content"}
        return self.answer(key, {"Attachments": [shown]}, "PUT", request.url.path)


class FakeQuickBooks(FakeProvider):
    """appcenter.intuit.com, oauth.platform.intuit.com and the v3 API in one server."""

    realm = "9130350000000001"
    accounts: ClassVar[dict[str, str]] = {
        "Meals and Entertainment": "13",
        "Other Business Expenses": "29",
        "Travel": "58",
        "Checking": "35",
        "Automobile": "55",
    }

    def authorize_extra(self) -> dict[str, str]:
        return {"realmId": self.realm}

    def app(self) -> Starlette:
        base = "/v3/company/{realm}"
        return Starlette(
            routes=[
                Route("/authorize", self.authorize, methods=["GET"]),
                Route("/token", self.token, methods=["POST"]),
                Route("/revoke", self.revoke, methods=["POST"]),
                Route(base + "/companyinfo/{id}", self.company, methods=["GET"]),
                Route(base + "/query", self.query, methods=["GET"]),
                Route(base + "/vendor", self.create_vendor, methods=["POST"]),
                Route(base + "/{entity:str}", self.write_entity, methods=["POST"]),
                Route(base + "/{entity:str}/{id}", self.read_entity, methods=["GET"]),
            ]
        )

    def realm_ok(self, request: Request) -> bool:
        return request.path_params.get("realm") == self.realm

    async def revoke(self, request: Request) -> Response:
        body = await request.json()
        self.revoked.append(body.get("token"))
        self.refresh_tokens.discard(body.get("token"))
        return Response(status_code=200)

    async def company(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        if not self.realm_ok(request):
            return JSONResponse({"Fault": {"type": "AUTHENTICATION"}}, status_code=403)
        return JSONResponse({"CompanyInfo": {"CompanyName": "Sandbox Company_US_1", "Id": "1"}})

    async def query(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        if not self.realm_ok(request) or request.query_params.get("minorversion") is None:
            return bad("realm or minorversion")
        text = request.query_params.get("query", "")
        if m := re.fullmatch(
            r"select \* from Vendor where DisplayName = '((?:[^'\\]|\\.)*)'", text
        ):
            name = m.group(1).replace("\\'", "'")
            found = [{"Id": i, "DisplayName": n} for n, i in self.vendors.items() if n == name]
            return JSONResponse({"QueryResponse": {"Vendor": found} if found else {}})
        if m := re.fullmatch(r"select \* from Account where Name in \((.*)\)", text):
            names = re.findall(r"'((?:[^'\\]|\\.)*)'", m.group(1))
            found = [{"Id": self.accounts[n], "Name": n} for n in names if n in self.accounts]
            return JSONResponse({"QueryResponse": {"Account": found}})
        if m := re.fullmatch(
            r"select \* from Attachable where AttachableRef.EntityRef.value = '(\w+)'", text
        ):
            listed = [
                {k: v for k, v in a.items() if k != "content"}
                for a in self.attachments.get(m.group(1), [])
            ]
            return JSONResponse({"QueryResponse": {"Attachable": listed}})
        return bad(f"unsupported query {text}")

    async def create_vendor(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        key = request.query_params.get("requestid")
        if (replayed := self.replay(key)) is not None:
            return replayed
        body = await request.json()
        name = body.get("DisplayName")
        if not name:
            return bad("DisplayName required")
        if name in self.vendors:
            return bad("Duplicate Name Exists Error")
        self.vendors[name] = str(100 + len(self.vendors))
        return self.answer(
            key,
            {"Vendor": {"Id": self.vendors[name], "DisplayName": name}},
            "POST",
            request.url.path,
        )

    def check(self, entity: str, body: dict[str, Any]) -> str | None:
        vendor_ids = set(self.vendors.values())
        if entity == "bill":
            if (body.get("VendorRef") or {}).get("value") not in vendor_ids:
                return "VendorRef must name a vendor"
            if not _is_date(body.get("DueDate")):
                return "DueDate must be a date"
        else:
            if body.get("PaymentType") not in ("Cash", "Check", "CreditCard"):
                return "PaymentType invalid"
            if (body.get("AccountRef") or {}).get("value") not in self.accounts.values():
                return "AccountRef must name an account"
            ref = body.get("EntityRef") or {}
            if ref.get("value") not in vendor_ids or ref.get("type") != "Vendor":
                return "EntityRef must name a vendor"
        if not _is_date(body.get("TxnDate")):
            return "TxnDate must be a date"
        if not re.fullmatch(r"[A-Z]{3}", str((body.get("CurrencyRef") or {}).get("value"))):
            return "CurrencyRef invalid"
        if len(str(body.get("DocNumber", ""))) > 21:
            return "DocNumber longer than 21"
        lines = body.get("Line")
        if not isinstance(lines, list) or not lines:
            return "Line required"
        for line in lines:
            if line.get("DetailType") != "AccountBasedExpenseLineDetail":
                return "DetailType must be AccountBasedExpenseLineDetail"
            if not isinstance(line.get("Amount"), int | float):
                return "Amount must be a number"
            detail = line.get("AccountBasedExpenseLineDetail") or {}
            if (detail.get("AccountRef") or {}).get("value") not in self.accounts.values():
                return "line AccountRef must name an account"
        return None

    async def write_entity(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        entity = request.path_params["entity"]
        if entity == "upload":
            return await self.upload(request)
        if entity not in ("bill", "purchase"):
            return bad(f"unsupported entity {entity}")
        if request.query_params.get("operation") == "delete":
            body = await request.json()
            record = self.bills.get(str(body.get("Id")))
            if record is None or record["SyncToken"] != body.get("SyncToken"):
                return bad("stale object or unknown id")
            record["status"] = "Deleted"
            self.bills.pop(str(body["Id"]))
            return JSONResponse({entity.capitalize(): {"Id": body["Id"], "status": "Deleted"}})
        key = request.query_params.get("requestid")
        if not key:
            return bad("this fake insists on requestid")
        if (replayed := self.replay(key)) is not None:
            return replayed
        body = await request.json()
        if (problem := self.check(entity, body)) is not None:
            return bad(problem)
        record = {
            **body,
            "Id": str(500 + len(self.bills)),
            "SyncToken": "0",
            "TotalAmt": round(sum(line["Amount"] for line in body["Line"]), 2),
            "Entity": entity,
        }
        if entity == "bill":
            record["Balance"] = record["TotalAmt"]
        self.bills[record["Id"]] = record
        self.attachments[record["Id"]] = []
        name = "Bill" if entity == "bill" else "Purchase"
        return self.answer(key, {name: record}, "POST", request.url.path)

    async def read_entity(self, request: Request) -> Response:
        if (refused := self.before(request)) is not None:
            return refused
        record = self.bills.get(request.path_params["id"])
        if record is None or record["Entity"] != request.path_params["entity"]:
            return JSONResponse({"Fault": {"type": "ValidationFault"}}, status_code=404)
        name = "Bill" if record["Entity"] == "bill" else "Purchase"
        return JSONResponse({name: record})

    async def upload(self, request: Request) -> Response:
        key = request.query_params.get("requestid")
        if (replayed := self.replay(key)) is not None:
            return replayed
        if not request.headers.get("content-type", "").startswith("multipart/form-data"):
            return bad("upload must be multipart/form-data")
        form = await request.form()
        metadata_part = form.get("file_metadata_01")
        content_part = form.get("file_content_01")
        if metadata_part is None or content_part is None or isinstance(content_part, str):
            return bad("file_metadata_01 and file_content_01 required")
        raw = metadata_part if isinstance(metadata_part, str) else await metadata_part.read()
        metadata = json.loads(raw)
        refs = metadata.get("AttachableRef") or []
        target = ((refs[0] if refs else {}).get("EntityRef") or {}).get("value")
        if target not in self.bills:
            return bad("AttachableRef must name an existing entity")
        content = await content_part.read()
        attachable = {
            "Id": str(900 + sum(len(v) for v in self.attachments.values())),
            "FileName": metadata.get("FileName"),
            "ContentType": metadata.get("ContentType"),
            "Size": len(content),
            "content": content,
        }
        self.attachments[target].append(attachable)
        shown = {k: v for k, v in attachable.items() if k != "content"}
        return self.answer(
            key, {"AttachableResponse": [{"Attachable": shown}]}, "POST", request.url.path
        )


@contextmanager
def serving(provider: FakeProvider) -> Iterator[FakeProvider]:
    """Serve ``provider`` on a free loopback port from a thread."""

    async def setup(port: int) -> tuple[ASGIApp, None]:
        return provider.app(), None  # type: ignore[attr-defined]

    with app_in_thread(setup, ready_path=None, log_level="error") as served:
        provider.url = served.base
        yield provider
