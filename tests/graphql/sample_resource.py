"""A test-only resource exercising what the GraphQL converter must handle beyond workspaces.

Decimal, datetime and date scalars, a JSON field, Literal values that are not GraphQL names,
one model used both as input and output, optional fields (absent vs null), defaults, and
write/destructive effects (Mutation fields). Handlers echo what the model received.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel, Field

from resolvers.framework.context import Context
from resolvers.framework.registry import capability
from schema.base import CapabilityInput, CapabilityOutput

SampleStatus = Literal["paid", "not-paid", "1st-reminder"]


class SampleLine(BaseModel, extra="forbid"):
    """One line of a sample record."""

    description: str = Field(min_length=1, description="What was bought")
    amount: Decimal = Field(ge=0)


class CreateSample(CapabilityInput):
    """A sample record to create."""

    merchant: str = Field(max_length=40, description="Who was paid")
    total: Decimal
    paidAt: datetime | None = None
    dueOn: date | None = None
    status: SampleStatus = "paid"
    tags: list[str] = Field(default_factory=list)
    lines: list[SampleLine] = Field(default_factory=list)
    note: str | None = Field(default=None, description="Free text; null clears it")
    metadata: dict[str, Any] | None = None


class SampleRecord(CapabilityOutput):
    """A sample record as the service returns it."""

    merchant: str
    total: Decimal
    paidAt: datetime | None
    dueOn: date | None
    status: SampleStatus
    tags: list[str]
    lines: list[SampleLine]
    note: str | None
    metadata: dict[str, Any] | None
    received: list[str] = Field(description="The input fields the caller set, sorted")


@capability(
    "sample.create",
    input=CreateSample,
    output=SampleRecord,
    permissions=["write_documents"],
    effect="write",
)
async def create(ctx: Context, args: CreateSample) -> SampleRecord:
    """Creates a sample record and echoes it."""
    ctx.require_workspace()
    return SampleRecord(**args.model_dump(), received=sorted(args.model_fields_set))


class PurgeSamples(CapabilityInput):
    """sample.purge takes no parameters."""


class PurgeResult(CapabilityOutput):
    """How many records were purged."""

    purged: int


@capability(
    "sample.purge",
    input=PurgeSamples,
    output=PurgeResult,
    permissions=["write_documents"],
    effect="destructive",
)
async def purge(ctx: Context, args: PurgeSamples) -> PurgeResult:
    """Deletes every sample record of the workspace."""
    ctx.require_workspace()
    return PurgeResult(purged=0)
