"""Base classes of the contract's models.

Field names are the wire names (camelCase) so that REST and GraphQL (and the planned MCP and
CLI faces) show the same names with no alias layer in between.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class CapabilityInput(BaseModel):
    """A capability's request body: unknown properties are rejected (additionalProperties false)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class CapabilityOutput(BaseModel):
    """A capability's typed ``data.result``; only declared fields leave the service."""

    model_config = ConfigDict(extra="ignore")
