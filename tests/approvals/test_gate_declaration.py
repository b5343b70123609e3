"""The gating declaration on ``@capability`` and what it does to a capability's output."""

from __future__ import annotations

import typing

import httpx
import pytest
from pydantic import BaseModel

from resolvers.framework.registry import ApprovalGate, Registry, capability
from schema.approvals import with_approval
from schema.base import CapabilityInput, CapabilityOutput
from schema.integrations import SendResult


class NoDryRun(CapabilityInput):
    name: str


class Done(CapabilityOutput):
    done: bool


def test_gated_capabilities_of_the_registry(registry: Registry) -> None:
    gated = sorted(spec.slug for spec in registry if spec.approval is not None)
    assert gated == [
        "documents.bulk-edit",
        "integrations.send",
        "integrations.unlink",
        "rules.execute",
    ]
    send = registry.get("integrations.send-to-integration")
    assert send is not None and send.slug == "integrations.send"
    assert registry.get("integrations.unlink-document") is registry.get("integrations.unlink")


def test_a_gate_on_execute_mode_needs_a_dry_run_input() -> None:
    with pytest.raises(ValueError, match="needs a dryRun input"):

        @capability(
            "probe.run",
            input=NoDryRun,
            output=Done,
            permissions=[],
            effect="write",
            approval=ApprovalGate("Run"),
        )
        async def run(ctx: object, args: NoDryRun) -> Done:
            """Runs."""
            return Done(done=True)


def test_with_approval_widens_the_result_under_the_same_name() -> None:
    widened = with_approval(SendResult)
    assert widened.__name__ == "SendResult" and widened is with_approval(SendResult)
    status = widened.model_fields["status"].annotation
    members = [a for a in typing.get_args(status) if a is not type(None)]
    assert typing.get_args(members[0]) == ("preview", "queued", "approval_required")
    assert not any(info.is_required() for info in widened.model_fields.values())
    assert {"approvalRequestId", "capability", "title", "description"} <= set(widened.model_fields)

    class Clash(BaseModel):
        title: str

    with pytest.raises(TypeError, match="clashes"):
        with_approval(Clash)


async def test_aliases_are_not_listed_twice(client: httpx.AsyncClient) -> None:
    listed = (await client.get("/v1/capabilities")).json()["capabilities"]
    slugs = [item["slug"] for item in listed]
    assert slugs.count("integrations.send") == 1 and slugs.count("integrations.unlink") == 1
    assert "integrations.send-to-integration" not in slugs
    assert {
        "approvals.get",
        "approvals.approve",
        "approvals.reject",
        "exports.get",
        "integrations.list",
    } <= set(slugs)
