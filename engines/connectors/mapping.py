"""From a document to a provider-neutral ``Bill``: account codes, tax codes, lines, warnings.

Defaults follow each product's standard chart of accounts, as its declaration gives them
(``engines/connectors/<id>/__init__.py``: Xero's demo/default codes, QuickBooks' standard
expense account names resolved to the company's account ids when the request is planned). A
workspace overrides any of them with integrations.configure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from engines.connectors.base import Attachment, Bill, BillKind, BillLine
from engines.connectors.registry import declaration_of

CENT = Decimal("0.01")
PAYMENT_TERMS_DAYS = 30


class NotExportable(ValueError):
    """The document lacks what every bill needs (merchant, amount, currency)."""


@dataclass(frozen=True)
class Mapping:
    """The effective settings of one workspace for one integration."""

    account_codes: dict[str, str]
    default_account: str
    tax_codes: dict[str, str]
    payment_account: str | None


def effective_mapping(integration_id: str, stored: dict[str, Any] | None) -> Mapping:
    """Defaults overlaid with the workspace's stored settings."""
    stored = stored or {}
    declared = declaration_of(integration_id)
    if declared is None:
        raise ValueError(f"no connector is declared for {integration_id!r}")
    return Mapping(
        account_codes={**declared.account_codes, **(stored.get("accountCodes") or {})},
        default_account=stored.get("defaultAccountCode") or declared.default_account,
        tax_codes=dict(stored.get("taxCodes") or {}),
        payment_account=stored.get("paymentAccount") or declared.payment_account,
    )


def tax_rate(total: Decimal, tax: Decimal) -> str:
    """The rate in percent of a tax-inclusive total: 120.00 with 20.00 tax → '20'."""
    net = total - tax
    if net <= 0:
        return "0"
    rate = (tax / net * 100).quantize(Decimal("0.1"))
    text = format(rate.normalize(), "f")
    return text


def _day(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    return None


def _decimal(value: Any) -> Decimal | None:
    if value is None:
        return None
    return Decimal(str(value)).quantize(CENT)


def build_bill(
    document: dict[str, Any], mapping: Mapping, *, today: date
) -> tuple[Bill, list[str]]:
    """The bill a document becomes, and warnings about what had to be assumed.

    ``document`` is the API-level view (money as Decimal). Raises ``NotExportable`` naming the
    missing field.
    """
    warnings: list[str] = []
    vendor = document.get("merchant") or document.get("entityName")
    total = _decimal(document.get("amount"))
    currency = document.get("currency")
    for name, value in (("merchant", vendor), ("amount", total), ("currency", currency)):
        if not value:
            raise NotExportable(
                f"the document has no {name}; set it with documents.update before sending"
            )
    assert total is not None and isinstance(vendor, str) and isinstance(currency, str)
    day = _day(document.get("docDate"))
    if day is None:
        day = _day(document.get("receivedAt")) or today
        warnings.append(f"No document date: the bill is dated {day.isoformat()}")
    kind: BillKind = "bill" if document.get("docType") == "invoice" else "purchase"
    due = day
    if kind == "bill":
        due = day + timedelta(days=PAYMENT_TERMS_DAYS)
        warnings.append(
            f"No due date on the document: due {PAYMENT_TERMS_DAYS} days after its date"
        )
    category = document.get("category")
    account = mapping.account_codes.get(category or "")
    if account is None:
        account = mapping.default_account
        warnings.append(
            f"No account mapped for category '{category or 'none'}': using the default "
            f"account {account}"
        )
    tax = _decimal(document.get("taxAmount"))
    tax_code: str | None = None
    if tax is not None and tax > 0:
        rate = tax_rate(total, tax)
        tax_code = mapping.tax_codes.get(rate)
        if tax_code is None:
            warnings.append(
                f"No tax rate mapped for {rate}%: the account's default tax applies; map it "
                "with integrations.configure (taxCodes)"
            )
    elif "0" in mapping.tax_codes:
        tax_code = mapping.tax_codes["0"]
    lines = _lines(document, total, tax, account, tax_code, warnings)
    reference = document.get("invoiceId") or document.get("receiptId")
    if not reference:
        reference = f"FINCAP-{str(document['id'])[-12:]}"
        warnings.append(f"No invoice or receipt number: the reference is {reference}")
    file = document.get("file") or {}
    attachment = None
    if file.get("fileName"):
        attachment = Attachment(
            file_name=file["fileName"],
            mime_type=file.get("mimeType") or "application/octet-stream",
            size=int(file.get("size") or 0),
            sha256=str(file.get("sha256") or ""),
        )
    else:
        warnings.append("The document has no original: nothing will be attached")
    bill = Bill(
        kind=kind,
        vendor=vendor,
        date=day,
        due_date=due,
        currency=currency.upper(),
        reference=str(reference),
        lines=tuple(lines),
        total=total,
        tax_total=tax,
        note=f"fincap document {document['id']}",
        payment_account=mapping.payment_account,
        paid_by_card=str(document.get("paymentMethod") or "").lower()
        in ("card", "credit card", "debit card"),
        attachment=attachment,
    )
    return bill, warnings


def _lines(
    document: dict[str, Any],
    total: Decimal,
    tax: Decimal | None,
    account: str,
    tax_code: str | None,
    warnings: list[str],
) -> list[BillLine]:
    items = document.get("lineItems") or []
    lines: list[BillLine] = []
    for item in items:
        amount = _decimal(item.get("amount"))
        if amount is None:
            lines = []
            break
        quantity = Decimal(str(item.get("quantity") or 1))
        unit = _decimal(item.get("unitPrice")) or (amount / quantity).quantize(CENT)
        lines.append(
            BillLine(
                description=str(item.get("description") or "Item")[:4000],
                quantity=quantity,
                unit_amount=unit,
                amount=amount,
                account_code=account,
                tax_code=tax_code,
                tax_amount=_decimal(item.get("taxAmount")),
            )
        )
    if lines and sum(line.amount for line in lines) == total:
        return lines
    if items:
        warnings.append(
            "The line items do not add up to the total: the bill has one line for the total"
        )
    description = (
        document.get("summary")
        or f"{document.get('merchant')} ({document.get('category') or 'expense'})"
    )
    return [
        BillLine(
            description=str(description)[:4000],
            quantity=Decimal(1),
            unit_amount=total,
            amount=total,
            account_code=account,
            tax_code=tax_code,
            tax_amount=tax,
        )
    ]
