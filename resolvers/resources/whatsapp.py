"""WhatsApp: registered members' photos and PDFs become documents; optional replies.

Owners and admins register a member's number (``whatsapp.register-sender``); the number is
*pending* until it proves it is the member's: the answer carries a one-time code, and the number
must send it as a WhatsApp message to the business number, where the webhook consumes it and
registers the number (``persistence.whatsapp_senders``). A number registered in one workspace
cannot be claimed by another: that workspace's owner or admin must remove it first.

The webhook (``app/inbound/webhooks.py``) hands a verified delivery to ``receive_webhook``: each
message from a registered number becomes a ``whatsapp`` activity item at once (so Meta gets its 200
quickly), and a durable ``fetch-whatsapp-media`` job downloads the media through Graph and hands it
to the same pipeline as files.upload. Messages from a pending number land nowhere: each claiming
workspace gets a ``skipped`` item saying why, with none of the message's content (the claim may be a
stranger's). Messages from unknown numbers are dropped with a log line: there is no workspace to
keep them in. With ``FINCAP_WHATSAPP_REPLY`` the sender gets the extracted total back once the
document is processed (``notify-source`` job).
"""

from __future__ import annotations

import contextlib
import logging
import re
import secrets
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import httpx

from domain.documents import SAVED
from engines.connectors.errors import ConnectorError
from engines.connectors.whatsapp import IncomingMessage, WhatsAppGraph, parse_webhook
from engines.extraction import OverBudget, check_image_bytes
from engines.mail import RECEIPT_TYPES, body_is_receipt
from engines.sniff import sniff_mime
from persistence.jobs import JobRecord
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, NotFound
from resolvers.framework.job_kinds import job_kind
from resolvers.framework.registry import MANAGERS, capability
from resolvers.services.processing.intake import IntakeDuplicate
from resolvers.services.processing.pipeline import NOTIFY_SOURCE, Original, receive_item
from schema.whatsapp import (
    ListWhatsAppSenders,
    RegisterWhatsAppSender,
    RemovedWhatsAppSender,
    RemoveWhatsAppSender,
    WhatsAppSender,
    WhatsAppSenderList,
)

if TYPE_CHECKING:
    from resolvers.framework.services import Services

log = logging.getLogger("fincap.whatsapp")
SOURCE = "whatsapp"
FETCH_MEDIA = "fetch-whatsapp-media"
HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
CLAIM_TTL = timedelta(hours=24)
MAX_PENDING_PER_WORKSPACE = 20
# Verification codes: 8 characters of Crockford's base32 (no I, L, O, U: nothing to misread),
# shown as XXXX-XXXX. 40 bits is plenty: a guess must also come from the number itself.
CODE_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
CODE_IN_TEXT = re.compile(r"(?<![0-9A-Z])([0-9A-Z]{4})[ -]?([0-9A-Z]{4})(?![0-9A-Z])")
MAX_CODES_READ = 5
MISREAD = str.maketrans("OIL", "011")


def phone_digits(text: str) -> str:
    digits = "".join(ch for ch in text if ch.isdigit())
    if not 7 <= len(digits) <= 15:
        raise BadRequest(
            "Invalid request: phoneNumber: expected 7 to 15 digits with the country code"
        )
    return digits


def new_code() -> str:
    """A verification code, ``XXXX-XXXX``."""
    chars = "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))
    return f"{chars[:4]}-{chars[4:]}"


def codes_in(text: str) -> list[str]:
    """The verification codes a message's text may carry (a few at most), as issued. Letters
    a code never holds are read as the digits people mistake them for (O → 0, I and L → 1)."""
    found = CODE_IN_TEXT.findall(text[:1000].upper())
    return [f"{head}-{tail}".translate(MISREAD) for head, tail in found[:MAX_CODES_READ]]


def _registered(row: dict[str, Any]) -> WhatsAppSender:
    return WhatsAppSender(
        phoneNumber=row["_id"], userId=row["userId"], status="active", updatedAt=row["updatedAt"]
    )


def _pending(row: dict[str, Any], code: str | None = None) -> WhatsAppSender:
    return WhatsAppSender(
        phoneNumber=row["phone"],
        userId=row["userId"],
        status="pending",
        updatedAt=row["updatedAt"],
        expiresAt=row["expiresAt"],
        verificationCode=code,
    )


@capability(
    "whatsapp.register-sender",
    input=RegisterWhatsAppSender,
    output=WhatsAppSender,
    permissions=["write_integrations"],
    effect="write",
    roles=MANAGERS,
)
async def register_sender(ctx: Context, args: RegisterWhatsAppSender) -> WhatsAppSender:
    """Registers a member's WhatsApp number (owners and admins): once verified, photos and PDFs it
    sends to the business number become documents here. To verify, send the returned
    verificationCode (shown once) from that number to the business number within 24 hours;
    registering again issues a new code. A number registered in another workspace is refused.
    """
    workspace_id = ctx.require_workspace()
    user_id = args.userId or ctx.user_id
    if await ctx.store.workspaces.role_of(user_id, workspace_id) is None:
        raise NotFound(f"No member '{user_id}' in this workspace")
    phone = phone_digits(args.phoneNumber)
    senders = ctx.store.whatsapp_senders
    existing = await senders.lookup(phone)
    if existing is not None and existing["workspaceId"] != workspace_id:
        raise BadRequest(
            "Invalid request: phoneNumber: registered in another workspace; an owner or admin "
            "there must remove it first"
        )
    if existing is not None:
        if existing["userId"] == user_id:
            return _registered(existing)
        raise BadRequest(
            "Invalid request: phoneNumber: registered to another member of this workspace; "
            "remove it first"
        )
    claims = {row["phone"] for row in await senders.claims(workspace_id)}
    if phone not in claims and len(claims) >= MAX_PENDING_PER_WORKSPACE:
        raise BadRequest(
            f"A workspace has at most {MAX_PENDING_PER_WORKSPACE} numbers waiting for "
            "verification; remove one first"
        )
    code = new_code()
    claim = await senders.claim(
        phone,
        workspace_id,
        user_id,
        code=code,
        by=ctx.user_id,
        expires_at=datetime.now(UTC) + CLAIM_TTL,
    )
    return _pending(claim, code)


@capability(
    "whatsapp.list-senders",
    input=ListWhatsAppSenders,
    output=WhatsAppSenderList,
    permissions=["read_integrations"],
    effect="read",
    roles=MANAGERS,
)
async def list_senders(ctx: Context, args: ListWhatsAppSenders) -> WhatsAppSenderList:
    """Lists this workspace's WhatsApp numbers (owners and admins): active ones, whose messages
    become documents, and pending ones awaiting verification.
    """
    workspace_id = ctx.require_workspace()
    active = [_registered(row) for row in await ctx.store.whatsapp_senders.registered(workspace_id)]
    pending = [_pending(row) for row in await ctx.store.whatsapp_senders.claims(workspace_id)]
    return WhatsAppSenderList(senders=sorted(active + pending, key=lambda s: s.phoneNumber))


@capability(
    "whatsapp.remove-sender",
    input=RemoveWhatsAppSender,
    output=RemovedWhatsAppSender,
    permissions=["write_integrations"],
    effect="destructive",
    roles=MANAGERS,
)
async def remove_sender(ctx: Context, args: RemoveWhatsAppSender) -> RemovedWhatsAppSender:
    """Forgets a WhatsApp number of this workspace, registered or pending (owners and admins):
    its later messages are ignored. Documents it sent stay."""
    phone = phone_digits(args.phoneNumber)
    removed = await ctx.store.whatsapp_senders.remove(ctx.require_workspace(), phone)
    return RemovedWhatsAppSender(phoneNumber=phone, removed=removed)


# -- the webhook ------------------------------------------------------------------------------


async def receive_webhook(services: Services, payload: Any) -> dict[str, int]:
    """Take a verified delivery: counts of accepted, duplicate and ignored messages.
    ``MalformedWebhook`` for a body that is not a WhatsApp Business payload."""
    counts = {"accepted": 0, "duplicates": 0, "ignored": 0}
    for message in parse_webhook(payload):
        if message.kind == "text" and await take_verification(services, message):
            counts["accepted"] += 1
            continue
        sender = await services.store.whatsapp_senders.lookup(message.sender)
        member = sender is not None and (
            await services.store.workspaces.role_of(sender["userId"], sender["workspaceId"])
        )
        if sender is None or not member:
            # Unregistered, pending, or no longer a member of the workspace it was registered
            # in: nothing is taken.
            await note_unregistered(services, message)
            counts["ignored"] += 1
            continue
        if await take_message(services, sender["workspaceId"], sender["userId"], message):
            counts["accepted"] += 1
        else:
            counts["duplicates"] += 1
    return counts


async def take_verification(services: Services, message: IncomingMessage) -> bool:
    """A text carrying the code of a claim on its sender's number: register the number (the
    claiming workspace's activity says so). False when the text carries no such code."""
    verified = await services.store.whatsapp_senders.verify(message.sender, codes_in(message.text))
    if verified is None:
        return False
    record, outcome = verified
    workspace_id = record["workspaceId"]
    if await services.store.activity.find_by_message_ids(
        workspace_id, SOURCE, [message.message_id]
    ):
        return True
    reasoning = (
        f"Verification code received: +{message.sender} is now registered to member "
        f"{record['userId']}; its photos and PDFs become documents of this workspace"
        if outcome == "registered"
        else f"Verification code received, but +{message.sender} was registered in another "
        "workspace meanwhile; it was not registered here"
    )
    await services.store.activity.create(
        workspace_id,
        SOURCE,
        [],
        {"from": "+" + message.sender, "messageType": "verification", "receivedAt": _now()},
        status="skipped",
        reasoning=reasoning,
        message_id=message.message_id,
    )
    return True


async def note_unregistered(services: Services, message: IncomingMessage) -> None:
    """A message from a number that is not registered: each workspace with a pending claim on
    it is told why nothing was taken, without the message's content (the claim may be a
    stranger's); with no claim there is no workspace to tell, only the log."""
    workspaces = await services.store.whatsapp_senders.claimed_in(message.sender)
    if not workspaces:
        log.info("WhatsApp message from an unregistered number ignored")
        return
    for workspace_id in workspaces:
        if await services.store.activity.find_by_message_ids(
            workspace_id, SOURCE, [message.message_id]
        ):
            continue
        await services.store.activity.create(
            workspace_id,
            SOURCE,
            [],
            {"from": "+" + message.sender, "messageType": message.kind, "receivedAt": _now()},
            status="skipped",
            reasoning=f"Not taken: +{message.sender} is waiting for verification. Send the "
            "verification code from this number to the business number first, then send the "
            "receipt again",
            message_id=message.message_id,
        )


def _now() -> datetime:
    return datetime.now(UTC)


async def take_message(
    services: Services, workspace_id: str, user_id: str, message: IncomingMessage
) -> bool:
    """One message into its workspace; False when it was taken before (Meta retries)."""
    store = services.store
    if await store.activity.find_by_message_ids(workspace_id, SOURCE, [message.message_id]):
        return False
    details: dict[str, Any] = {
        "from": "+" + message.sender,
        "sender": message.sender_name,
        "messageType": message.kind,
        "caption": message.caption,
        "snippet": message.caption or message.text[:200],
        "fileName": message.file_name,
        "mimeType": message.mime_type,
        "mediaId": message.media_id,
        "phoneNumberId": message.phone_number_id,
        "sentAt": _when(message.timestamp),
        "receivedAt": datetime.now(UTC),
        "uploadedBy": user_id,
    }
    if services.sources.whatsapp_reply and message.phone_number_id:
        details["notify"] = {
            "channel": SOURCE,
            "to": message.sender,
            "phoneNumberId": message.phone_number_id,
            "replyTo": message.message_id,
        }
    originals: list[Original] = []
    jobs: list[dict[str, Any]] = []
    status, reason = "queued", "Received; waiting for processing"
    if message.media_id is not None:
        # The item and the job that downloads its media, together (the download joins its
        # documents to the item later).
        reason = "Received; downloading the media"
        jobs = [{"kind": FETCH_MEDIA, "payload": {}, "dedupeKey": f"wa-media:{message.message_id}"}]
    elif message.kind == "text":
        is_receipt, why = body_is_receipt(message.text)
        if is_receipt:
            originals = [Original(message.text.encode(), "message.txt", "text/plain")]
        else:
            status = "skipped"
            reason = why.replace(
                "The message has no PDF or image attachment and its text", "The text"
            )
    else:
        status = "skipped"
        reason = f"A {message.kind} message: only photos and documents (PDF, images) are read"
    try:
        await receive_item(
            services,
            workspace_id,
            source=SOURCE,
            originals=originals,
            details=details,
            message_id=message.message_id,
            status=status,
            reasoning=reason,
            jobs=jobs,
        )
    except IntakeDuplicate:
        return False  # Meta delivered it again, or a retry met an intake of it on its way in
    return True


def _when(timestamp: str) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(timestamp), UTC)
    except (TypeError, ValueError, OverflowError):
        return None


def graph(services: Services, client: httpx.AsyncClient) -> WhatsAppGraph:
    config = services.sources
    return WhatsAppGraph(client, config.whatsapp_graph_url, config.whatsapp_access_token)


async def media_give_up(services: Services, job: JobRecord, error: str) -> None:
    await services.store.activity.set_status(
        job["workspaceId"],
        job["payload"]["activityId"],
        "failed",
        f"The media could not be downloaded: {error}",
    )


@job_kind(FETCH_MEDIA, on_give_up=media_give_up)
async def fetch_media(services: Services, job: JobRecord) -> None:
    """Download a message's media through Graph and queue it as a document."""
    workspace_id, activity_id = job["workspaceId"], job["payload"]["activityId"]
    store = services.store
    item = await store.activity.get(workspace_id, activity_id)
    if item is None or item["documentIds"] or item["status"] != "queued":
        return  # gone, or handled by an earlier attempt that died before completing the job
    details = item["details"]
    # Through the outbound policy: Graph answers the media's URL, which is dialed only if it
    # is public (or admitted by the allow-list).
    async with services.outbound.http_client(timeout=HTTP_TIMEOUT) as client:
        try:
            data, declared = await graph(services, client).fetch_media(details["mediaId"])
        except ConnectorError as exc:
            # A job, not a call: the queue retries what may succeed later; the rest is
            # recorded on the activity item, with its kind.
            if exc.retryable:
                raise
            await store.activity.set_status(
                workspace_id,
                activity_id,
                "failed",
                f"The media could not be downloaded: {exc}",
                error_reason=exc.reason,
            )
            return
    actual = sniff_mime(data) if data else None
    if actual not in RECEIPT_TYPES:
        await store.activity.set_status(
            workspace_id,
            activity_id,
            "skipped",
            f"The media ({declared or 'unknown type'}) is not a PDF or an image",
        )
        return
    assert actual is not None
    try:
        check_image_bytes(data)  # an image bomb is refused here, as files.upload refuses it
    except OverBudget as exc:
        await store.activity.set_status(
            workspace_id, activity_id, "failed", f"The media cannot be read: {exc}"
        )
        return
    name = details.get("fileName") or f"whatsapp-{activity_id}{_extension(actual)}"
    with contextlib.suppress(IntakeDuplicate):  # a run of this job before a crash took it in
        await receive_item(
            services,
            workspace_id,
            source=SOURCE,
            originals=[Original(data, name, actual)],
            details=details,
            activity_id=activity_id,
            request_id=job["payload"].get("requestId", ""),
        )


def _extension(mime: str) -> str:
    return {"application/pdf": ".pdf", "image/png": ".png"}.get(mime, ".jpg")


async def reply_text(services: Services, item: dict[str, Any]) -> str:
    """What the sender is told: the total read, or why nothing was."""
    store = services.store
    status = item["status"]
    if status in SAVED and item["documentIds"]:
        shown = ("amount", "currency", "merchant", "docDate")
        document = await store.documents.reads.document(
            item["workspaceId"], item["documentIds"][0], shown
        )
        document = document or {}
        amount = document.get("amount")
        total = (
            f"{amount:.2f} {document.get('currency') or ''}".strip()
            if isinstance(amount, Decimal)
            else "no total found"
        )
        merchant = document.get("merchant") or "unknown merchant"
        day = document.get("docDate")
        when = f", {day:%Y-%m-%d}" if isinstance(day, date) else ""
        text = f"Receipt saved: {merchant}{when}, total {total}."
        return text + (" Please check it: " + item["reasoning"] if status == "warning" else "")
    return f"Not saved as a receipt ({status}): {item['reasoning']}"


@job_kind(NOTIFY_SOURCE)
async def notify_source(services: Services, job: JobRecord) -> None:
    """Tell the sender what came of their message (a WhatsApp reply); sent once."""
    workspace_id, activity_id = job["workspaceId"], job["payload"]["activityId"]
    item = await services.store.activity.get(workspace_id, activity_id)
    notify = (item or {}).get("details", {}).get("notify") or {}
    if item is None or notify.get("channel") != SOURCE or notify.get("sentId"):
        return
    body = await reply_text(services, item)
    async with services.outbound.http_client(timeout=HTTP_TIMEOUT) as client:
        try:
            sent = await graph(services, client).send_text(
                notify["phoneNumberId"], notify["to"], body, notify.get("replyTo")
            )
        except ConnectorError as exc:  # a job: retried by the queue when it may succeed later
            if exc.retryable:
                raise
            log.warning("WhatsApp reply refused", extra={"activityId": activity_id})
            return
    await services.store.activity.mark_notified(workspace_id, activity_id, sent or "sent", body)
