"""Capabilities of the statements resource: bank statements in, as transactions.

The whole file is read and checked (``engines.statements``, off the event loop) before anything
is stored: a malformed file is a 400 naming its line or element, and nothing is written. Then
the lines the workspace does not hold yet are inserted; the unique index on (workspace, key)
keeps a statement imported twice, or two imports racing, from adding anything twice. The
transactions added are then matched automatically where the matcher is sure
(``services.auto_matching``).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import re
from datetime import UTC, date, datetime, time
from typing import Any

from domain.transactions import (
    DELIMITERS,
    MAX_STATEMENT_BYTES,
    MAX_STATEMENT_LINES,
    MAX_STATEMENT_TEXT,
)
from engines.statements import (
    Balance,
    CsvMapping,
    ReadStatement,
    StatementError,
    StatementFormat,
    StatementLine,
    candidate_signatures,
    decode_text,
    detect_format,
    header_signature,
    line_keys,
    read_statement,
)
from persistence.ids import new_id, utcnow
from persistence.money import to_cents
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest
from resolvers.framework.registry import MEMBERS, capability
from resolvers.services.bank.auto_matching import auto_match
from schema.transactions import CsvMapping as CsvMappingModel
from schema.transactions import ImportStatement, MappingSource, StatedBalance, StatementImported

_DATA_URL = re.compile(r"^data:[\w.+/-]+;base64,", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
MAX_BASE64_CHARS = (MAX_STATEMENT_BYTES + 2) // 3 * 4


def _decode(encoded: str) -> bytes:
    text = _WHITESPACE.sub("", _DATA_URL.sub("", encoded, count=1))
    if len(text) > MAX_BASE64_CHARS:
        raise BadRequest(
            f"Invalid request: base64Data: the file is larger than {MAX_STATEMENT_TEXT}"
        )
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("Invalid request: base64Data: not valid base64") from None
    if not data.strip():
        raise BadRequest("Invalid request: base64Data: the file is empty")
    if len(data) > MAX_STATEMENT_BYTES:
        raise BadRequest(
            f"Invalid request: base64Data: the file is {len(data):,} bytes; "
            f"the limit is {MAX_STATEMENT_TEXT}"
        )
    return data


def engine_mapping(model: CsvMappingModel) -> CsvMapping:
    """The wire's mapping (delimiters by name) as the CSV reader takes it."""
    fields = model.model_dump()
    return CsvMapping(**{**fields, "delimiter": DELIMITERS[fields["delimiter"]]})


def wire_mapping(mapping: CsvMapping) -> CsvMappingModel:
    names = {char: name for name, char in DELIMITERS.items()}
    return CsvMappingModel.model_validate(
        {**mapping.as_dict(), "delimiter": names[mapping.delimiter]}
    )


def _midnight(day: date | None) -> datetime | None:
    return datetime.combine(day, time(), tzinfo=UTC) if day else None


def _record(
    line: StatementLine, key: str, account: str | None, source: dict[str, Any]
) -> dict[str, Any]:
    now = utcnow()
    return {
        "_id": new_id("txn"),
        "key": key,
        "account": line.account or account,
        "bookingDate": _midnight(line.booking_date),
        "valueDate": _midnight(line.value_date),
        "amount": to_cents(line.amount),
        "currency": line.currency,
        "counterparty": line.counterparty,
        "reference": line.reference,
        "bankTransactionId": line.bank_id,
        # What the bank wrote stays, whatever a person corrects later.
        "bank": {"counterparty": line.counterparty, "reference": line.reference},
        "category": None,
        "notes": None,
        "matched": False,
        "matches": [],
        "batch": (
            {"reference": line.batch_ref, "amount": to_cents(line.batch_amount)}
            if line.batch_amount is not None
            else None
        ),
        "source": {**source, "place": line.place},
        "editHistory": [],
        "createdAt": now,
        "updatedAt": now,
    }


def _balance(balance: Balance | None) -> StatedBalance | None:
    if balance is None:
        return None
    return StatedBalance(amount=balance.amount, currency=balance.currency, date=balance.on)


def _refused(format: str, error: StatementError) -> BadRequest:
    return BadRequest(f"Invalid request: base64Data: {format} file, {error.place}: {error.reason}")


async def _read(
    ctx: Context, workspace_id: str, data: bytes, format: StatementFormat, args: ImportStatement
) -> tuple[ReadStatement, MappingSource | None]:
    """The statement read, and for CSV where its mapping came from (given, saved, detected)."""
    source: MappingSource | None = None
    mapping: CsvMapping | None = None
    if format == "csv":
        if args.mapping is not None:
            mapping, source = engine_mapping(args.mapping), "given"
        else:
            keys = [f"account:{args.account}"] if args.account else []
            keys += [f"header:{s}" for s in candidate_signatures(decode_text(data[:65536]))]
            saved = await ctx.store.statement_mappings.find(workspace_id, keys)
            if saved is not None:
                mapping, source = CsvMapping(**saved), "saved"
            else:
                source = "detected"

    def read(chosen: CsvMapping | None) -> ReadStatement:
        return read_statement(
            data,
            format,
            mapping=chosen,
            account=args.account,
            currency=args.currency.upper() if args.currency else None,
            max_lines=MAX_STATEMENT_LINES,
        )

    try:
        return await asyncio.to_thread(read, mapping), source
    except StatementError as error:
        if source != "saved":
            raise _refused(format, error) from None
    # The bank changed its layout since the mapping was saved: detect it again.
    try:
        return await asyncio.to_thread(read, None), "detected"
    except StatementError as error:
        raise _refused(format, error) from None


@capability(
    "statements.import",
    input=ImportStatement,
    output=StatementImported,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
    cost=1,  # reads up to 10 MB and 20,000 lines: one at a time per key
)
async def import_statement(ctx: Context, args: ImportStatement) -> StatementImported:
    """Imports a bank statement (CSV, OFX/QFX, CAMT.053, MT940; at most 10 MB, 20,000
    transactions) as transactions. A malformed file is refused naming its line or element, and
    nothing is stored. Idempotent: lines already imported (same bank id, else same account,
    date, amount, currency, text and place among identical lines) are counted in alreadyThere.
    CSV columns come from mapping, else the mapping saved for the account or header, else the
    header. The transactions added are matched to documents where the matcher is sure (the
    workspace's matches.settings; autoMatched says how many); the others await a person.
    """
    workspace_id = ctx.require_workspace()
    data = _decode(args.base64Data)
    try:
        format: StatementFormat = detect_format(data) if args.format == "auto" else args.format
    except StatementError as error:
        raise _refused("statement", error) from None
    read, mapping_source = await _read(ctx, workspace_id, data, format, args)
    statement = read.statement
    account = statement.account or args.account
    keys = line_keys(statement.lines, account)
    source = {
        "format": format,
        "fileName": args.fileName,
        "importId": new_id("imp"),
        "importedBy": ctx.user_id,
        "importedAt": utcnow(),
    }
    # Every line is offered; the unique (workspace, key) index keeps out those already stored
    # (one round trip, and right when two imports race).
    fresh: dict[str, dict[str, Any]] = {}
    for line, key in zip(statement.lines, keys, strict=True):
        fresh.setdefault(key, _record(line, key, account, source))
    stored = await ctx.store.transactions.insert_new(workspace_id, list(fresh.values()))
    added = len(stored)
    if args.saveMapping and read.mapping is not None and read.header is not None:
        saved_keys = [f"header:{header_signature(read.header, read.mapping.delimiter)}"]
        if account:
            saved_keys.insert(0, f"account:{account}")
        await ctx.store.statement_mappings.save(
            workspace_id, saved_keys, read.mapping.as_dict(), read.header
        )
    auto_matched = await auto_match(ctx, workspace_id, stored)
    return StatementImported(
        format=format,
        added=added,
        alreadyThere=len(keys) - added,
        autoMatched=auto_matched,
        notBooked=statement.skipped,
        account=account,
        currency=statement.currency,
        periodStart=statement.period_start,
        periodEnd=statement.period_end,
        openingBalance=_balance(statement.opening),
        closingBalance=_balance(statement.closing),
        statementId=statement.statement_id,
        mapping=wire_mapping(read.mapping) if read.mapping else None,
        mappingSource=mapping_source,
    )
