"""Reading event streams in tests: an SSE response driven through ASGI (httpx's ASGI transport
waits for the whole body, which a stream never finishes), and the SSE text format."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from starlette.types import ASGIApp, Message

from resolvers.framework.context import Principal

# Put on a stream's chunks when the app finished the response (the stream ended by itself).
ENDED = "\x00ended"


def key(key_id: str) -> Principal:
    """A principal for the hub's own tests: key ``key_id`` of a person of its own."""
    return Principal(user_id=f"usr_{key_id}", key_id=key_id)


@dataclass
class SseMessage:
    """One message of an event stream (comments dropped)."""

    id: str | None
    event: str | None
    data: dict[str, Any]


@dataclass
class SseReader:
    """Turns chunks of ``text/event-stream`` into messages, counting heartbeat comments."""

    buffer: str = ""
    heartbeats: int = 0
    retry: int | None = None
    pending: list[SseMessage] = field(default_factory=list)

    def feed(self, text: str) -> None:
        self.buffer += text
        while "\n\n" in self.buffer:
            block, self.buffer = self.buffer.split("\n\n", 1)
            fields: dict[str, str] = {}
            for line in block.split("\n"):
                if line.startswith(":"):
                    self.heartbeats += "keep-alive" in line
                    continue
                name, _, value = line.partition(": ")
                fields[name] = value
            if "retry" in fields:
                self.retry = int(fields["retry"])
            if "data" in fields:
                self.pending.append(
                    SseMessage(fields.get("id"), fields.get("event"), json.loads(fields["data"]))
                )


@dataclass
class AsgiStream:
    """An HTTP response being streamed by an ASGI app."""

    status: int
    headers: dict[str, str]
    chunks: asyncio.Queue[str]
    reader: SseReader = field(default_factory=SseReader)

    async def message(self, timeout: float = 5.0) -> SseMessage:
        """The next SSE message."""
        while not self.reader.pending:
            chunk = await asyncio.wait_for(self.chunks.get(), timeout)
            if chunk == ENDED:
                raise AssertionError("the stream ended")
            self.reader.feed(chunk)
        return self.reader.pending.pop(0)

    async def until_end(self, timeout: float = 10.0) -> list[SseMessage]:
        """Every message until the app ends the stream; ``TimeoutError`` when it has not
        ended within ``timeout`` seconds (a hang guard: the end is the event waited for)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            chunk = await asyncio.wait_for(self.chunks.get(), max(0.0, deadline - loop.time()))
            if chunk == ENDED:
                messages, self.reader.pending = self.reader.pending, []
                return messages
            self.reader.feed(chunk)

    async def body(self, timeout: float = 5.0, total: float = 2.0) -> str:
        """What is sent until a pause of 0.2 s after the first chunk (``timeout`` for the
        first), or ``total`` seconds at most (a stream never pauses for long)."""
        text = ""
        loop = asyncio.get_running_loop()
        end = loop.time() + total
        with contextlib.suppress(TimeoutError):
            while loop.time() < end:
                wait = timeout if not text else min(0.2, max(0.0, end - loop.time()))
                chunk = await asyncio.wait_for(self.chunks.get(), wait)
                if chunk == ENDED:
                    break
                text += chunk
        return text


@contextlib.asynccontextmanager
async def asgi_get(
    app: ASGIApp, path: str, headers: Mapping[str, str], query: str = ""
) -> AsyncIterator[AsgiStream]:
    """``GET path`` on ``app``; the client disconnects when the block ends (and the app's task
    must finish then)."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "server": ("fincap.test", 80),
        "client": ("127.0.0.1", 50000),
        "state": {},
    }
    requested = False
    leave = asyncio.Event()

    async def receive() -> Message:
        nonlocal requested
        if not requested:
            requested = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await leave.wait()
        return {"type": "http.disconnect"}

    started: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
    chunks: asyncio.Queue[str] = asyncio.Queue()

    async def send(message: Message) -> None:
        if message["type"] == "http.response.start":
            started.set_result(message)
        elif message["type"] == "http.response.body":
            chunks.put_nowait(message.get("body", b"").decode())
            if not message.get("more_body", False):
                chunks.put_nowait(ENDED)

    task = asyncio.create_task(app(scope, receive, send))
    start = await asyncio.wait_for(started, 10)
    answer = {k.decode(): v.decode() for k, v in start["headers"]}
    try:
        yield AsgiStream(start["status"], answer, chunks)
    finally:
        leave.set()
        await asyncio.wait_for(task, 10)
