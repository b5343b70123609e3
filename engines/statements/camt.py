"""ISO 20022 CAMT.053 (bank-to-customer statement), read against the standard's element names.

No CAMT library on PyPI was well kept enough to take (see docs/guide/bank-statements.md): the
file is read with lxml (``xml_safe``), by local names, so versions 001.02 to 001.13 read alike
(their namespaces differ, these names do not). Per ``Stmt``: the account (``Acct/Id/IBAN`` or
``Othr/Id``), the period (``FrToDt``), the opening (``OPBD``/``PRCD``) and closing (``CLBD``)
balances, and every booked ``Ntry`` (``Sts`` BOOK; pending entries are counted, not imported).

A batch booking — one ``Ntry`` whose ``NtryDtls`` hold several ``TxDtls``, each with its own
amount — becomes one transaction per ``TxDtls`` (a receipt matches one payment, not the batch),
each keeping the entry's reference and total; the parts must add up to the entry's amount.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal, InvalidOperation

from lxml import etree

from engines.statements.model import Balance, ParsedStatement, StatementError, StatementLine
from engines.statements.text import CURRENCY, currency_code, one_line
from engines.statements.xml_safe import child, children, local, text

NAMESPACE_PREFIX = "urn:iso:std:iso:20022:tech:xsd:camt.053."


def looks_like_camt(data: bytes) -> bool:
    return b"camt.053" in data[:2048] or b"BkToCstmrStmt" in data[:4096]


def _path(element: etree._Element) -> str:
    """``Stmt[1]/Ntry[3]/Amt``: the element's place below ``BkToCstmrStmt``, 1-based indexes
    where siblings share a name, and its line."""
    parts: list[str] = []
    current: etree._Element | None = element
    while current is not None and local(current) not in ("BkToCstmrStmt", "Document"):
        parent = current.getparent()
        name = local(current)
        if parent is not None and len(children(parent, name)) > 1:
            name += f"[{children(parent, name).index(current) + 1}]"
        parts.append(name)
        current = parent
    return f"{'/'.join(reversed(parts))} (line {element.sourceline})"


def _date(element: etree._Element, *names: str) -> date | None:
    """``…/Dt`` or the date of ``…/DtTm``."""
    holder = child(element, *names)
    if holder is None:
        return None
    value = text(holder, "Dt") or text(holder, "DtTm") or (holder.text or "").strip()
    if not value:
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        raise StatementError(_path(holder), f"'{value}' is not an ISO date") from None


def _amount(element: etree._Element, indicator_of: etree._Element) -> tuple[Decimal, str]:
    """A signed amount: ``Amt`` is unsigned, ``CdtDbtInd`` DBIT makes it negative."""
    raw = (element.text or "").strip()
    try:
        value = Decimal(raw)
    except InvalidOperation:
        raise StatementError(_path(element), f"'{raw}' is not an amount") from None
    if value < 0 or not value.is_finite() or value >= Decimal(10) ** 13:
        raise StatementError(_path(element), f"'{raw}' is not an amount ISO 20022 allows")
    mark = text(indicator_of, "CdtDbtInd")
    if mark not in ("CRDT", "DBIT"):
        raise StatementError(
            _path(indicator_of) + " CdtDbtInd", f"expected CRDT or DBIT, got {mark!r}"
        )
    currency = (element.get("Ccy") or "").strip().upper()
    if not CURRENCY.match(currency):
        # The path only on the way out: computing it for every amount made reading quadratic.
        currency = currency_code(element.get("Ccy"), _path(element) + " @Ccy")
    return (-value if mark == "DBIT" else value), currency


def read_camt053(root: etree._Element, *, max_lines: int) -> ParsedStatement:
    """The statements of a CAMT.053 document (one account; several ``Stmt`` read as one)."""
    namespace = etree.QName(root).namespace or ""
    if local(root) != "Document" or not namespace.startswith(NAMESPACE_PREFIX):
        raise StatementError(
            f"{local(root)} (line {root.sourceline})",
            f"not a CAMT.053 document (root {local(root)} in namespace '{namespace}')",
        )
    body = child(root, "BkToCstmrStmt")
    if body is None:
        raise StatementError("Document", "no BkToCstmrStmt element")
    statements = children(body, "Stmt")
    if not statements:
        raise StatementError("BkToCstmrStmt", "no Stmt element")
    result = ParsedStatement(format="camt053")
    for stmt in statements:
        _read_statement(stmt, result, max_lines)
    return result


def _read_statement(stmt: etree._Element, result: ParsedStatement, max_lines: int) -> None:
    account = text(stmt, "Acct", "Id", "IBAN") or text(stmt, "Acct", "Id", "Othr", "Id")
    if account is None:
        raise StatementError(_path(stmt) + " Acct/Id", "the statement names no account")
    if result.account not in (None, account):
        raise StatementError(_path(stmt), "the file holds statements of several accounts")
    result.account = account
    result.currency = result.currency or text(stmt, "Acct", "Ccy")
    result.statement_id = result.statement_id or text(stmt, "Id")
    start, end = _date(stmt, "FrToDt", "FrDtTm"), _date(stmt, "FrToDt", "ToDtTm")
    for balance in children(stmt, "Bal"):
        code = text(balance, "Tp", "CdOrPrtry", "Cd")
        amount_element = child(balance, "Amt")
        if amount_element is None:
            raise StatementError(_path(balance), "a balance without Amt")
        amount, currency = _amount(amount_element, balance)
        stated = Balance(amount=amount, currency=currency, on=_date(balance, "Dt"))
        if code in ("OPBD", "PRCD") and result.opening is None:
            result.opening = stated
        elif code == "CLBD":
            result.closing = stated
    result.period_start = result.period_start or start
    result.period_end = end or result.period_end
    stmt_place = _path(stmt).rsplit(" (line", 1)[0]
    entries = children(stmt, "Ntry")
    for position, entry in enumerate(entries, start=1):
        status = text(entry, "Sts", "Cd") or text(entry, "Sts")
        if status not in (None, "BOOK"):
            result.skipped += 1
            continue
        place = f"{stmt_place}/{_named('Ntry', position, len(entries))}"
        for line in _entry_lines(entry, account, place):
            if len(result.lines) >= max_lines:
                raise StatementError(
                    _path(entry), f"more than {max_lines:,} transactions in one file"
                )
            result.lines.append(line)
    if result.lines:
        dates = [line.booking_date for line in result.lines]
        result.period_start = result.period_start or min(dates)
        result.period_end = result.period_end or max(dates)
    if result.currency is None and result.lines:
        result.currency = result.lines[0].currency


def _party(details: etree._Element, debit: bool) -> str | None:
    """The other side: the creditor of a debit, the debtor of a credit (001.02 names the party
    directly, 001.08 and later wrap it in ``Pty``)."""
    role = "Cdtr" if debit else "Dbtr"
    return text(details, "RltdPties", role, "Nm") or text(details, "RltdPties", role, "Pty", "Nm")


def _remittance(details: etree._Element) -> str | None:
    info = child(details, "RmtInf")
    if info is None:
        return None
    parts = [(c.text or "").strip() for c in children(info, "Ustrd")]
    for structured in children(info, "Strd"):
        reference = text(structured, "CdtrRefInf", "Ref")
        if reference:
            parts.append(reference)
    return one_line(" ".join(p for p in parts if p))


def _named(name: str, position: int, count: int) -> str:
    """``Ntry[3]`` among several, ``Ntry`` alone: as ``_path`` writes it."""
    return f"{name}[{position}]" if count > 1 else name


def _entry_lines(entry: etree._Element, account: str, place: str) -> list[StatementLine]:
    """The transactions of one booked entry; ``place`` is its path (without its line)."""
    amount_element = child(entry, "Amt")
    if amount_element is None:
        raise StatementError(_path(entry), "an entry without Amt")
    amount, currency = _amount(amount_element, entry)
    booked = _date(entry, "BookgDt")
    if booked is None:
        raise StatementError(_path(entry) + " BookgDt", "a booked entry without a booking date")
    valued = _date(entry, "ValDt")
    # The bank's own reference of the entry; NtryRef only numbers entries within one statement.
    entry_ref = text(entry, "AcctSvcrRef")
    extra = text(entry, "AddtlNtryInf")
    blocks = children(entry, "NtryDtls")
    details: list[tuple[etree._Element, str]] = []
    for block_position, block in enumerate(blocks, start=1):
        block_place = f"{place}/{_named('NtryDtls', block_position, len(blocks))}"
        parts = children(block, "TxDtls")
        details += [
            (tx, f"{block_place}/{_named('TxDtls', n, len(parts))} (line {tx.sourceline})")
            for n, tx in enumerate(parts, start=1)
        ]
    debit = amount < 0

    def part_amount(tx: etree._Element) -> tuple[Decimal, str] | None:
        # Not ``or``: an lxml element without children is false.
        own = child(tx, "Amt")
        if own is None:
            own = child(tx, "AmtDtls", "TxAmt", "Amt")
        if own is None:
            return None
        return _amount(own, tx if text(tx, "CdtDbtInd") else entry)

    if len(details) > 1 and all(part_amount(tx) is not None for tx, _ in details):
        parts = [(tx, tx_place, part_amount(tx)) for tx, tx_place in details]
        total = sum((p[2][0] for p in parts if p[2]), Decimal(0))
        if total != amount:
            raise StatementError(
                _path(entry),
                f"the batch's TxDtls add up to {total}, the entry says {amount}",
            )
        lines = []
        for position, (tx, tx_place, found) in enumerate(parts, start=1):
            assert found is not None
            own_ref = text(tx, "Refs", "AcctSvcrRef")
            lines.append(
                StatementLine(
                    booking_date=booked,
                    value_date=valued,
                    amount=found[0],
                    currency=found[1],
                    counterparty=one_line(_party(tx, found[0] < 0)),
                    reference=_remittance(tx) or one_line(extra),
                    account=account,
                    bank_id=one_line(own_ref, 200)
                    or (f"{entry_ref}/{position}" if entry_ref else _tx_id(tx)),
                    place=tx_place,
                    batch_ref=entry_ref,
                    batch_amount=amount,
                )
            )
        return lines
    tx = details[0][0] if details else None
    return [
        StatementLine(
            booking_date=booked,
            value_date=valued,
            amount=amount,
            currency=currency,
            counterparty=one_line(_party(tx, debit)) if tx is not None else None,
            reference=(_remittance(tx) if tx is not None else None) or one_line(extra),
            account=account,
            bank_id=one_line(entry_ref, 200) or (_tx_id(tx) if tx is not None else None),
            place=f"{place} (line {entry.sourceline})",
        )
    ]


def _tx_id(tx: etree._Element) -> str | None:
    """The bank's identifier of one transaction: its own reference, else the end-to-end id
    (unless the payer left it at NOTPROVIDED), else the transaction id."""
    for names in (("Refs", "AcctSvcrRef"), ("Refs", "EndToEndId"), ("Refs", "TxId")):
        value = text(tx, *names)
        if value and value.upper() != "NOTPROVIDED":
            return one_line(value, 200)
    return None
