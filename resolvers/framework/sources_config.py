"""What the inbound sources (email, WhatsApp, mailboxes) need from the configuration.

Built by ``Settings.sources`` and handed to ``Services``; resolvers never read settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engines.mail_limits import MailLimits

DEFAULT_MAX_MESSAGE_BYTES = 15 * 1024 * 1024


@dataclass(frozen=True)
class SourceConfig:
    """Inbound sources' configuration (defaults suit tests)."""

    inbound_domain: str = "inbound.localhost"
    inbound_max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    # What reading one message may cost: header sizes, recipients, parts, documents taken.
    mail_limits: MailLimits = field(default_factory=MailLimits)
    whatsapp_graph_url: str = "https://graph.facebook.com/v21.0"
    whatsapp_access_token: str = ""
    whatsapp_reply: bool = False
    mailbox_poll_s: float = 300.0
    mailbox_fetch_limit: int = 50  # messages imported per mailbox per poll
