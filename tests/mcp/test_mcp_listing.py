"""What ``tools/list`` costs an assistant, and whether it can act on it: the size budget, a
description on every input property, output schemas only on computed answers, and schemas a
JSON Schema validator accepts (``$ref`` into ``$defs`` resolved)."""

from __future__ import annotations

import json
import re
import statistics
from collections.abc import Iterator
from typing import Any

import httpx
from jsonschema import Draft202012Validator

from app.mcp.tools import OUTPUT_SCHEMA_SLUGS, tool_name, toolset_of
from app.mcp.toolsets import OPT_IN
from resolvers.framework.registry import Registry
from tests.mcp.test_mcp_face import rpc

# Issue 28: the default listing at most 40 KB (about 10k tokens), the median tool at most 1 KB.
BUDGET_BYTES = 40_000
MEDIAN_BUDGET_BYTES = 1_000


def compact(value: Any) -> int:
    """Bytes as sent: compact UTF-8 JSON (bench/mcp_tools.py measures the same way)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def listed(http: httpx.AsyncClient, query: str = "") -> dict[str, Any]:
    response = await rpc(http, "tools/list") if not query else await http.post(
        f"/mcp{query}", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )  # fmt: skip
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def undescribed(schema: Any, path: str = "") -> Iterator[str]:
    """Every property of ``schema`` without a description, at any depth: the call's own
    arguments, nested objects, array items, ``$defs``, typed ``anyOf`` branches. A branch
    that only says which properties must be present (``{required: [...]}``, or properties
    without a type of their own) describes nothing new and is skipped."""
    if isinstance(schema, list):
        for item in schema:
            yield from undescribed(item, path)
        return
    if not isinstance(schema, dict):
        return
    for name, sub in (schema.get("properties") or {}).items():
        if not isinstance(sub, dict) or not sub.get("description", "").strip():
            yield f"{path}.{name}"
        yield from undescribed(sub, f"{path}.{name}")
    for key in ("items", "additionalProperties"):
        yield from undescribed(schema.get(key), f"{path}[]")
    for name, sub in (schema.get("$defs") or {}).items():
        yield from undescribed(sub, f"$defs.{name}")
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in schema.get(key) or []:
            if isinstance(branch, dict) and ("type" in branch or "$ref" in branch):
                yield from undescribed(branch, path)


def test_the_check_finds_an_undescribed_property_anywhere() -> None:
    described = {"type": "string", "description": "d"}
    assert list(undescribed({"properties": {"a": described}})) == []
    assert list(undescribed({"properties": {"a": {"type": "string"}}})) == [".a"]
    nested = {"$defs": {"Line": {"type": "object", "properties": {"qty": {"type": "number"}}}}}
    assert list(undescribed(nested)) == ["$defs.Line.qty"]
    items = {"properties": {"xs": {**described, "type": "array", "items": {
        "type": "object", "properties": {"b": {"type": "string", "description": " "}},
    }}}}  # fmt: skip
    assert list(undescribed(items)) == [".xs[].b"]
    # "one of these must be set" branches restate properties described elsewhere.
    presence = {"properties": {"a": described}, "anyOf": [{"required": ["a"]}]}
    assert list(undescribed(presence)) == []


async def test_default_listing_fits_the_budget(http: httpx.AsyncClient, registry: Registry) -> None:
    body = await listed(http)
    tools = body["result"]["tools"]
    # The default listing is every capability a full-scope credential may call, but for the
    # opt-in toolsets (administration, reconciliation), which a connection asks for by name.
    offered = {tool_name(s.slug) for s in registry if toolset_of(s.slug) not in OPT_IN}
    assert {tool["name"] for tool in tools} == offered | {"workspace_get_context"}
    assert {toolset_of(s.slug) for s in registry} & OPT_IN, "no opt-in toolset is left"
    sizes = {tool["name"]: compact(tool) for tool in tools}
    total = compact(body)
    assert total <= BUDGET_BYTES, f"tools/list is {total} bytes: {sorted(sizes.items())}"
    assert statistics.median(sizes.values()) <= MEDIAN_BUDGET_BYTES
    # No repeated boilerplate: titles only repeat the name, pydantic titles every property.
    assert '"title"' not in json.dumps(tools)


async def test_every_input_property_is_described(http: httpx.AsyncClient) -> None:
    tools = (await listed(http))["result"]["tools"]
    missing = [
        f"{tool['name']}{where}" for tool in tools for where in undescribed(tool["inputSchema"])
    ]
    assert missing == []


async def test_schemas_are_valid_and_refs_resolve(http: httpx.AsyncClient) -> None:
    tools = {tool["name"]: tool for tool in (await listed(http))["result"]["tools"]}
    for tool in tools.values():
        Draft202012Validator.check_schema(tool["inputSchema"])
        assert tool["inputSchema"]["type"] == "object"
    # The worked example in each where description is a valid call (its $refs resolve).
    for name in ("documents_search", "documents_count"):
        schema = tools[name]["inputSchema"]
        example = re.search(r"Example: (\{.*\})$", schema["properties"]["where"]["description"])
        assert example is not None, name
        where = json.loads(example.group(1))
        assert list(Draft202012Validator(schema).iter_errors({"where": where})) == []
        bad = {"where": {"conditions": [{"field": "amount", "op": "between"}]}}
        assert list(Draft202012Validator(schema).iter_errors(bad)), name
    # A decimal is a number or a string of digits; null still clears a field in an update.
    update = Draft202012Validator(tools["documents_update"]["inputSchema"])
    for good in ({"id": "doc_1", "amount": 12.5}, {"id": "doc_1", "amount": "12.50"},
                 {"id": "doc_1", "category": None}, {"id": "doc_1", "docType": None}):  # fmt: skip
        assert list(update.iter_errors(good)) == [], good
    assert list(update.iter_errors({"id": "doc_1", "amount": "12,50"}))


async def test_output_schemas_only_on_computed_answers(http: httpx.AsyncClient) -> None:
    tools = (await listed(http))["result"]["tools"]
    with_output = {tool["name"] for tool in tools if "outputSchema" in tool}
    assert with_output == {tool_name(slug) for slug in OUTPUT_SCHEMA_SLUGS} == {"documents_count"}
    count = next(tool for tool in tools if tool["name"] == "documents_count")
    # As sent: a total is a JSON number, not "a number or a string" as inputs accept.
    total = count["outputSchema"]["$defs"]["PreferredTotal"]["properties"]["amount"]
    assert total == {"type": "number"}


async def test_where_descriptions_list_fields_types_and_operators(
    http: httpx.AsyncClient,
) -> None:
    tools = {tool["name"]: tool for tool in (await listed(http))["result"]["tools"]}
    text = tools["documents_search"]["inputSchema"]["properties"]["where"]["description"]
    assert "date (YYYY-MM-DD): docDate" in text
    assert "money (decimal, 2 places): amount, taxAmount, subtotal" in text
    assert "docType (receipt|invoice|refund|credit-note|other)" in text
    assert "gt gte lt lte in nin on money/date" in text and "regex on string" in text
    # documents_count's set is narrower: said as what it leaves out of documents_search's.
    count = tools["documents_count"]["inputSchema"]["properties"]["where"]["description"]
    assert count.startswith("The fields, types and ops of documents_search's where, except id,")
    assert "paymentStatus" in count and "expenseLocation.primary.{" in count
    assert "merchant" not in count.split("Example")[0]


async def test_every_call_a_prompt_writes_out_is_valid(http: httpx.AsyncClient) -> None:
    """The prompts spell out tool calls; each must pass its tool's listed schema (a renamed
    argument or a changed enum would otherwise leave a prompt teaching a wrong call)."""
    tools = {tool["name"]: tool for tool in (await listed(http))["result"]["tools"]}
    prompts = (await rpc(http, "prompts/list")).json()["result"]["prompts"]
    arguments = {"review_spend": {"month": "2026-02"}, "unexported_receipts": {},
                 "check_document": {"documentId": "doc_1"}}  # fmt: skip
    assert {prompt["name"] for prompt in prompts} == set(arguments)
    seen = 0
    for name, given in arguments.items():
        got = await rpc(http, "prompts/get", {"name": name, "arguments": given})
        text = got.json()["result"]["messages"][0]["content"]["text"]
        for tool, call in re.findall(r"\b([a-z]+_[a-z_]+) (\{.*?\})(?=[ .\n]|$)", text):
            schema = tools[tool]["inputSchema"]
            errors = list(Draft202012Validator(schema).iter_errors(json.loads(call)))
            assert errors == [], (name, tool, call, errors)
            seen += 1
    assert seen >= 7  # every call of the three prompts was found and checked


async def test_the_missing_receipts_prompt_teaches_valid_reconcile_calls(
    http: httpx.AsyncClient,
) -> None:
    """Offered with the reconcile toolset (opt-in) only; its calls pass the listed schemas and
    ask for the month's unmatched payments."""
    default = (await rpc(http, "prompts/list")).json()["result"]["prompts"]
    assert "missing_receipts" not in {prompt["name"] for prompt in default}
    query = "?toolsets=reconcile"
    tools = {tool["name"]: tool for tool in (await listed(http, query))["result"]["tools"]}
    message = {"jsonrpc": "2.0", "id": 1, "method": "prompts/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    offered = (await http.post(f"/mcp{query}", json=message, headers=headers)).json()
    assert [p["name"] for p in offered["result"]["prompts"]] == ["missing_receipts"]
    get = {**message, "method": "prompts/get",
           "params": {"name": "missing_receipts", "arguments": {"month": "2026-02"}}}  # fmt: skip
    got = (await http.post(f"/mcp{query}", json=get, headers=headers)).json()
    text = got["result"]["messages"][0]["content"]["text"]
    calls = re.findall(r"\b([a-z]+_[a-z_]+) (\{.*?\})(?=[ .\n]|$)", text)
    assert [tool for tool, _ in calls] == ["transactions_count", "transactions_search"]
    for tool, call in calls:
        errors = list(
            Draft202012Validator(tools[tool]["inputSchema"]).iter_errors(json.loads(call))
        )
        assert errors == [], (tool, call, errors)
        conditions = json.loads(call)["where"]["conditions"]
        assert {"field": "bookingDate", "op": "gte", "value": "2026-02-01"} in conditions
        assert {"field": "bookingDate", "op": "lte", "value": "2026-02-28"} in conditions
        assert {"field": "matched", "op": "eq", "value": False} in conditions
    assert "transactions_candidates" in text and "transactions_candidates" in tools
    # Without the toolset, getting it says which tools are missing.
    refused = (await http.post("/mcp", json=get, headers=headers)).json()
    assert "transactions_candidates" in refused["error"]["message"]
