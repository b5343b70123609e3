"""Connected mailboxes: the ``email`` source. A workspace connects an IMAP mailbox; a durable
``poll-mailbox`` job reads it every ``FINCAP_MAILBOX_POLL_SECONDS`` and hands new messages to
the same intake as inbound email (``resolvers.services.processing.inbound_email.deliver``).

The password is encrypted with the server keyring (AES-256-GCM, bound to the mailbox id) and
decrypted only to sign in. The bookmark (UIDVALIDITY + last UID) is written after every message,
and message ids already in the activity log are never taken twice, so a restart or a crash
mid-poll imports nothing twice. A failing read marks the mailbox ``error`` with the reason and
writes one failed activity item each time the error changes (not one per poll).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from engines.connectors.errors import ConnectorError, ConnectorUnreachable
from engines.connectors.imap import SIGN_IN_CHECK_TIMEOUT_S, ImapMailbox
from engines.mail import body_is_receipt
from engines.mail_limits import MessageRefused
from persistence.ids import utcnow
from persistence.jobs import JobRecord
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, NotFound
from resolvers.framework.job_kinds import RunAgain, job_kind
from resolvers.framework.registry import MANAGERS, MEMBERS, capability
from resolvers.services.connections.mailbox_connections import connector_for, seal_password
from resolvers.services.processing.inbound_email import deliver, read_off_loop
from schema.mailboxes import (
    ConnectMailbox,
    DisconnectedMailbox,
    ListMailboxes,
    Mailbox,
    MailboxList,
    MailboxPollResult,
    MailboxRef,
)

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.mailboxes")
SOURCE = "email"
POLL_MAILBOX = "poll-mailbox"
DEFAULT_LOOKBACK = timedelta(days=7)


def _mailbox(row: dict[str, Any]) -> Mailbox:
    fields: dict[str, Any] = {k: row.get(k) for k in Mailbox.model_fields if k != "id"}
    return Mailbox.model_validate({**fields, "id": row["_id"], "server": row["host"]})


@capability(
    "mailboxes.connect",
    input=ConnectMailbox,
    output=Mailbox,
    permissions=["write_integrations"],
    effect="write",
    roles=MANAGERS,
)
async def connect(ctx: Context, args: ConnectMailbox) -> Mailbox:
    """Connects an IMAP mailbox as a receipt source (owners and admins): every few minutes, new
    messages' PDF and image attachments and order confirmations become documents. It signs in
    first: a wrong password or unreachable server is a 400, nothing saved. The password is stored
    encrypted, never returned.
    """
    workspace_id = ctx.require_workspace()
    probe = ImapMailbox(
        host=args.server,
        port=args.port,
        security=args.security,
        username=args.username,
        password=args.password,
        folder=args.folder,
        timeout_s=SIGN_IN_CHECK_TIMEOUT_S,
        outbound=ctx.services.outbound,
    )
    try:
        await probe.check()
    except ConnectorError as exc:
        if isinstance(exc, ConnectorUnreachable):
            # The outbound policy's one text for every unreachable server (refused by the
            # policy, closed, timed out, not an IMAP server): nothing about the network.
            raise BadRequest(f"Invalid request: server: {exc.message}") from None
        # What the IMAP server itself answered once connected (a refused sign-in, a folder).
        raise BadRequest(f"Could not connect to {probe.describe()}: {exc.message}") from None
    mailbox_id = ctx.store.mailboxes.new_id()
    since = args.importSince or first_read_since(None)
    record: dict[str, Any] = {
        "_id": mailbox_id,
        "host": args.server,
        "port": args.port,
        "security": args.security,
        "username": args.username,
        "folder": args.folder,
        # BSON has no date type: the import date is kept as midnight UTC.
        "importSince": datetime.combine(since, datetime.min.time(), UTC),
        "passwordEncrypted": seal_password(ctx.services.keyring, args.password, mailbox_id),
        "createdBy": ctx.user_id,
    }
    created = await ctx.store.mailboxes.create(workspace_id, record)
    await ctx.store.jobs.enqueue(
        workspace_id, POLL_MAILBOX, {"mailboxId": mailbox_id}, dedupe_key=f"mailbox:{mailbox_id}"
    )
    ctx.services.wake_workers()
    return _public(created)


def _public(row: dict[str, Any]) -> Mailbox:
    since = row.get("importSince")
    return _mailbox({**row, "importSince": since.date() if isinstance(since, datetime) else since})


@capability(
    "mailboxes.list",
    input=ListMailboxes,
    output=MailboxList,
    permissions=["read_integrations"],
    effect="read",
)
async def list_mailboxes(ctx: Context, args: ListMailboxes) -> MailboxList:
    """Lists the workspace's connected mailboxes: status (active, or error with the last error),
    when each was last read and how many messages came in.
    """
    rows = await ctx.store.mailboxes.list(ctx.require_workspace())
    return MailboxList(mailboxes=[_public(row) for row in rows])


@capability(
    "mailboxes.poll",
    input=MailboxRef,
    output=MailboxPollResult,
    permissions=["write_integrations"],
    effect="write",
    roles=MEMBERS,
)
async def poll_now(ctx: Context, args: MailboxRef) -> MailboxPollResult:
    """Reads a connected mailbox now rather than at the next scheduled read; returns what it took
    in. A failing read is reported on the mailbox (status error).
    """
    workspace_id = ctx.require_workspace()
    if await ctx.store.mailboxes.get(workspace_id, args.id) is None:
        raise NotFound(f"No mailbox '{args.id}'")
    activity_ids = await poll_mailbox(ctx.services, workspace_id, args.id)
    row = await ctx.store.mailboxes.get(workspace_id, args.id)
    if row is None:
        raise NotFound(f"No mailbox '{args.id}'")
    return MailboxPollResult(
        mailbox=_public(row), imported=len(activity_ids), activityIds=activity_ids
    )


@capability(
    "mailboxes.disconnect",
    input=MailboxRef,
    output=DisconnectedMailbox,
    permissions=["write_integrations"],
    effect="destructive",
    roles=MANAGERS,
)
async def disconnect(ctx: Context, args: MailboxRef) -> DisconnectedMailbox:
    """Disconnects a mailbox: it is no longer read and its stored password is deleted.
    Documents and activity it brought in stay. Owners and admins only."""
    workspace_id = ctx.require_workspace()
    if not await ctx.store.mailboxes.delete(workspace_id, args.id):
        raise NotFound(f"No mailbox '{args.id}'")
    return DisconnectedMailbox(id=args.id, disconnected=True)


# -- polling ----------------------------------------------------------------------------------

_locks: dict[str, asyncio.Lock] = {}


async def poll_mailbox(services: Services, workspace_id: str, mailbox_id: str) -> list[str]:
    """Read new messages of one mailbox into the workspace; the new activity item ids."""
    # One read at a time per mailbox in this process (a manual poll beside the scheduled one).
    lock = _locks.setdefault(mailbox_id, asyncio.Lock())
    async with lock:
        return await _poll(services, workspace_id, mailbox_id)


async def _poll(services: Services, workspace_id: str, mailbox_id: str) -> list[str]:
    store = services.store
    row = await store.mailboxes.get_secret(workspace_id, mailbox_id)
    if row is None:
        return []
    where = f"imap://{row['username']}@{row['host']}:{row['port']}/{row['folder']}"
    try:
        mailbox = connector_for(services, row)
    except ConnectorError as exc:
        await _record_error(services, workspace_id, row, where, exc)
        return []
    since = row.get("importSince")
    since_date = since.date() if isinstance(since, datetime) else None
    taken: list[str] = []
    try:
        validity, messages = await mailbox.fetch_new(
            row.get("lastUid") or 0, since_date, services.sources.mailbox_fetch_limit
        )
        if row.get("uidValidity") not in (None, validity):
            # The folder was renumbered: start over; message ids keep anything from repeating.
            await store.mailboxes.reset_bookmark(workspace_id, mailbox_id, validity)
            validity, messages = await mailbox.fetch_new(
                0, since_date, services.sources.mailbox_fetch_limit
            )
        for fetched in messages:
            item_id = await _take(services, workspace_id, row, fetched.uid, fetched.raw)
            if item_id is not None:
                taken.append(item_id)
            await store.mailboxes.advance(
                workspace_id, mailbox_id, validity, fetched.uid, 1 if item_id else 0
            )
    except ConnectorError as exc:
        await _record_error(services, workspace_id, row, mailbox.describe(), exc)
        return taken
    await store.mailboxes.mark_polled(workspace_id, mailbox_id, None, utcnow())
    return taken


async def _take(
    services: Services, workspace_id: str, row: dict[str, Any], uid: int, raw: bytes
) -> str | None:
    """One fetched message into the workspace; its new activity id (None when seen before)."""
    details = {"mailboxId": row["_id"], "mailbox": row["username"], "uid": uid}
    try:
        # Off the event loop and bounded, as for mail delivered to the workspace's address.
        message = await read_off_loop(services, raw)
    except MessageRefused as exc:
        item = await services.store.activity.create(
            workspace_id,
            SOURCE,
            [],
            {**details, "size": len(raw)},
            status="failed",
            reasoning=f"Message {uid} of {row['username']} could not be taken: {exc}",
            message_id=f"<{row['_id']}-uid-{uid}@fincap>",
        )
        return str(item["_id"])
    receipt_text, skip_reason = None, ""
    if not message.attachments:
        is_receipt, skip_reason = await asyncio.to_thread(body_is_receipt, message.text)
        receipt_text = message.text if is_receipt else None
    delivered = await deliver(
        services,
        workspace_id,
        message,
        raw,
        source=SOURCE,
        receipt_text=receipt_text,
        skip_reason=skip_reason,
        details=details,
    )
    return None if delivered.duplicate else delivered.activity_id


async def _record_error(
    services: Services, workspace_id: str, row: dict[str, Any], where: str, exc: ConnectorError
) -> None:
    """The mailbox's read failed: on its record (words and kind), and in the activity log
    unless it is the same failure as last time."""
    error, reason = exc.message, exc.reason
    before = await services.store.mailboxes.mark_polled(
        workspace_id, row["_id"], error, utcnow(), reason
    )
    log.warning(
        "mailbox read failed",
        extra={"mailboxId": row["_id"], "error": error, "errorReason": reason},
    )
    # The words are what the log would show again, so they are what is compared (not a
    # decision on the failure's kind, which ``reason`` carries).
    if before is not None and before.get("status") == "error" and before.get("lastError") == error:
        return  # the same error as last time: already in the activity log
    await services.store.activity.create(
        workspace_id,
        SOURCE,
        [],
        {
            "mailboxId": row["_id"],
            "mailbox": row["username"],
            "error": error,
            "errorReason": reason,
        },
        status="failed",
        reasoning=f"Reading {where} failed: {error}",
    )


@job_kind(POLL_MAILBOX)
async def run_poll(services: Services, job: JobRecord) -> RunAgain | None:
    """A ``poll-mailbox`` job: read the mailbox, then run again after the poll interval (until
    the mailbox is disconnected)."""
    workspace_id, mailbox_id = job["workspaceId"], job["payload"]["mailboxId"]
    if await services.store.mailboxes.get(workspace_id, mailbox_id) is None:
        return None
    try:
        await poll_mailbox(services, workspace_id, mailbox_id)
    except Exception as exc:
        # Never let the schedule die (a dead job would stop the mailbox for good): say what
        # happened on the mailbox and try again at the next interval.
        log.exception("mailbox poll failed unexpectedly", extra={"mailboxId": mailbox_id})
        with contextlib.suppress(Exception):
            await services.store.mailboxes.mark_polled(
                workspace_id, mailbox_id, f"internal error: {type(exc).__name__}", utcnow()
            )
    return RunAgain(at=utcnow() + timedelta(seconds=services.sources.mailbox_poll_s))


def first_read_since(value: date | None) -> date:
    """The first read's start: ``importSince``, else a week before connecting."""
    return value or (datetime.now(UTC) - DEFAULT_LOOKBACK).date()
