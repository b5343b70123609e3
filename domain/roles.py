"""The roles a person holds in a workspace, declared once: what each may do and who may call
a capability (``roles=`` of ``@capability``; ``invoke()`` checks it before the handler runs).

The contract (``schema.workspaces``, ``schema.members``), storage (``persistence.workspaces``)
and the registry (``resolvers.framework.registry``) all read these.
"""

from __future__ import annotations

from typing import Literal

from domain.vocabulary import vocabulary

Role = Literal["owner", "admin", "member"]
ROLES = vocabulary(
    Role,
    {
        "owner": "Everything, billing included",
        "admin": "Members, sources, integrations, approvals; "
        "cannot make, change or remove an owner",
        "member": "Uses the workspace",
    },
)
# How discovery and errors name the holders of a role ("owners or admins").
ROLE_NAMES: dict[str, str] = {role: role + "s" for role in ROLES}

# Who may call a capability (``roles=``), in the caller's workspace. Row-level rules (the
# requester of an approval, the author of a rule) stay in the handler, on top of these.
OWNERS: tuple[Role, ...] = ROLES.subset(Literal["owner"])
MANAGERS: tuple[Role, ...] = ROLES.subset(Literal["owner", "admin"])
MEMBERS: tuple[Role, ...] = ROLES.subset(Role)
# Any signed-in caller, for capabilities that act on the caller's own account and need no
# workspace (workspaces.list, members.accept-invite): there is no role to check.
SIGNED_IN: tuple[Role, ...] = ()
