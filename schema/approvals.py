"""Contract models of the approvals resource, and the output shape of a gated capability.

A gated capability (``ApprovalGate`` in the registry) answers either its own result or an
approval request. ``with_approval(Result)`` is the public output model of such a capability:
the fields of ``Result`` (made optional, since an approval answer has none of them) plus the
approval fields. It keeps the name of ``Result``, so GraphQL clients select the same type and
add ``status approvalRequestId`` to their selection.
"""

from __future__ import annotations

import types
import typing
from datetime import datetime
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, Field, create_model

from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer

APPROVAL_REQUIRED: Literal["approval_required"] = "approval_required"
ApprovalStatus = Literal["pending", "executed", "rejected"]
# approvals.list's filter: a stored status, or every request.
ApprovalStatusFilter = Literal["pending", "executed", "rejected", "all"]


class ApprovalCapability(CapabilityOutput):
    """The capability an approval request would run."""

    name: str = Field(description="camelCase name, e.g. documentsBulkEdit")
    slug: str = Field(description="resource.action, e.g. documents.bulk-edit")


class ApprovalRequired(CapabilityOutput):
    """The answer of a gated call in execute mode: nothing ran; an owner or admin reviews it."""

    status: Literal["approval_required"] = Field(
        default=APPROVAL_REQUIRED,
        description="approval_required: nothing ran; an owner or admin reviews the call",
    )
    approvalRequestId: str = Field(
        description="The approval request to follow (approvals.get) or resolve"
    )
    capability: ApprovalCapability = Field(description="The capability the call waits to run")
    title: str = Field(description="What the call would do, in a line")
    description: str = Field(description="What the call would do, in more words, for the reviewer")


APPROVAL_FIELDS = tuple(ApprovalRequired.model_fields)


@cache
def with_approval(result: type[BaseModel]) -> type[BaseModel]:
    """The public output of a gated capability whose own result is ``result``.

    Every field becomes optional (an approval answer sets none of them; the handler's result is
    still validated against ``result`` itself). A ``status`` field of ``result`` that is a
    Literal gains the value ``approval_required``; any other clash with an approval field is a
    build error.
    """
    fields: dict[str, Any] = {}
    for name, info in result.model_fields.items():
        annotation: Any = info.annotation
        if name == "status":
            values = _literal_values(annotation)
            if values is None:
                raise TypeError(
                    f"{result.__name__}.status must be a Literal to carry approval_required"
                )
            annotation = Literal[(*values, APPROVAL_REQUIRED)]  # type: ignore[valid-type]
        elif name in APPROVAL_FIELDS:
            raise TypeError(
                f"{result.__name__}.{name} clashes with the approval field of the same name; "
                "rename it"
            )
        fields[name] = (annotation | None, Field(default=None, description=info.description))
    for name, info in ApprovalRequired.model_fields.items():
        if name in fields:
            continue
        annotation = info.annotation
        description = info.description
        if name == "status":
            annotation = Literal["approval_required"]
            description = "approval_required when the call waits for an owner or admin"
        fields[name] = (annotation | None, Field(default=None, description=description))
    fields["status"] = (
        fields["status"][0],
        Field(default=None, description="approval_required: nothing ran yet; see approvals.get"),
    )
    widened: type[BaseModel] = create_model(  # type: ignore[call-overload]
        result.__name__,
        __base__=CapabilityOutput,
        __doc__=(result.__doc__ or "").strip()
        + " Or, in execute mode while the capability is gated: status approval_required with "
        "approvalRequestId, capability, title and description (nothing ran).",
        __module__=result.__module__,
        **fields,
    )
    return widened


def _literal_values(annotation: Any) -> tuple[Any, ...] | None:
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1:
            return _literal_values(members[0])
    return None


class GetApproval(CapabilityInput):
    """Input of approvals.get."""

    approvalRequestId: str = Field(
        min_length=1, max_length=100, description="Approval request id (apr_…)"
    )


class ApproveRequest(CapabilityInput):
    """Input of approvals.approve."""

    approvalRequestId: str = Field(
        min_length=1, max_length=100, description="Approval request id (apr_…)"
    )


class RejectRequest(CapabilityInput):
    """Input of approvals.reject."""

    approvalRequestId: str = Field(
        min_length=1, max_length=100, description="Approval request id (apr_…)"
    )
    message: str | None = Field(
        default=None, min_length=1, max_length=500, description="Why it was rejected"
    )


class ApprovalRequest(CapabilityOutput):
    """A reviewed call: what it would run, who asked, and how it was resolved."""

    id: str = Field(description="Approval request id")
    status: ApprovalStatus = Field(
        description="pending (waiting, or being executed), executed or rejected"
    )
    capabilitySlug: str = Field(description="Slug of the capability the stored call runs")
    capability: ApprovalCapability = Field(description="The capability the stored call runs")
    title: str = Field(description="What the call does, in a line")
    description: str = Field(description="What the call does, in more words, for the reviewer")
    requestedBy: str = Field(description="User id of the requester; the call runs as them")
    createdAt: datetime = Field(description="When the call was requested")
    input: dict[str, Any] = Field(description="The validated request body that will run")
    resolvedBy: str | None = Field(default=None, description="Who approved or rejected it")
    resolvedAt: datetime | None = Field(
        default=None, description="When it was approved or rejected; null while pending"
    )
    rejectionMessage: str | None = Field(
        default=None, description="The reviewer's reason for a rejection"
    )
    result: dict[str, Any] | None = Field(default=None, description="The executed call's result")
    lastError: str | None = Field(
        default=None, description="Why the last approval attempt failed (the request stays pending)"
    )


class ApprovalExecuted(CapabilityOutput):
    """The approved call ran, once, as its requester."""

    approvalRequestId: str = Field(description="The approval request that ran")
    status: Literal["executed"] = Field(default="executed", description="executed: the call ran")
    capabilitySlug: str = Field(description="Slug of the capability that ran")
    result: dict[str, Any] = Field(description="The reviewed capability's result")


class ApprovalRejected(CapabilityOutput):
    """The request was rejected; its call will never run."""

    approvalRequestId: str = Field(description="The rejected approval request")
    status: Literal["rejected"] = Field(
        default="rejected", description="rejected: the call will never run"
    )
    capabilitySlug: str = Field(description="Slug of the capability that will not run")
    rejectionMessage: str | None = Field(
        default=None, description="The reviewer's reason, when one was given"
    )


class ListApprovals(CapabilityInput):
    """Input of approvals.list."""

    status: ApprovalStatusFilter = Field(
        default="pending",
        description="pending (waiting), executed (approved and run), rejected, or all",
    )
    limit: Integer = Field(default=20, ge=1, le=100, description="Page size")
    cursor: str | None = Field(
        default=None, min_length=1, max_length=2000, description="nextCursor of the previous page"
    )


class ApprovalPage(CapabilityOutput):
    """One page of approval requests, newest first; ``nextCursor`` is null on the last page."""

    requests: list[ApprovalRequest] = Field(description="The page, newest first")
    nextCursor: str | None = Field(default=None, description="For the next page; null on the last")


class GetApprovalSettings(CapabilityInput):
    """approvals.settings takes no parameters; send ``{}``."""


class ConfigureApproval(CapabilityInput):
    """Input of approvals.configure: switch approval on or off for one gated capability
    (capabilitySlug with gated), and/or set the workspace's requireOtherApprover."""

    capabilitySlug: str | None = Field(
        default=None,
        min_length=3,
        max_length=100,
        pattern=r"^[a-z][a-z-]*\.[a-z][a-zA-Z-]*$",
        description="The slug of a gateable capability, e.g. `integrations.send` (with gated)",
    )
    gated: Boolean | None = Field(
        default=None,
        description="With capabilitySlug: true gates its execute-mode calls; false runs them at "
        "once",
    )
    requireOtherApprover: Boolean | None = Field(
        default=None,
        description="true: an owner or admin other than the requester must approve",
    )


class GatedCapability(CapabilityOutput):
    """A capability that can require approval, and whether it does in this workspace."""

    slug: str = Field(description="The capability's slug (resource.action)")
    name: str = Field(description="The capability's name (its GraphQL field name)")
    gated: bool = Field(
        description="True when calls in execute mode wait for approval in this workspace"
    )


class ApprovalSettings(CapabilityOutput):
    """Which capabilities wait for approval in this workspace, and who may approve."""

    capabilities: list[GatedCapability] = Field(
        description="Every capability that can require approval, and whether it does here"
    )
    requireOtherApprover: bool = Field(
        description="true: nobody approves their own request (another owner or admin must)"
    )
