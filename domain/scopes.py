"""The OAuth scopes of the contract (spec §5), declared once, each with its consent text.

The consent page shows the text; discovery, the OAuth metadata and ``invoke()`` use the names.
``all`` grants every other one; a capability's ``permissions`` name the scopes it needs, and
must be among these (``resolvers.framework.registry`` checks it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scope:
    """An OAuth scope and what the consent page tells a person it allows."""

    name: str
    consent: str


SCOPE_TABLE: tuple[Scope, ...] = (
    Scope("all", "Everything below, now and in future"),
    Scope("read_documents", "Read your receipts, invoices and their files"),
    Scope("write_documents", "Upload, correct, archive and restore documents"),
    Scope("read_time_capsules", "Read time capsules"),
    Scope("write_time_capsules", "Change time capsules"),
    Scope("read_currency", "Convert currencies"),
    Scope("read_integrations", "See your accounting connections"),
    Scope("write_integrations", "Send documents to accounting systems"),
    Scope("read_rules", "Read your rules"),
    Scope("write_rules", "Create and run rules"),
    Scope("read_workspaces", "List your workspaces and their members"),
    Scope("read_api_keys", "See your API keys for this workspace"),
    Scope("write_api_keys", "Create and revoke your API keys for this workspace"),
    # Members and workspace-wide settings (members.invite, set-role, remove, leave, accept-invite;
    # the approval policy). Reading members needs read_workspaces, like listing workspaces.
    Scope("write_workspaces", "Invite, change and remove members, and change workspace settings"),
)
SCOPES: tuple[str, ...] = tuple(scope.name for scope in SCOPE_TABLE)
CONSENT_TEXT: dict[str, str] = {scope.name: scope.consent for scope in SCOPE_TABLE}
