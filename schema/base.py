"""Base classes of the contract's models.

Field names are the wire names (camelCase) so that REST and GraphQL (and the planned MCP and
CLI faces) show the same names with no alias layer in between.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, StrictBool
from pydantic_core import PydanticCustomError


class CapabilityInput(BaseModel):
    """A capability's request body: unknown properties are rejected (additionalProperties false)."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=False)


class CapabilityOutput(BaseModel):
    """A capability's typed ``data.result``; only declared fields leave the service."""

    model_config = ConfigDict(extra="ignore")


def _not_a_boolean(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    return value


def _a_json_integer(value: Any) -> Any:
    if isinstance(value, str):
        raise ValueError("expected an integer, got a string")
    return _not_a_boolean(value)


# Input fields are not coerced between JSON types: ``limit: true`` or ``"5"`` and
# ``useSearch: 1`` are 400s, as the JSON Schema (integer, boolean) says. ``4.0`` is an integer
# in JSON Schema, and here too.
Integer = Annotated[int, BeforeValidator(_a_json_integer)]
Boolean = StrictBool
NotBoolean = BeforeValidator(_not_a_boolean)
"""For ``Literal`` numbers (``Literal[1, -1]``), where ``Strict()`` does not apply."""


def _one_line(value: str) -> str:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise PydanticCustomError(
            "control_characters", "must not contain control characters (such as CR or LF)"
        )
    return value


# Text that ends up inside a line of a protocol (an IMAP command, a header): a CR or LF in it
# would end the line and start a command of the sender's choosing.
OneLine = Annotated[str, AfterValidator(_one_line)]

# The description of a field that keeps a failure's kind next to its words (``error``,
# ``lastError``): the ``reason`` of the connector error behind it.
CONNECTOR_ERROR_REASON = (
    "What kind of failure it was, for scripts: the reason of the connector error behind it "
    "(unreachable, refused, rate_limited, provider_error, grant_revoked...; the list is in "
    "the integrations guide); null when none was behind it"
)

__all__ = [
    "CONNECTOR_ERROR_REASON",
    "Boolean",
    "CapabilityInput",
    "CapabilityOutput",
    "Integer",
    "NotBoolean",
    "OneLine",
]
