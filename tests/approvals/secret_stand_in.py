"""A gated capability that exists only in tests: its input carries a secret (as a connector's
password would) and only owners and admins may call it, to exercise what no real gated
capability has yet."""

from __future__ import annotations

from pydantic import Field

from resolvers.framework.context import Context
from resolvers.framework.registry import MANAGERS, ApprovalGate, capability
from schema.base import Boolean, CapabilityInput, CapabilityOutput
from schema.secrets import SecretText


class ConnectVault(CapabilityInput):
    name: str = Field(min_length=1, max_length=50)
    password: SecretText = Field(min_length=1, max_length=200)
    dryRun: Boolean = True


class VaultConnected(CapabilityOutput):
    name: str
    receivedPassword: str
    token: SecretText | None = None


RECEIVED: list[str] = []


@capability(
    "vault.connect",
    input=ConnectVault,
    output=VaultConnected,
    permissions=["write_integrations"],
    effect="write",
    roles=MANAGERS,
    approval=ApprovalGate("Connect a vault"),
)
async def connect(ctx: Context, args: ConnectVault) -> VaultConnected:
    """Stand-in: connects (records the password it received) and answers a new token."""
    if not args.dryRun:
        RECEIVED.append(args.password)
    return VaultConnected(
        name=args.name,
        receivedPassword="ok" if args.password else "",
        token=None if args.dryRun else "vault-token-secret",
    )
