"""Doors for machines that push documents in (not capabilities: their callers hold a shared
secret, not an API key, and speak their own formats):

    webhooks  ``POST /v1/inbound/email`` (a mail relay's raw message) and the WhatsApp webhook
    smtp      the SMTP receiver inside ``fincap serve`` (``FINCAP_INBOUND_SMTP_PORT``)
"""

from __future__ import annotations

from app.inbound.smtp import start_smtp_server
from app.inbound.webhooks import INBOUND_EMAIL_PATH, inbound_routes

__all__ = ["INBOUND_EMAIL_PATH", "inbound_routes", "start_smtp_server"]
