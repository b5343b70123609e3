"""The language-model fallback against a fake OpenAI-compatible server on a socket: asked only
when the grammar falls short, its answer kept only when it validates as a rule."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from app.host.config import ConfigError, Settings
from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on
from tests.documents.conftest import call, result
from tests.outbound import LOOPBACK_FAKES
from tests.rules.local_servers import Recorder, chat_completion, serve

OLDER = "Archive receipts in GBP older than 90 days"
MODEL_RULE = {
    "name": "Archive old GBP receipts",
    "trigger": {"type": "document-processed"},
    "conditions": {
        "logic": "and",
        "conditions": [
            {"field": "docType", "op": "eq", "value": "receipt"},
            {"field": "currency", "op": "eq", "value": "GBP"},
            {"field": "docDate", "op": "lt", "value": "2026-08-25"},
        ],
    },
    "actions": [{"type": "archive"}],
}


@pytest.fixture
def model() -> Iterator[tuple[Recorder, str]]:
    recorder = Recorder()
    recorder.answer = lambda request: (
        200,
        chat_completion(json.dumps({"rule": MODEL_RULE, "notUnderstood": []})),
    )
    with serve(recorder, "/v1/chat/completions") as base:
        yield recorder, base


@pytest.fixture
async def llm_client(
    store: Store, registry: Registry, model: tuple[Recorder, str]
) -> AsyncIterator[httpx.AsyncClient]:
    settings = Settings(
        rules_llm_url=f"{model[1]}/v1",
        rules_llm_model="test-model",
        rules_llm_api_key="sk-test",
        outbound_allow=LOOPBACK_FAKES,
    )
    app = app_on(store, registry, settings)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://fincap.test") as client:
        yield client


def answer_with(recorder: Recorder, status: int, body: Any) -> None:
    recorder.answer = lambda request: (status, body)


async def prepare(client: httpx.AsyncClient, tenant: Tenant, sentence: str) -> dict[str, Any]:
    preview: dict[str, Any] = result(
        await call(client, tenant, "rules.prepare", {"naturalLanguageRule": sentence})
    )
    return preview


async def test_the_model_reads_what_the_grammar_could_not(
    llm_client: httpx.AsyncClient, alice: Tenant, model: tuple[Recorder, str]
) -> None:
    recorder, _ = model
    preview = await prepare(llm_client, alice, OLDER)
    assert preview["parsedBy"] == "llm" and preview["notUnderstood"] == []
    assert preview["rule"]["conditions"] == MODEL_RULE["conditions"]
    assert [{k: v for k, v in a.items() if v is not None} for a in preview["rule"]["actions"]] == [
        {"type": "archive"}
    ]
    (request,) = recorder.requests
    assert request.headers["authorization"] == "Bearer sk-test"
    body = request.json()
    assert body["model"] == "test-model" and body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert (system["role"], user) == ("system", {"role": "user", "content": OLDER})
    assert '"RuleAction"' in system["content"] and "docDate" in system["content"]

    # Saved as the model read it.
    saved = result(
        await call(
            llm_client, alice, "rules.execute", {"naturalLanguageRule": OLDER, "confirm": True}
        )
    )
    assert saved["rule"]["definition"]["conditions"] == MODEL_RULE["conditions"]


async def test_a_sentence_the_grammar_reads_never_reaches_the_model(
    llm_client: httpx.AsyncClient, alice: Tenant, model: tuple[Recorder, str]
) -> None:
    preview = await prepare(llm_client, alice, "Archive receipts under 1 dollar")
    assert preview["parsedBy"] == "grammar" and model[0].requests == []


@pytest.mark.parametrize(
    ("status", "body", "why"),
    [
        (
            200,
            chat_completion(
                json.dumps(
                    {
                        "rule": {
                            **MODEL_RULE,
                            "conditions": {
                                "conditions": [{"field": "vendorName", "op": "eq", "value": "x"}]
                            },
                        }
                    }
                )
            ),
            "cannot be filtered here",
        ),
        (
            200,
            chat_completion(
                json.dumps({"rule": {**MODEL_RULE, "actions": [{"type": "launch-rocket"}]}})
            ),
            "actions[0].type",
        ),
        (
            200,
            chat_completion("Sure! Here is your rule: archive old receipts."),
            "did not answer with JSON",
        ),
        (
            200,
            chat_completion(json.dumps({"rule": None, "notUnderstood": [OLDER]})),
            "found no rule",
        ),
        (500, {"error": {"message": "overloaded"}}, "HTTP 500"),
        (200, {"unexpected": True}, "not a chat completion"),
    ],
)
async def test_an_answer_that_is_no_valid_rule_is_not_used(
    llm_client: httpx.AsyncClient,
    alice: Tenant,
    model: tuple[Recorder, str],
    status: int,
    body: Any,
    why: str,
) -> None:
    answer_with(model[0], status, body)
    preview = await prepare(llm_client, alice, OLDER)
    assert preview["parsedBy"] == "grammar"
    assert preview["notUnderstood"] == ["older than 90 days"]
    assert preview["rule"]["actions"][0]["type"] == "archive"  # the grammar's reading
    assert any(why in warning for warning in preview["warnings"]), preview["warnings"]


async def test_an_unreachable_model_falls_back_to_the_grammar(
    store: Store, registry: Registry, alice: Tenant
) -> None:
    from persistence.embedded import free_port

    settings = Settings(
        rules_llm_url=f"http://127.0.0.1:{free_port()}/v1",
        rules_llm_model="m",
        rules_llm_timeout_s=2,
        outbound_allow=LOOPBACK_FAKES,
    )
    app = app_on(store, registry, settings)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
    ) as client:
        preview = await prepare(client, alice, OLDER)
    assert preview["parsedBy"] == "grammar" and preview["rule"] is not None
    assert any("could not be reached" in w for w in preview["warnings"])


async def test_fenced_json_and_graphql(
    llm_client: httpx.AsyncClient, alice: Tenant, model: tuple[Recorder, str]
) -> None:
    fenced = "```json\n" + json.dumps({"rule": MODEL_RULE, "notUnderstood": ["soon"]}) + "\n```"
    answer_with(model[0], 200, chat_completion(fenced))
    response = await llm_client.post(
        "/v1/graphql",
        json={
            "query": "query($i: PrepareRuleInput!) { rulesPrepare(input: $i) { parsedBy "
            "notUnderstood rule { name actions { type } } } }",
            "variables": {"i": {"naturalLanguageRule": OLDER}},
        },
        headers=alice.headers(),
    )
    preview = response.json()["data"]["rulesPrepare"]
    assert preview == {
        "parsedBy": "llm",
        "notUnderstood": ["soon"],
        "rule": {"name": "Archive old GBP receipts", "actions": [{"type": "archive"}]},
    }


def test_a_model_url_needs_a_model_name() -> None:
    with pytest.raises(ConfigError, match="FINCAP_RULES_LLM_MODEL"):
        Settings.from_env(rules_llm_url="http://127.0.0.1:1/v1")
