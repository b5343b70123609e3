"""WhatsApp Cloud API: webhook signatures and payloads in, media and replies through Graph.

The webhook (``POST``) carries ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body
with the app secret>``; ``parse_webhook`` turns a ``whatsapp_business_account`` payload into the
messages it holds. Media are two Graph calls: ``GET {base}/{media-id}`` answers the media's
temporary ``url`` and ``mime_type``, then ``GET url`` (same bearer token) answers the bytes.
A reply is ``POST {base}/{phone-number-id}/messages``. The base URL is configurable, so tests
point it at a local fake speaking the same shapes.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from typing import Any, ClassVar

import httpx

from domain.uploads import MAX_UPLOAD_BYTES, MAX_UPLOAD_TEXT
from engines.connectors.errors import (
    ConnectorUnreachable,
    InvalidAnswer,
    TooLarge,
    error_for_status,
)

MAX_MEDIA_BYTES = MAX_UPLOAD_BYTES  # files.upload's limit
MEDIA_TYPES = ("image", "document")


def signature_valid(app_secret: str, body: bytes, header: str | None) -> bool:
    """Whether ``header`` is the ``sha256=…`` HMAC of ``body`` under ``app_secret``."""
    if not header or not header.startswith("sha256=") or not app_secret:
        return False
    expected = hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header.removeprefix("sha256=").strip().lower())


def sign(app_secret: str, body: bytes) -> str:
    """The header value Meta sends for ``body`` (tests and the bench sign with it)."""
    return "sha256=" + hmac.new(app_secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class IncomingMessage:
    """One user message of a webhook delivery."""

    message_id: str  # wamid.…
    sender: str  # the sender's phone number, digits only (wa_id)
    sender_name: str
    phone_number_id: str  # the business number it was sent to (replies go from it)
    kind: str  # image, document, text, …
    timestamp: str
    media_id: str | None = None
    mime_type: str | None = None
    file_name: str | None = None
    caption: str = ""
    text: str = ""


class MalformedWebhook(ValueError):
    """The body is not a WhatsApp Business webhook payload."""


def parse_webhook(payload: Any) -> list[IncomingMessage]:
    """The messages of one webhook delivery (status updates and other fields are ignored)."""
    if not isinstance(payload, dict) or payload.get("object") != "whatsapp_business_account":
        raise MalformedWebhook("object must be whatsapp_business_account")
    entries = payload.get("entry")
    if not isinstance(entries, list):
        raise MalformedWebhook("entry must be a list")
    found: list[IncomingMessage] = []
    for entry in entries:
        for change in (entry or {}).get("changes") or []:
            if not isinstance(change, dict) or change.get("field") != "messages":
                continue
            value = change.get("value") or {}
            metadata = value.get("metadata") or {}
            names = {
                c.get("wa_id"): (c.get("profile") or {}).get("name", "")
                for c in value.get("contacts") or []
                if isinstance(c, dict)
            }
            for message in value.get("messages") or []:
                found.append(_message(message, metadata, names))
    return found


def _message(message: Any, metadata: dict[str, Any], names: dict[Any, Any]) -> IncomingMessage:
    if not isinstance(message, dict) or not message.get("id") or not message.get("from"):
        raise MalformedWebhook("every message needs an id and a from")
    kind = str(message.get("type") or "unknown")
    media = message.get(kind) if kind in MEDIA_TYPES else None
    media = media if isinstance(media, dict) else {}
    sender = "".join(ch for ch in str(message["from"]) if ch.isdigit())
    return IncomingMessage(
        message_id=str(message["id"]),
        sender=sender,
        sender_name=str(names.get(message["from"], "") or ""),
        phone_number_id=str(metadata.get("phone_number_id") or ""),
        kind=kind,
        timestamp=str(message.get("timestamp") or ""),
        media_id=str(media["id"]) if media.get("id") else None,
        mime_type=str(media["mime_type"]).split(";")[0].strip() if media.get("mime_type") else None,
        file_name=str(media["filename"]) if media.get("filename") else None,
        caption=str(media.get("caption") or ""),
        text=str((message.get("text") or {}).get("body") or "") if kind == "text" else "",
    )


class WhatsAppGraph:
    """Graph calls of the Cloud API with one access token, over an injectable HTTP client."""

    kind: ClassVar[str] = "whatsapp"

    def __init__(self, client: httpx.AsyncClient, base_url: str, access_token: str) -> None:
        self._client = client
        self._base = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {access_token}"}

    def describe(self) -> str:
        return self._base

    async def fetch_media(self, media_id: str) -> tuple[bytes, str]:
        """The media's bytes and MIME type; ``ConnectorError`` when Graph refuses."""
        info = await self._json("GET", f"{self._base}/{media_id}")
        url, mime = info.get("url"), str(info.get("mime_type") or "").split(";")[0].strip()
        if not isinstance(url, str) or not url:
            raise InvalidAnswer(f"Graph returned no url for media {media_id}")
        size = info.get("file_size")
        if isinstance(size, int) and size > MAX_MEDIA_BYTES:
            raise TooLarge(f"media {media_id} is {size:,} bytes; the limit is {MAX_UPLOAD_TEXT}")
        try:
            async with self._client.stream("GET", url, headers=self._headers) as response:
                if response.status_code != 200:
                    raise error_for_status(
                        response.status_code,
                        f"downloading media {media_id} failed with HTTP {response.status_code}",
                    )
                chunks: list[bytes] = []
                total = 0
                async for chunk in response.aiter_bytes():
                    total += len(chunk)
                    if total > MAX_MEDIA_BYTES:
                        raise TooLarge(f"media {media_id} is larger than {MAX_UPLOAD_TEXT}")
                    chunks.append(chunk)
        except httpx.HTTPError as exc:
            # The outbound policy's text ("could not connect to host:port") for any failure.
            raise ConnectorUnreachable(f"downloading media {media_id} failed: {exc}") from None
        except httpx.InvalidURL:
            raise InvalidAnswer(f"Graph returned an invalid url for media {media_id}") from None
        return b"".join(chunks), mime

    async def send_text(
        self, phone_number_id: str, to: str, body: str, reply_to: str | None = None
    ) -> str:
        """Send a text message; the new message's id."""
        message: dict[str, Any] = {
            "messaging_product": "whatsapp",
            "recipient_type": "individual",
            "to": to,
            "type": "text",
            "text": {"preview_url": False, "body": body[:4096]},
        }
        if reply_to:
            message["context"] = {"message_id": reply_to}
        answer = await self._json("POST", f"{self._base}/{phone_number_id}/messages", json=message)
        sent = answer.get("messages")
        first = sent[0] if isinstance(sent, list) and sent and isinstance(sent[0], dict) else {}
        return str(first.get("id") or "")

    async def _json(self, method: str, url: str, **kwargs: Any) -> dict[str, Any]:
        """The JSON object Graph answered; ``ConnectorError`` otherwise, whatever the body:
        a refusal (4xx) is permanent, a 429, 5xx or a broken connection is worth retrying."""
        try:
            response = await self._client.request(method, url, headers=self._headers, **kwargs)
        except httpx.HTTPError as exc:
            raise ConnectorUnreachable(f"Graph {method} {url} failed: {exc}") from None
        status = response.status_code
        try:
            data: Any = response.json()
        except ValueError:  # not JSON at all (an HTML error page, a proxy's text)
            data = None
        if status != 200:
            raise error_for_status(
                status, f"Graph answered HTTP {status}: {graph_error(data, response.text)}"
            )
        if not isinstance(data, dict):
            # Not what the Cloud API answers with 200: asking again would get the same.
            raise InvalidAnswer(
                f"Graph answered HTTP 200 with {_shape(data)} instead of a JSON object: "
                f"{_snippet(response.text)}",
                status=status,
            )
        return data


def graph_error(data: Any, text: str) -> str:
    """The message of a Graph error body: ``{"error": {"message": …}}`` as documented, else
    whatever readable text the body has (a string under ``error``, a page, nothing)."""
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str) and error["message"]:
        return error["message"][:300]
    if isinstance(error, str) and error:
        return error[:300]
    return _snippet(text)


def _shape(data: Any) -> str:
    if data is None:
        return "a body that is not JSON"
    if isinstance(data, list):
        return "a JSON array"
    return "a JSON string" if isinstance(data, str) else "a JSON value"


def _snippet(text: str, limit: int = 200) -> str:
    """A body as one short line of readable text, for a reason people read."""
    plain = " ".join(text.split())
    if not plain:
        return "(an empty body)"
    return repr(plain[:limit] + ("…" if len(plain) > limit else ""))
