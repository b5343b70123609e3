"""What automation rules may reach outside fincap, as configured (``FINCAP_RULES_LLM_*``,
``FINCAP_SMTP_*``, ``FINCAP_WEBHOOK_TIMEOUT_SECONDS``); the app factory builds it from settings.
Where the connections may go is the outbound policy's business (``Services.outbound``)."""

from __future__ import annotations

from dataclasses import dataclass

from engines.rules.llm import RuleModelConfig
from engines.rules.notify import SmtpConfig


@dataclass(frozen=True)
class AutomationConfig:
    """The language model for sentences the grammar cannot read, the SMTP relay for e-mail
    notifications, and the webhook timeout; None means not configured."""

    rule_model: RuleModelConfig | None = None
    smtp: SmtpConfig | None = None
    webhook_timeout_s: float = 10.0
