"""An OpenAI-compatible chat-completions endpoint, asked for a rule as JSON.

Used only when it is configured (``FINCAP_RULES_LLM_URL``) and only for sentences the grammar
could not read completely. The answer is never trusted: the caller validates it against the
same rule model as the grammar's and falls back to the grammar's reading when it does not fit.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import httpx

from engines.outbound import OutboundPolicy


class RuleModelError(Exception):
    """The endpoint failed or answered something that is not a JSON object."""


@dataclass(frozen=True)
class RuleModelConfig:
    """Where the model is and how long to wait for it."""

    url: str  # base URL, e.g. http://localhost:11434/v1 (…/chat/completions is appended)
    model: str
    api_key: str | None = None
    timeout_s: float = 20.0


INSTRUCTIONS = """You turn one sentence describing an automation rule for receipts and invoices
into JSON. Answer with one JSON object and nothing else:
{"rule": <a rule as described by the JSON schema below, or null if the sentence asks for no
action this schema can express>, "notUnderstood": [<the parts of the sentence the rule does not
reflect, quoted from it>]}.
Conditions are a where clause {"logic": "and"|"or", "conditions": [{"field", "op", "value"}]}.
Fields: %(fields)s. Ops: eq, ne, gt, gte, lt, lte, in, nin, regex, exists. Match merchants with
op regex and a lower-case word pattern such as \\\\bnetflix\\\\b. Amounts are numbers in the
document's currency; add a currency condition when the sentence names one. Use trigger type
document-processed unless the sentence says the rule runs when a document is updated
(document-updated) or on a schedule (schedule, with a schedule object). A rule whose subject
is bank transactions (transactions, card payments, bookings, debits) uses trigger type
transaction-matched: its conditions use the transaction fields counterparty, reference, amount
(negative for money paid), currency, account, bookingDate and valueDate, and its actions are
only set-category, set-merchant, mark-recurring or add-tag (they change the documents matched
to the transaction). Do not invent conditions the sentence does not state.
JSON schema of a rule:
%(schema)s"""


class RuleModel:
    """Calls one chat-completions endpoint through the outbound policy."""

    def __init__(self, config: RuleModelConfig, outbound: OutboundPolicy) -> None:
        self.config = config
        self._outbound = outbound

    async def read(
        self, sentence: str, schema: dict[str, Any], fields: list[str]
    ) -> dict[str, Any]:
        """The model's answer as a JSON object (``{"rule": …, "notUnderstood": […]}``)."""
        body = {
            "model": self.config.model,
            "temperature": 0,
            "response_format": {"type": "json_object"},
            "messages": [
                {
                    "role": "system",
                    "content": INSTRUCTIONS
                    % {"fields": ", ".join(fields), "schema": json.dumps(schema)},
                },
                {"role": "user", "content": sentence},
            ],
        }
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        url = self.config.url.rstrip("/") + "/chat/completions"
        try:
            async with self._outbound.http_client(timeout=self.config.timeout_s) as client:
                response = await client.post(url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            raise RuleModelError(f"the language model could not be reached: {exc}") from None
        if response.status_code != 200:
            raise RuleModelError(
                f"the language model answered HTTP {response.status_code}: {response.text[:200]}"
            )
        try:
            content = response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise RuleModelError("the language model's answer is not a chat completion") from exc
        return _json_object(content)


def _json_object(content: Any) -> dict[str, Any]:
    if not isinstance(content, str):
        raise RuleModelError("the language model's message has no text")
    text = content.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise RuleModelError("the language model did not answer with JSON") from exc
    if not isinstance(value, dict):
        raise RuleModelError("the language model did not answer with a JSON object")
    return value
