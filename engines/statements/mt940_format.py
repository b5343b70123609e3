"""SWIFT MT940 statements, read with the ``mt-940`` library.

The file is split into its tags here, keeping the line each starts on, and every tag is checked
with the library's own tag parser first: a malformed tag is refused with its line (the library
itself reports no positions). Then the library reads each statement (``:20:`` … ``:62F:``);
continuation lines of ``:86:`` belong to it, and the German structured form (``?20``…``?29``
purpose, ``?32``/``?33`` name) is taken apart by the library's default processors.
"""

from __future__ import annotations

import io
import logging
import re
from contextlib import redirect_stdout
from datetime import date
from decimal import Decimal
from typing import Any

import mt940
import mt940.processors
import mt940.tags

from engines.statements.model import Balance, ParsedStatement, StatementError, StatementLine
from engines.statements.text import one_line

_TAG = re.compile(r"^:(?P<tag>[0-9]{2}|NS)(?P<sub>[A-Z])?:")
REQUIRED = (("25", "account identification"), ("60", "opening balance"), ("62", "closing balance"))
# The library logs every regex it tried when a tag does not match: noise in a server's log.
logging.getLogger("mt940").setLevel(logging.CRITICAL)


def looks_like_mt940(text: str) -> bool:
    return bool(re.search(r"(?m)^:20:", text)) and bool(re.search(r"(?m)^:6[01][FM]?:", text))


def _blocks(text: str) -> list[tuple[int, str, str]]:
    """(line, tag, content) of every tag, continuation lines joined with newlines."""
    blocks: list[tuple[int, str, list[str]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line or line == "-" or line.startswith(("{1:", "{2:", "{4:", "-}")):
            continue
        match = _TAG.match(line)
        if match:
            blocks.append((number, match.group(0).strip(":"), [line[match.end() :]]))
        elif blocks:
            blocks[-1][2].append(line)
        else:
            raise StatementError(
                f"line {number}", "MT940 content must start with a tag such as :20:"
            )
    return [(number, tag, "\n".join(parts)) for number, tag, parts in blocks]


def _check(blocks: list[tuple[int, str, str]]) -> None:
    probe = mt940.models.Transactions()
    for number, tag, content in blocks:
        parser = mt940.tags.TAG_BY_ID.get(tag) or mt940.tags.TAG_BY_ID.get(
            int(tag[:2]) if tag[:2].isdigit() else tag
        )
        if parser is None:
            continue  # a tag the format allows and fincap does not read (:34F:, …)
        try:
            with redirect_stdout(io.StringIO()):
                parser.parse(probe, content.strip())
        except Exception:
            first = content.splitlines()[0] if content else ""
            raise StatementError(
                f"line {number}", f"tag :{tag}: is malformed ('{first[:60]}')"
            ) from None


def read_mt940(text: str, *, max_lines: int) -> ParsedStatement:
    """The statement(s) of an MT940 file; several statements of one account are read as one,
    from the first opening balance to the last closing one."""
    blocks = _blocks(text)
    if not blocks:
        raise StatementError("line 1", "no MT940 tags found")
    _check(blocks)
    tags = {tag[:2] for _, tag, _ in blocks}
    for tag, what in REQUIRED:
        if tag not in tags:
            raise StatementError("file", f"no :{tag}: tag ({what}): not a complete MT940 statement")
    starts = [i for i, (_, tag, _) in enumerate(blocks) if tag == "20"] or [0]
    statement = ParsedStatement(format="mt940")
    for position, start in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(blocks)
        _read_one(blocks[start:end], statement, max_lines)
    if statement.lines:
        dates = [line.booking_date for line in statement.lines]
        statement.period_start = statement.period_start or min(dates)
        statement.period_end = statement.period_end or max(dates)
    return statement


def _read_one(blocks: list[tuple[int, str, str]], statement: ParsedStatement, limit: int) -> None:
    source = "\n".join(f":{tag}:{content}" for _, tag, content in blocks)
    lines_61 = [number for number, tag, _ in blocks if tag == "61"]
    # The ?20…?29 sub-fields are lines of one purpose: joined with spaces, not glued.
    parsed = mt940.models.Transactions(
        processors={
            "post_transaction_details": [
                mt940.processors.transaction_details_post_processor_with_space
            ]
        }
    )
    try:
        with redirect_stdout(io.StringIO()):
            parsed.parse(source)
    except Exception as exc:  # the tags passed alone; their combination did not
        raise StatementError(
            f"line {blocks[0][0]}", f"not a readable MT940 statement: {exc}"
        ) from None
    data: dict[str, Any] = parsed.data
    account = one_line(str(data.get("account_identification") or ""), 100)
    if statement.account is None:
        statement.account = account
    elif account and account != statement.account:
        raise StatementError(
            f"line {blocks[0][0]}", "the file holds statements of several accounts"
        )
    statement.statement_id = statement.statement_id or data.get("transaction_reference")
    opening = data.get("final_opening_balance") or data.get("opening_balance")
    closing = data.get("final_closing_balance") or data.get("closing_balance")
    if opening is not None and statement.opening is None:
        statement.opening = _balance(opening)
        statement.period_start = statement.opening.on
    if closing is not None:
        statement.closing = _balance(closing)
        statement.period_end = statement.closing.on
    for transaction, number in zip(parsed.transactions, lines_61, strict=False):
        if len(statement.lines) >= limit:
            raise StatementError(f"line {number}", f"more than {limit:,} transactions in one file")
        statement.lines.append(_line(transaction.data, number, account))
    if statement.currency is None and statement.lines:
        statement.currency = statement.lines[0].currency


def _balance(balance: Any) -> Balance:
    on = balance.date
    return Balance(
        amount=Decimal(balance.amount.amount),
        currency=balance.amount.currency,
        on=date(on.year, on.month, on.day) if on else None,
    )


def _line(data: dict[str, Any], number: int, account: str | None) -> StatementLine:
    value = data.get("date")
    booked = data.get("entry_date") or value
    if booked is None:
        raise StatementError(f"line {number}", "tag :61: has no date")
    purpose = data.get("purpose") or data.get("transaction_details")
    name = " ".join(
        str(part) for part in (data.get("applicant_name"), data.get("recipient_name")) if part
    )
    customer = data.get("customer_reference")
    if customer in (None, "NONREF") or (purpose and str(customer) in str(purpose)):
        customer = None
    reference = " ".join(str(part) for part in (purpose, customer) if part)
    bank_ref = data.get("bank_reference")
    return StatementLine(
        booking_date=date(booked.year, booked.month, booked.day),
        value_date=date(value.year, value.month, value.day) if value else None,
        amount=Decimal(data["amount"].amount),
        currency=str(data.get("currency") or data["amount"].currency),
        counterparty=one_line(name or None),
        reference=one_line(reference or data.get("posting_text")),
        account=account,
        bank_id=one_line(bank_ref, 200) if bank_ref and bank_ref != "NONREF" else None,
        place=f"line {number}",
    )
