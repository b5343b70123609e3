"""A resource that exists only in tests, to exercise invoke() paths no real capability has yet."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from resolvers.framework.context import Context
from resolvers.framework.registry import capability
from schema.base import CapabilityInput, CapabilityOutput


class ProbeFilter(BaseModel, extra="forbid"):
    field: Literal["merchant", "amount"]
    value: int = Field(ge=0)


class ProbeEcho(CapabilityInput):
    limit: int = Field(default=5, ge=1, le=100)
    filters: list[ProbeFilter] = Field(default_factory=list)


class ProbeEchoResult(CapabilityOutput):
    workspaceId: str
    role: str
    limit: int


@capability(
    "probe.echo",
    input=ProbeEcho,
    output=ProbeEchoResult,
    permissions=["read_documents"],
    effect="read",
)
async def echo(ctx: Context, args: ProbeEcho) -> ProbeEchoResult:
    """Echoes the workspace and the validated limit."""
    return ProbeEchoResult(
        workspaceId=ctx.require_workspace(), role=ctx.role or "", limit=args.limit
    )


class ProbeEmpty(CapabilityInput):
    pass


@capability(
    "probe.crash",
    input=ProbeEmpty,
    output=ProbeEchoResult,
    permissions=["read_documents"],
    effect="read",
    needs_workspace=False,
)
async def crash(ctx: Context, args: ProbeEmpty) -> ProbeEchoResult:
    """Fails with an unexpected error whose text must never reach the client."""
    raise RuntimeError("mongodb://secret-host:27017 exploded")
