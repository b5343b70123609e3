"""Local HTTP servers on real sockets for the rules' outside calls: a fake OpenAI-compatible
chat-completions API and a webhook receiver, each recording what it received."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from tests.live import app_in_thread


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Recorder:
    requests: list[Received] = field(default_factory=list)
    # What the next answers are: a function of the request → (status, body).
    answer: Callable[[Received], tuple[int, Any]] = lambda request: (200, {})


@contextmanager
def serve(recorder: Recorder, path: str) -> Iterator[str]:
    """Serve ``recorder`` at ``path`` (POST) on a free loopback port; the base URL."""

    async def handle(request: Request) -> Response:
        received = Received(request.url.path, dict(request.headers), await request.body())
        recorder.requests.append(received)
        status, body = recorder.answer(received)
        if isinstance(body, str):
            return PlainTextResponse(body, status_code=status)
        return JSONResponse(body, status_code=status)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    app = Starlette(
        routes=[Route(path, handle, methods=["POST"]), Route("/healthz", healthz, methods=["GET"])]
    )

    async def setup(port: int) -> tuple[ASGIApp, None]:
        return app, None

    with app_in_thread(setup) as served:
        yield served.base


def chat_completion(content: str) -> dict[str, Any]:
    """An OpenAI-style chat completion whose one choice says ``content``."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1763900000,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }
