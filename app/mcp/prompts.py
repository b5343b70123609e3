"""Prompts: a few tasks a person starts with, written out as the tool calls that do them.

Each prompt names the tools it uses; a connection is offered the prompts whose tools it is
offered (toolsets, read-only, the token's scopes). A prompt holds no data: it is text made
from its arguments, so listing and getting one need no credential.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

MONTH = re.compile(r"^(\d{4})-(0[1-9]|1[0-2])$")
DOCUMENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,100}$")


def call(tool: str, arguments: dict[str, Any]) -> str:
    return f"{tool} {json.dumps(arguments, separators=(',', ':'))}"


def between(first: date, last: date) -> dict[str, Any]:
    """A where clause for document dates from ``first`` to ``last``, both included."""
    return {
        "conditions": [
            {"field": "docDate", "op": "gte", "value": first.isoformat()},
            {"field": "docDate", "op": "lte", "value": last.isoformat()},
        ]
    }


def month_span(text: str | None, today: date) -> tuple[date, date]:
    if not text:
        return today.replace(day=1), today
    found = MONTH.match(text)
    if found is None:
        raise MCPError(types.INVALID_PARAMS, f"month is YYYY-MM, such as 2026-10; got {text!r}")
    first = date(int(found.group(1)), int(found.group(2)), 1)
    return first, (first.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)


def review_spend(arguments: dict[str, str], today: date) -> str:
    first, last = month_span(arguments.get("month"), today)
    before_last = first - timedelta(days=1)
    before_first = before_last.replace(day=1)
    where = between(first, last)
    return "\n".join(
        [
            f"Review my spending from {first} to {last}.",
            "1. Totals per category: "
            + call("documents_count", {"where": where, "groupBy": "category"})
            + " (preferredTotal is in the workspace's preferred currency).",
            "2. The month before, to compare: "
            + call(
                "documents_count",
                {"where": between(before_first, before_last), "groupBy": "category"},
            ),
            "3. Top merchants: " + call("documents_count", {"where": where, "groupBy": "merchant"}),
            "4. The largest expenses: "
            + call(
                "documents_search",
                {"where": where, "useSearch": False, "sortBy": "amount", "limit": 5},
            ),
            "Then tell me the total and its change, the categories that moved most, the largest "
            "expenses, and anything that looks wrong (possible duplicates, a missing category, "
            "amounts far from the usual).",
        ]
    )


def months_back(today: date, count: int) -> date:
    """The first day of the month ``count`` months before ``today``'s."""
    first = today.replace(day=1)
    for _ in range(count):
        first = (first - timedelta(days=1)).replace(day=1)
    return first


def unexported_receipts(arguments: dict[str, str], today: date) -> str:
    since = arguments.get("since") or months_back(today, 2).isoformat()
    try:
        date.fromisoformat(since)
    except ValueError:
        raise MCPError(
            types.INVALID_PARAMS, f"since is YYYY-MM-DD, such as 2026-08-01; got {since!r}"
        ) from None
    where = {"conditions": [{"field": "docDate", "op": "gte", "value": since}]}
    return "\n".join(
        [
            f"Find receipts and invoices from {since} on that are not in the books yet.",
            "1. The connected accounting integration and its tenants: "
            + call("integrations_list", {"category": "accounting"}),
            "2. The documents not sent to it: "
            + call(
                "documents_search",
                {"where": where, "exportStatus": "not-exported", "useSearch": False, "limit": 50},
            )
            + " (follow nextCursor for more).",
            "List them by month with merchant, date and amount, and the total per currency. For "
            "the ones I pick, preview the bill with integrations_send (dryRun true) and send "
            "nothing until I confirm.",
        ]
    )


def check_document(arguments: dict[str, str], today: date) -> str:
    document = arguments.get("documentId") or ""
    if DOCUMENT_ID.match(document) is None:  # it is written into the text: an id, not prose
        raise MCPError(
            types.INVALID_PARAMS,
            f"documentId is a document id such as doc_…; got {document[:40]!r}",
        )
    return "\n".join(
        [
            f"Check how well document {document} was read.",
            "1. " + call("documents_get", {"id": document}),
            "2. Compare with the original: " + call("documents_inspect", {"id": document}),
            "Show me the fields that do not match, with the stored and the visible value, and "
            "propose a documents_update with only those fields. Change nothing until I confirm.",
        ]
    )


def last_month(text: str | None, today: date) -> tuple[date, date]:
    """The month ``text`` names (YYYY-MM), else the month before ``today``'s, in full."""
    if text:
        return month_span(text, today)
    return month_span(months_back(today, 1).strftime("%Y-%m"), today)


def missing_receipts(arguments: dict[str, str], today: date) -> str:
    first, last = last_month(arguments.get("month"), today)
    # Money out (amounts are signed) that no document accounts for yet, booked in the month.
    where = {
        "conditions": [
            {"field": "bookingDate", "op": "gte", "value": first.isoformat()},
            {"field": "bookingDate", "op": "lte", "value": last.isoformat()},
            {"field": "amount", "op": "lt", "value": 0},
            {"field": "matched", "op": "eq", "value": False},
        ]
    }
    return "\n".join(
        [
            f"Find the payments booked from {first} to {last} that no receipt or invoice "
            "accounts for yet.",
            "1. How many, and how much per currency: "
            + call("transactions_count", {"where": where}),
            "2. The payments, largest first: "
            + call(
                "transactions_search",
                {"where": where, "sortBy": "amount", "sortOrder": 1, "limit": 50},
            )
            + " (follow nextCursor for more).",
            "3. For each payment, the documents that could account for it: transactions_candidates "
            "with the payment's id (each candidate has a score and the signals behind it).",
            "Then list the payments in two groups: those with a likely document (show the best "
            "candidate's document id, score and its reasons in a few words) and those with none "
            "(the receipts to find: date, counterparty, amount). End with the number and the total "
            "per currency of each group. Confirm no match (matches_confirm) until I say which.",
        ]
    )


@dataclass(frozen=True)
class PromptSpec:
    """A prompt, the tools it walks an assistant through, and how its text is made."""

    prompt: types.Prompt
    tools: tuple[str, ...]
    render: Callable[[dict[str, str], date], str]


PROMPTS = (
    PromptSpec(
        types.Prompt(
            name="review_spend",
            title="Review a month's spend",
            description="Totals by category and merchant for a month against the month "
            "before, the largest expenses, and what looks wrong",
            arguments=[
                types.PromptArgument(
                    name="month", description="YYYY-MM; default: this month", required=False
                )
            ],
        ),
        ("documents_count", "documents_search"),
        review_spend,
    ),
    PromptSpec(
        types.Prompt(
            name="unexported_receipts",
            title="Find receipts missing from the books",
            description="Documents not yet sent to the connected accounting integration, by "
            "month, with previews of the bills to send",
            arguments=[
                types.PromptArgument(
                    name="since",
                    description="YYYY-MM-DD; default: the first day of the month two months ago",
                    required=False,
                )
            ],
        ),
        ("integrations_list", "documents_search", "integrations_send"),
        unexported_receipts,
    ),
    PromptSpec(
        types.Prompt(
            name="check_document",
            title="Check a document's extraction",
            description="Compare one document's stored fields with its original and propose "
            "corrections",
            arguments=[
                types.PromptArgument(
                    name="documentId", description="Document id (doc_…)", required=True
                )
            ],
        ),
        ("documents_get", "documents_inspect", "documents_update"),
        check_document,
    ),
    PromptSpec(
        types.Prompt(
            name="missing_receipts",
            title="Find receipts missing for last month",
            description="The month's bank payments no document accounts for, each with its "
            "likely documents (reconcile toolset)",
            arguments=[
                types.PromptArgument(
                    name="month", description="YYYY-MM; default: last month", required=False
                )
            ],
        ),
        ("transactions_count", "transactions_search", "transactions_candidates"),
        missing_receipts,
    ),
)


def get_prompt(name: str, arguments: dict[str, str] | None, today: date) -> types.GetPromptResult:
    """The prompt ``name`` written out for ``arguments``, or invalid params saying why."""
    spec = next((spec for spec in PROMPTS if spec.prompt.name == name), None)
    if spec is None:
        known = ", ".join(spec.prompt.name for spec in PROMPTS)
        raise MCPError(types.INVALID_PARAMS, f"Unknown prompt {name!r}; the prompts are {known}")
    given = dict(arguments or {})
    for argument in spec.prompt.arguments or []:
        if argument.required and not given.get(argument.name):
            raise MCPError(
                types.INVALID_PARAMS, f"Prompt {name} needs the argument {argument.name}"
            )
    text = spec.render(given, today)
    return types.GetPromptResult(
        description=spec.prompt.description,
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )


__all__ = ["PROMPTS", "PromptSpec", "get_prompt"]
