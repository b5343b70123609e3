"""WhatsApp: registered members' photos and PDFs become documents; optional replies.

The webhook (``app/inbound.py``) hands a verified delivery to ``receive_webhook``: each message
from a registered number becomes a ``whatsapp`` activity item at once (so Meta gets its 200
quickly), and a durable ``fetch-whatsapp-media`` job downloads the media through Graph and hands
it to the same pipeline as files.upload. Messages from unknown numbers are dropped: there is
no workspace to keep them in. With ``FINCAP_WHATSAPP_REPLY`` the sender gets the extracted
total back once the document is processed (``notify-source`` job).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import httpx

from engines.connectors.errors import ConnectorError
from engines.connectors.whatsapp import IncomingMessage, WhatsAppGraph, parse_webhook
from engines.mail import RECEIPT_TYPES, body_is_receipt
from engines.sniff import sniff_mime
from persistence.jobs import JobRecord
from resolvers.context import Context
from resolvers.errors import BadRequest, NotFound
from resolvers.job_kinds import job_kind
from resolvers.pipeline import NOTIFY_SOURCE, Original, receive_item
from resolvers.registry import capability
from resolvers.workspaces import require_manager
from schema.whatsapp import (
    ListWhatsAppSenders,
    RegisterWhatsAppSender,
    RemovedWhatsAppSender,
    RemoveWhatsAppSender,
    WhatsAppSender,
    WhatsAppSenderList,
)

if TYPE_CHECKING:
    from resolvers.context import Services

log = logging.getLogger("fincap.whatsapp")
SOURCE = "whatsapp"
FETCH_MEDIA = "fetch-whatsapp-media"
HTTP_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


def phone_digits(text: str) -> str:
    digits = "".join(ch for ch in text if ch.isdigit())
    if not 7 <= len(digits) <= 15:
        raise BadRequest(
            "Invalid request: phoneNumber: expected 7 to 15 digits with the country code"
        )
    return digits


def _sender(row: dict[str, Any]) -> WhatsAppSender:
    return WhatsAppSender(phoneNumber=row["_id"], userId=row["userId"], updatedAt=row["updatedAt"])


@capability(
    "whatsapp.register-sender",
    input=RegisterWhatsAppSender,
    output=WhatsAppSender,
    permissions=["write_integrations"],
    effect="write",
)
async def register_sender(ctx: Context, args: RegisterWhatsAppSender) -> WhatsAppSender:
    """Maps a WhatsApp number to a member of this workspace: photos and PDFs that number sends
    to the business number become this workspace's documents. A number belongs to one workspace
    at a time; registering it here moves it. Owners and admins may register other members."""
    workspace_id = ctx.require_workspace()
    user_id = args.userId or ctx.user_id
    if user_id != ctx.user_id:
        require_manager(ctx)
        if await ctx.store.workspaces.role_of(user_id, workspace_id) is None:
            raise NotFound(f"No member '{user_id}' in this workspace")
    phone = phone_digits(args.phoneNumber)
    existing = await ctx.store.whatsapp_senders.lookup(phone)
    if (
        existing is not None
        and existing["workspaceId"] != workspace_id
        and existing["userId"] != ctx.user_id
    ):
        # Someone else's number in another workspace cannot be taken over from here.
        raise BadRequest("Invalid request: phoneNumber: registered by another user")
    return _sender(await ctx.store.whatsapp_senders.register(phone, workspace_id, user_id))


@capability(
    "whatsapp.list-senders",
    input=ListWhatsAppSenders,
    output=WhatsAppSenderList,
    permissions=["read_integrations"],
    effect="read",
)
async def list_senders(ctx: Context, args: ListWhatsAppSenders) -> WhatsAppSenderList:
    """Lists the WhatsApp numbers whose messages become this workspace's documents."""
    rows = await ctx.store.whatsapp_senders.list(ctx.require_workspace())
    return WhatsAppSenderList(senders=[_sender(row) for row in rows])


@capability(
    "whatsapp.remove-sender",
    input=RemoveWhatsAppSender,
    output=RemovedWhatsAppSender,
    permissions=["write_integrations"],
    effect="destructive",
)
async def remove_sender(ctx: Context, args: RemoveWhatsAppSender) -> RemovedWhatsAppSender:
    """Forgets a registered WhatsApp number: its later messages are ignored. Documents it sent
    stay."""
    phone = phone_digits(args.phoneNumber)
    removed = await ctx.store.whatsapp_senders.remove(ctx.require_workspace(), phone)
    return RemovedWhatsAppSender(phoneNumber=phone, removed=removed)


# -- the webhook ------------------------------------------------------------------------------


async def receive_webhook(services: Services, payload: Any) -> dict[str, int]:
    """Take a verified delivery: counts of accepted, duplicate and ignored messages.
    ``MalformedWebhook`` for a body that is not a WhatsApp Business payload."""
    counts = {"accepted": 0, "duplicates": 0, "ignored": 0}
    for message in parse_webhook(payload):
        sender = await services.store.whatsapp_senders.lookup(message.sender)
        member = sender is not None and (
            await services.store.workspaces.role_of(sender["userId"], sender["workspaceId"])
        )
        if sender is None or not member:
            # Unregistered, or no longer a member of the workspace it was registered in.
            log.info("WhatsApp message from an unregistered number ignored")
            counts["ignored"] += 1
            continue
        if await take_message(services, sender["workspaceId"], sender["userId"], message):
            counts["accepted"] += 1
        else:
            counts["duplicates"] += 1
    return counts


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
    if message.media_id is not None:
        item = await store.activity.create(
            workspace_id,
            SOURCE,
            [],
            details,
            reasoning="Received; downloading the media",
            message_id=message.message_id,
        )
        try:
            await store.jobs.enqueue(
                workspace_id,
                FETCH_MEDIA,
                {"activityId": item["_id"]},
                dedupe_key=f"wa-media:{message.message_id}",
            )
        except Exception:
            await store.activity.delete(workspace_id, item["_id"])
            raise
        services.wake_workers()
        return True
    if message.kind == "text":
        is_receipt, why = body_is_receipt(message.text)
        if is_receipt:
            await receive_item(
                services,
                workspace_id,
                source=SOURCE,
                originals=[Original(message.text.encode(), "message.txt", "text/plain")],
                details=details,
                message_id=message.message_id,
            )
            return True
        reason = why.replace("The message has no PDF or image attachment and its text", "The text")
    else:
        reason = f"A {message.kind} message: only photos and documents (PDF, images) are read"
    await store.activity.create(
        workspace_id,
        SOURCE,
        [],
        details,
        status="skipped",
        reasoning=reason,
        message_id=message.message_id,
    )
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
            if exc.retryable:
                raise
            await store.activity.set_status(
                workspace_id, activity_id, "failed", f"The media could not be downloaded: {exc}"
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
    name = details.get("fileName") or f"whatsapp-{activity_id}{_extension(actual)}"
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
    if status in {"processed", "warning"} and item["documentIds"]:
        record = await store.documents.get(item["workspaceId"], item["documentIds"][0]) or {}
        amount = record.get("amount")
        total = (
            f"{amount / 100:.2f} {record.get('currency') or ''}".strip()
            if isinstance(amount, int)
            else "no total found"
        )
        merchant = record.get("merchant") or "unknown merchant"
        day = record.get("docDate")
        when = f", {day:%Y-%m-%d}" if isinstance(day, datetime) else ""
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
        except ConnectorError as exc:
            if exc.retryable:
                raise
            log.warning("WhatsApp reply refused", extra={"activityId": activity_id})
            return
    await services.store.activity.mark_notified(workspace_id, activity_id, sent or "sent", body)
