"""Contract models of the api-keys resource: a user's own API keys, seen from one workspace."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schema.base import Boolean, CapabilityInput, CapabilityOutput
from schema.secrets import SecretText

# Where a key was made (``schema.value_meanings`` says what each means).
KeyOrigin = Literal["dashboard", "bootstrap", "operator", "oauth", "api_key"]


class CreateApiKey(CapabilityInput):
    """Input of api-keys.create."""

    name: str = Field(
        min_length=1, max_length=100, description="A label to recognise the key by, e.g. 'laptop'"
    )
    restricted: Boolean = Field(
        default=True,
        description="false: acts in all the user's workspaces (unrestricted callers only)",
    )
    scopes: list[str] = Field(
        default_factory=list, max_length=20, description="Scopes; none: your role's"
    )


class ListApiKeys(CapabilityInput):
    """Input of api-keys.list."""

    includeRevoked: Boolean = Field(default=False, description="List revoked keys too")


class RevokeApiKey(CapabilityInput):
    """Input of api-keys.revoke."""

    id: str = Field(min_length=1, max_length=100, description="Key id, key_…")


class ApiKey(CapabilityOutput):
    """An API key as its owner sees it later: never the secret, only its first characters."""

    id: str = Field(description="Key id, key_…")
    name: str = Field(description="The name given to the key when it was created")
    prefix: str = Field(description="The first characters of the secret, to recognise it")
    restrictedTo: str | None = Field(
        description="The only workspace the key acts in; null: every workspace of its user"
    )
    scopes: list[str] = Field(description="OAuth scope names the key grants; 'all' is every one")
    createdAt: datetime = Field(description="When the key was created")
    revokedAt: datetime | None = Field(
        default=None, description="When the key was revoked; null while it works"
    )
    isCurrent: bool = Field(description="True for the key that made this request")
    origin: KeyOrigin = Field(description="Where it was made")
    originName: str | None = Field(default=None, description="The client's or parent key's name")
    endsWithGrant: bool = Field(default=False, description="Ends with an OAuth client's grant")
    lastUsedAt: datetime | None = Field(default=None, description="Last use (to the minute)")


class CreatedApiKey(CapabilityOutput):
    """A new key with its secret, which is shown this once and never again."""

    apiKey: SecretText = Field(description="The secret (sk_…): send it as Authorization: Bearer")
    key: ApiKey = Field(description="The new key")


class ApiKeyList(CapabilityOutput):
    """The caller's keys usable in this workspace, newest first."""

    keys: list[ApiKey] = Field(description="The keys, newest first")


class RevokedApiKey(CapabilityOutput):
    """The key after revocation."""

    key: ApiKey = Field(description="The revoked key")
