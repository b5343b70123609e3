"""HTTP doors for inbound sources: raw email posted by a mail relay, and the WhatsApp webhook.

These are not capabilities: their callers are machines holding a shared secret (the relay's
``FINCAP_INBOUND_SECRET``, Meta's app secret), not users holding API keys, and their bodies
are the senders' formats (RFC 5322, WhatsApp payloads), not capability JSON. Each is off (404)
until its secret is configured. Answers use the usual failure envelope.
"""

from __future__ import annotations

import hmac
import logging

from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from app.host.config import Settings
from app.http.envelope import EnvelopeResponse, failure, render_error
from app.http.json_body import MalformedJson, parse_json
from app.http.request_context import services_of
from engines.connectors.whatsapp import MalformedWebhook, signature_valid
from resolvers.resources.whatsapp import receive_webhook
from resolvers.services.processing.inbound_email import InboundRejected, accept_email
from resolvers.services.processing.intake import IntakeBusy

log = logging.getLogger("fincap.inbound")


INBOUND_EMAIL_PATH = "/v1/inbound/email"


def _secret_matches(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())


def inbound_routes(settings: Settings) -> list[Route]:
    """``POST /v1/inbound/email``, ``GET``/``POST /v1/webhooks/whatsapp``."""
    inbound_secret = settings.inbound_secret.get_secret_value() if settings.inbound_secret else None
    verify_token = (
        settings.whatsapp_verify_token.get_secret_value()
        if settings.whatsapp_verify_token
        else None
    )
    app_secret = (
        settings.whatsapp_app_secret.get_secret_value() if settings.whatsapp_app_secret else None
    )

    async def inbound_email(request: Request) -> Response:
        """One raw message (``message/rfc822`` body); recipients from ``?to=`` (repeatable,
        the envelope) or else from the message's own To/Cc/Delivered-To headers."""
        if inbound_secret is None:
            return failure(404, "Inbound email over HTTP is not enabled (FINCAP_INBOUND_SECRET)")
        header = request.headers.get("authorization", "")
        given = header[7:].strip() if header[:7].lower() == "bearer " else None
        if not _secret_matches(inbound_secret, given):
            return failure(401, "The inbound secret is missing or wrong")
        raw = await request.body()
        if not raw.strip():
            return failure(400, "Malformed message: the body is empty (send the raw message)")
        try:
            delivered = await accept_email(
                services_of(request),
                raw,
                request.query_params.getlist("to"),
                via="http",
                request_id=request.scope.get("state", {}).get("request_id", ""),
            )
        except InboundRejected as exc:
            return failure(exc.http_status, exc.message)
        except Exception as exc:  # the store away (503) or its disk full (507): the relay retries
            return render_error(exc)
        return EnvelopeResponse(
            {
                "success": True,
                "code": 200,
                "data": {
                    "result": {
                        "accepted": [
                            {
                                "activityId": d.activity_id,
                                "status": d.status,
                                "documentIds": list(d.document_ids),
                                "duplicate": d.duplicate,
                            }
                            for d in delivered
                        ]
                    }
                },
            }
        )

    async def whatsapp_verify(request: Request) -> Response:
        """Meta's subscription handshake: echo ``hub.challenge`` when the token matches."""
        if verify_token is None:
            return failure(404, "The WhatsApp webhook is not enabled")
        params = request.query_params
        if params.get("hub.mode") != "subscribe" or not _secret_matches(
            verify_token, params.get("hub.verify_token")
        ):
            return failure(403, "Verification failed: wrong hub.mode or hub.verify_token")
        return PlainTextResponse(params.get("hub.challenge", ""))

    async def whatsapp_event(request: Request) -> Response:
        if app_secret is None:
            return failure(404, "The WhatsApp webhook is not enabled")
        body = await request.body()
        if not signature_valid(app_secret, body, request.headers.get("x-hub-signature-256")):
            return failure(401, "X-Hub-Signature-256 is missing or does not match the body")
        try:
            payload = parse_json(body)
            counts = await receive_webhook(services_of(request), payload)
        except (MalformedJson, MalformedWebhook) as exc:
            return failure(400, f"Not a WhatsApp webhook payload: {exc}")
        except IntakeBusy as exc:  # the same message on its way in elsewhere: Meta sends again
            busy = failure(503, f"Try again later: {exc}")
            busy.headers["Retry-After"] = "30"
            return busy
        except Exception as exc:  # the store away (503) or its disk full (507): Meta retries
            return render_error(exc)
        return EnvelopeResponse({"success": True, "code": 200, "data": {"result": counts}})

    async def whatsapp(request: Request) -> Response:
        # One route for both methods, so any other method is a 405 naming GET and POST.
        if request.method == "GET":
            return await whatsapp_verify(request)
        return await whatsapp_event(request)

    return [
        Route(INBOUND_EMAIL_PATH, inbound_email, methods=["POST"]),
        Route("/v1/webhooks/whatsapp", whatsapp, methods=["GET", "POST"]),
    ]
