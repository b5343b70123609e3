"""OFX and QFX statements: 1.x (SGML) and 2.x (XML), read by fincap itself.

The one maintained OFX library on PyPI, ofxtools, is GPL-3.0-only, which fincap (Apache-2.0)
cannot import; ofxparse (MIT) has had no release since 2021 and repairs broken markup with
BeautifulSoup instead of refusing it. The statement part of OFX is small (OFX 2.2 specification,
chapter 11: ``STMTRS``/``CCSTMTRS`` with ``BANKACCTFROM``/``CCACCTFROM``, ``BANKTRANLIST`` of
``STMTTRN``, ``LEDGERBAL``), so it is read here:

- 1.x: a header of ``KEY:VALUE`` lines, then SGML where an element holding a value may omit its
  end tag (``<TRNAMT>-12.50``) and an aggregate must be closed. The tags are read into a tree
  that keeps each element's line; an end tag that closes nothing open is refused with its line.
- 2.x: XML (``<?OFX OFXHEADER="200" …?>``), read with lxml with entities and network off.

QFX is OFX with Intuit's extra elements (``INTU.BID``), which are ignored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from engines.statements.model import Balance, ParsedStatement, StatementError, StatementLine
from engines.statements.text import currency_code, one_line, parse_amount
from engines.statements.xml_safe import local, parse_xml

_TOKEN = re.compile(r"<(/?)([A-Za-z0-9_.]+)>([^<]*)")


@dataclass
class Node:
    """An OFX element: its name, its value (leaf elements) or children, and its line."""

    name: str
    line: int
    value: str | None = None
    children: list[Node] = field(default_factory=list)
    parent: Node | None = None

    def find(self, *path: str) -> Node | None:
        current: Node | None = self
        for name in path:
            if current is None:
                return None
            current = next((c for c in current.children if c.name == name), None)
        return current

    def all(self, name: str) -> list[Node]:
        return [c for c in self.children if c.name == name]

    def text(self, *path: str) -> str | None:
        found = self.find(*path)
        return found.value if found is not None and found.value else None

    def where(self) -> str:
        names: list[str] = []
        current: Node | None = self
        while current is not None and current.name != "OFX":
            name = current.name
            siblings = current.parent.all(name) if current.parent is not None else [current]
            if len(siblings) > 1:
                name += f"[{next(i for i, s in enumerate(siblings, 1) if s is current)}]"
            names.append(name)
            current = current.parent
        return f"{'/'.join(reversed(names))} (line {self.line})"


def looks_like_ofx(text: str) -> bool:
    head = text[:4096].upper()
    return "OFXHEADER" in head or "<OFX>" in head


def _sgml_tree(text: str) -> Node:
    start = text.upper().find("<OFX>")
    if start < 0:
        raise StatementError("line 1", "no <OFX> element")
    root: Node | None = None
    stack: list[Node] = []
    line = text.count("\n", 0, start) + 1
    position = counted = start
    for match in _TOKEN.finditer(text, start):
        line += text.count("\n", counted, match.start())
        counted = match.start()
        if text[position : match.start()].strip():
            raise StatementError(f"line {line}", "text outside an element")
        position = match.end()
        closing, name, value = match.group(1), match.group(2).upper(), match.group(3).strip()
        if closing:
            # A leaf's optional end tag, or the end of an aggregate: close up to it.
            if stack and stack[-1].name == name and stack[-1].value is not None:
                stack.pop()
                continue
            open_names = [n.name for n in stack]
            if name not in open_names:
                raise StatementError(f"line {line}", f"</{name}> closes no open element")
            while stack:
                node = stack.pop()
                if node.name == name:
                    break
                if node.value is None:
                    raise StatementError(
                        node.where(), f"<{node.name}> is not closed before </{name}>"
                    )
            if value:
                raise StatementError(f"line {line}", f"text after </{name}>")
            continue
        if stack and stack[-1].value is not None:
            stack.pop()  # the previous element was a leaf without its end tag
        node = Node(name=name, line=line, value=value or None, parent=stack[-1] if stack else None)
        if node.parent is not None:
            node.parent.children.append(node)
        elif root is None:
            root = node
        else:
            raise StatementError(f"line {line}", f"<{name}> after the end of <OFX>")
        stack.append(node)
    if root is None or root.name != "OFX":
        raise StatementError("line 1", "no <OFX> element")
    unclosed = [n for n in stack if n.value is None]
    if unclosed:
        raise StatementError(unclosed[-1].where(), f"<{unclosed[-1].name}> is never closed")
    return root


def _xml_tree(data: bytes) -> Node:
    root = parse_xml(data)

    def convert(element: object, parent: Node | None) -> Node:
        name = local(element).upper()  # type: ignore[arg-type]
        node = Node(name=name, line=element.sourceline or 0, parent=parent)  # type: ignore[attr-defined]
        kids = [c for c in element if isinstance(c.tag, str)]  # type: ignore[attr-defined]
        if kids:
            node.children = [convert(c, node) for c in kids]
        else:
            node.value = (element.text or "").strip() or None  # type: ignore[attr-defined]
        return node

    tree = convert(root, None)
    if tree.name != "OFX":
        raise StatementError(f"line {tree.line}", f"the root element is <{tree.name}>, not <OFX>")
    return tree


def _date(node: Node, name: str, required: bool = True) -> date | None:
    """OFX dates: ``YYYYMMDD[HHMMSS[.XXX]][[±H:TZ]]``; the calendar date is the first 8 digits."""
    raw = node.text(name)
    if raw is None:
        if required:
            raise StatementError(node.where(), f"no <{name}>")
        return None
    try:
        return date(int(raw[0:4]), int(raw[4:6]), int(raw[6:8]))
    except (ValueError, IndexError):
        found = node.find(name)
        assert found is not None
        raise StatementError(found.where(), f"'{raw}' is not an OFX date (YYYYMMDD…)") from None


def _amount(node: Node, name: str) -> Decimal:
    raw = node.text(name)
    found = node.find(name)
    if raw is None or found is None:
        raise StatementError(node.where(), f"no <{name}>")
    try:
        return parse_amount(raw)
    except ValueError as exc:
        raise StatementError(found.where(), str(exc)) from None


def read_ofx(data: bytes, text: str, *, max_lines: int) -> ParsedStatement:
    """The bank or credit-card statement of an OFX 1.x or 2.x file (one account)."""
    is_xml = text.lstrip().startswith("<?xml") or 'OFXHEADER="2' in text[:1024].upper()
    tree = _xml_tree(data) if is_xml else _sgml_tree(text)
    responses = [
        node
        for set_name, wrapper, statement in (
            ("BANKMSGSRSV1", "STMTTRNRS", "STMTRS"),
            ("CREDITCARDMSGSRSV1", "CCSTMTTRNRS", "CCSTMTRS"),
        )
        for message_set in tree.all(set_name)
        for transaction in message_set.all(wrapper)
        for node in transaction.all(statement)
    ]
    if not responses:
        raise StatementError(
            "OFX", "no bank or credit-card statement (BANKMSGSRSV1/STMTTRNRS/STMTRS)"
        )
    result = ParsedStatement(format="ofx")
    for response in responses:
        _read_response(response, result, max_lines)
    return result


def _read_response(response: Node, result: ParsedStatement, max_lines: int) -> None:
    account = response.text("BANKACCTFROM", "ACCTID") or response.text("CCACCTFROM", "ACCTID")
    if account is None:
        raise StatementError(response.where(), "no BANKACCTFROM/ACCTID or CCACCTFROM/ACCTID")
    if result.account not in (None, account):
        raise StatementError(response.where(), "the file holds statements of several accounts")
    result.account = account
    currency = currency_code(response.text("CURDEF"), response.where() + " CURDEF")
    result.currency = currency
    transactions = response.find("BANKTRANLIST")
    if transactions is not None:
        result.period_start = result.period_start or _date(transactions, "DTSTART", False)
        result.period_end = _date(transactions, "DTEND", False) or result.period_end
        entries = transactions.all("STMTTRN")
        # The place from the loop's index: ``where()`` counts siblings, once per line would be
        # quadratic in the statement's length.
        list_place = transactions.where().rsplit(" (line", 1)[0]
        for position, entry in enumerate(entries, start=1):
            name = f"STMTTRN[{position}]" if len(entries) > 1 else "STMTTRN"
            place = f"{list_place}/{name} (line {entry.line})"
            if len(result.lines) >= max_lines:
                raise StatementError(place, f"more than {max_lines:,} transactions in one file")
            result.lines.append(_line(entry, account, currency, place))
    ledger = response.find("LEDGERBAL")
    if ledger is not None:
        result.closing = Balance(
            amount=_amount(ledger, "BALAMT"), currency=currency, on=_date(ledger, "DTASOF", False)
        )


def _line(entry: Node, account: str, default_currency: str, place: str) -> StatementLine:
    # TRNAMT is in the statement's currency (CURDEF); a CURRENCY or ORIGCURRENCY aggregate
    # only says what it was converted from.
    name = entry.text("NAME") or entry.text("PAYEE", "NAME")
    memo = entry.text("MEMO")
    reference = " ".join(p for p in (memo, entry.text("CHECKNUM"), entry.text("REFNUM")) if p)
    fitid = entry.text("FITID")
    if fitid is None:
        raise StatementError(entry.where(), "no <FITID> (the transaction's id, required)")
    return StatementLine(
        booking_date=_date(entry, "DTPOSTED") or date.min,
        value_date=_date(entry, "DTAVAIL", False),
        amount=_amount(entry, "TRNAMT"),
        currency=default_currency,
        counterparty=one_line(name),
        reference=one_line(reference or None),
        account=account,
        bank_id=one_line(fitid, 255),
        place=place,
    )
