"""The integration stand-ins with a real approval gate on integrations.send (the gate the real
capability declares), for rules whose send must not be gated twice once a reviewer approved
the rule's require-approval."""

from __future__ import annotations

from typing import Literal

from resolvers.framework.context import Context
from resolvers.framework.registry import ApprovalGate, capability
from schema.base import CapabilityOutput
from tests.rules.stand_ins import Calls, StandInSend, list_integrations

__all__ = ["gated_send", "list_integrations"]


class GatedSendResult(CapabilityOutput):
    status: Literal["queued"]
    exportRecordId: str


@capability(
    "integrations.send",
    input=StandInSend,
    output=GatedSendResult,
    permissions=["write_integrations"],
    effect="write",
    approval=ApprovalGate("Send a document to accounting"),
)
async def gated_send(ctx: Context, args: StandInSend) -> GatedSendResult:
    """Stand-in: queues the export (the gate in front of it is the registry's own)."""
    Calls.made.append(("integrations.send", ctx.workspace_id, ctx.user_id, args.model_dump()))
    return GatedSendResult(status="queued", exportRecordId="exp_1")
