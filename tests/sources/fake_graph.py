"""A local stand-in for the WhatsApp Cloud API's Graph endpoints, on a real socket.

It speaks the shapes of the real API: ``GET /{version}/{media-id}`` → media metadata with a
download ``url``; ``GET`` that url → the bytes; ``POST /{version}/{phone-number-id}/messages``
→ the sent message's id. Every call needs ``Authorization: Bearer <token>``, as Graph does;
a wrong token is Graph's OAuthException (HTTP 401, code 190).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERSION = "v21.0"


@dataclass
class GraphState:
    token: str
    media: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # id → (bytes, mime)
    sent: list[dict[str, Any]] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    base: str = ""
    # Path → (status, body, content type): answers that are not the API's documented shapes.
    canned: dict[str, tuple[int, bytes, str]] = field(default_factory=dict)
    # A download url Graph answers for a media id instead of its own (where media "live").
    urls: dict[str, str] = field(default_factory=dict)


def _handler(state: GraphState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _reply(self, status: int, body: Any, content_type: str = "application/json") -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _authorized(self) -> bool:
            if self.headers.get("Authorization") == f"Bearer {state.token}":
                return True
            self._reply(
                401,
                {
                    "error": {
                        "message": "Invalid OAuth access token - Cannot parse access token",
                        "type": "OAuthException",
                        "code": 190,
                        "fbtrace_id": "AbCdEf",
                    }
                },
            )
            return False

        def do_GET(self) -> None:
            state.calls.append(f"GET {self.path}")
            if not self._authorized():
                return
            if self.path in state.canned:
                status, body, content_type = state.canned[self.path]
                self._reply(status, body, content_type)
                return
            parts = self.path.strip("/").split("/")
            if parts[0] == "download" and len(parts) == 2 and parts[1] in state.media:
                data, mime = state.media[parts[1]]
                self._reply(200, data, mime)
            elif len(parts) == 2 and parts[0] == VERSION and parts[1] in state.media:
                data, mime = state.media[parts[1]]
                self._reply(
                    200,
                    {
                        "messaging_product": "whatsapp",
                        "url": state.urls.get(parts[1], f"{state.base}/download/{parts[1]}"),
                        "mime_type": mime,
                        "sha256": hashlib.sha256(data).hexdigest(),
                        "file_size": len(data),
                        "id": parts[1],
                    },
                )
            else:
                self._reply(
                    404,
                    {
                        "error": {
                            "message": "Unsupported get request.",
                            "type": "GraphMethodException",
                            "code": 100,
                        }
                    },
                )

        def do_POST(self) -> None:
            state.calls.append(f"POST {self.path}")
            if not self._authorized():
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            parts = self.path.strip("/").split("/")
            if len(parts) == 3 and parts[0] == VERSION and parts[2] == "messages":
                state.sent.append({"phoneNumberId": parts[1], **body})
                self._reply(
                    200,
                    {
                        "messaging_product": "whatsapp",
                        "contacts": [{"input": body.get("to"), "wa_id": body.get("to")}],
                        "messages": [{"id": f"wamid.reply{len(state.sent)}"}],
                    },
                )
            else:
                self._reply(404, {"error": {"message": "Unknown path", "code": 100}})

    return Handler


@contextmanager
def fake_graph(token: str) -> Iterator[GraphState]:
    """A running fake Graph; ``state.base`` is the server root (the API is under /v21.0)."""
    state = GraphState(token=token)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    # shutdown() returns at the server's next poll: every 50 ms, not the default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def webhook(
    messages: list[dict[str, Any]], phone_number_id: str = "109876543210"
) -> dict[str, Any]:
    """A delivery in the Cloud API's shape, holding ``messages``."""
    return {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "id": "102290129340398",
                "changes": [
                    {
                        "value": {
                            "messaging_product": "whatsapp",
                            "metadata": {
                                "display_phone_number": "15550783881",
                                "phone_number_id": phone_number_id,
                            },
                            "contacts": [
                                {
                                    "profile": {"name": m.get("_name", "Alice")},
                                    "wa_id": m.get("from"),
                                }
                                for m in messages
                            ],
                            "messages": [
                                {k: v for k, v in m.items() if not k.startswith("_")}
                                for m in messages
                            ],
                        },
                        "field": "messages",
                    }
                ],
            }
        ],
    }


def document_message(wamid: str, sender: str, media_id: str, name: str) -> dict[str, Any]:
    return {
        "from": sender,
        "id": wamid,
        "timestamp": "1710237600",
        "type": "document",
        "document": {
            "caption": "Northwind invoice",
            "filename": name,
            "mime_type": "application/pdf",
            "sha256": "ignored-by-fincap",
            "id": media_id,
        },
    }


def image_message(wamid: str, sender: str, media_id: str) -> dict[str, Any]:
    return {
        "from": sender,
        "id": wamid,
        "timestamp": "1710237600",
        "type": "image",
        "image": {"caption": "lunch", "mime_type": "image/png", "sha256": "x", "id": media_id},
    }


def text_message(wamid: str, sender: str, body: str) -> dict[str, Any]:
    return {
        "from": sender,
        "id": wamid,
        "timestamp": "1710237600",
        "type": "text",
        "text": {"body": body},
    }
