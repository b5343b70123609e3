"""The capability registry: capabilities are declared next to their code, collected once.

``@capability`` only marks a handler; ``Registry.from_modules`` collects the marked handlers of
an explicit tuple of resource modules and ``freeze()`` forbids later additions. Every face (REST
and OpenAPI, GraphQL, MCP, the CLI's capability commands) is generated from the frozen registry.

Before a capability lands it answers the checklist in ``resolvers/THREATS.md`` (who may call
it, whose data, what it costs, what it reveals, bad input), each answer with a test. "Who may
call it" is declared here, not coded in a face or a handler: ``permissions`` (the OAuth scopes)
and ``roles`` (owner / admin / member), both checked by ``invoke()``'s path before the handler
runs, both shown in discovery. Every write or destructive capability declares ``roles``
(``tests/test_registry.py`` fails otherwise); a read without it is open to every member.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel

# Declared in domain/ (the roles, the OAuth scopes); imported from here by the resources.
from domain.roles import MANAGERS as MANAGERS
from domain.roles import MEMBERS as MEMBERS
from domain.roles import OWNERS as OWNERS
from domain.roles import ROLE_NAMES as ROLE_NAMES
from domain.roles import SIGNED_IN as SIGNED_IN
from domain.roles import Role as Role
from domain.scopes import CONSENT_TEXT as CONSENT_TEXT
from domain.scopes import SCOPE_TABLE as SCOPE_TABLE
from domain.scopes import SCOPES as SCOPES
from domain.scopes import Scope as Scope
from resolvers.framework.errors import RoleRequired
from schema.approvals import with_approval

if TYPE_CHECKING:
    from resolvers.framework.context import Context

Effect = Literal["read", "write", "destructive"]


Handler = Callable[["Context", Any], Awaitable[BaseModel]]
# Told when an approval request for the capability's call was rejected (the call never ran).
RejectHook = Callable[["Context", dict[str, Any]], Awaitable[None]]
F = TypeVar("F", bound=Callable[..., Any])
Derived = TypeVar("Derived")

CAPABILITY_ATTR = "__fincap_capability__"
SLUG_PATTERN = re.compile(r"^[a-z][a-z-]*\.[a-z][a-zA-Z-]*$")


def camel_name(slug: str) -> str:
    """The camelCase name of a slug: ``documents.bulk-edit`` → ``documentsBulkEdit``."""
    head, *rest = re.split(r"[.\-]", slug)
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def executing(args: BaseModel) -> bool:
    """True when the call would act: its ``dryRun`` is false (a preview is never gated)."""
    return getattr(args, "dryRun", True) is False


@dataclass(frozen=True)
class ApprovalGate:
    """Declares that a capability's calls wait for an owner's or admin's approval.

    ``@capability(..., approval=ApprovalGate("Send a document to accounting"))``: when
    ``applies(args)`` holds for the validated input (by default: ``dryRun`` is false) and the
    workspace has not switched the gate off (approvals.configure), ``invoke()`` stores the call
    and answers ``approval_required`` instead of running it; approvals.approve runs it later as
    the requester. ``describe(args)`` writes the request's description for reviewers (default:
    the slug and the input). With ``preflight`` (and a ``dryRun`` input) the preview runs
    first, so a call that would fail (unknown id, over a limit) is refused at once with its
    4xx instead of reaching a reviewer.
    """

    title: str
    applies: Callable[[BaseModel], bool] = executing
    # Receives the validated input model; may be a coroutine function (costly descriptions).
    describe: Callable[[Any], str | Awaitable[str]] | None = None
    preflight: bool = True


@dataclass(frozen=True)
class CapabilitySpec:
    """Everything the faces need to know about one capability."""

    slug: str
    handler: Handler
    input: type[BaseModel]
    output: type[BaseModel]
    permissions: tuple[str, ...]
    effect: Effect
    needs_workspace: bool
    aliases: tuple[str, ...] = ()
    # Units of expensive work per call (0: cheap). Expensive calls run one at a time per API
    # key, and a GraphQL request may select at most ``Limits.max_cost`` units.
    cost: int = 0
    approval: ApprovalGate | None = None
    on_reject: RejectHook | None = None
    # Run only by server code (an approval carrying out a stored call), never by a caller: no
    # face lists it (REST, GraphQL, MCP, CLI, OpenAPI) and invoke() answers it as unknown.
    internal: bool = False
    # Who may call it in the workspace (``OWNERS``, ``MANAGERS``, ``MEMBERS``, or ``SIGNED_IN``
    # for a capability without a workspace); None: not declared, which only a read may leave
    # (then every member may call it).
    roles: tuple[Role, ...] | None = None
    description: str = ""
    name: str = field(init=False)
    # What the handler must return (``output`` is the public model; for a gated capability it
    # also admits the approval answer, see ``schema.approvals.with_approval``).
    result: type[BaseModel] = field(init=False)

    def __post_init__(self) -> None:
        if not SLUG_PATTERN.match(self.slug):
            raise ValueError(f"capability slug {self.slug!r} is not resource.action")
        object.__setattr__(self, "name", camel_name(self.slug))
        object.__setattr__(self, "result", self.output)
        if self.approval is not None:
            if self.approval.applies is executing and "dryRun" not in self.input.model_fields:
                raise ValueError(
                    f"capability {self.slug}: an approval gate on execute mode needs a dryRun input"
                )
            object.__setattr__(self, "output", with_approval(self.output))
        unknown = [scope for scope in self.permissions if scope not in SCOPES]
        if unknown:
            raise ValueError(f"capability {self.slug}: unknown scope(s) {', '.join(unknown)}")
        if self.roles is not None:
            strange = [role for role in self.roles if role not in ROLE_NAMES]
            if strange:
                raise ValueError(f"capability {self.slug}: unknown role(s) {', '.join(strange)}")
            if self.roles and not self.needs_workspace:
                raise ValueError(
                    f"capability {self.slug}: roles are held in a workspace; a capability "
                    "without one declares roles=SIGNED_IN"
                )
        if not self.description:
            doc = inspect.getdoc(self.handler) or ""
            if not doc:
                raise ValueError(f"capability {self.slug} needs a docstring: it is its description")
            object.__setattr__(self, "description", doc)

    @property
    def read_only(self) -> bool:
        return self.effect == "read"

    @property
    def read_permissions(self) -> tuple[str, ...]:
        """The scopes that let a caller read what a call of this capability would do or did
        (an approval request for it): each ``write_x`` becomes ``read_x`` where the contract
        has it; other scopes stay as they are."""
        return tuple(
            dict.fromkeys(
                "read_" + scope.removeprefix("write_")
                if scope.startswith("write_") and "read_" + scope.removeprefix("write_") in SCOPES
                else scope
                for scope in self.permissions
            )
        )

    @property
    def allowed_roles(self) -> tuple[Role, ...]:
        """The roles that may call it; empty when no workspace role is involved."""
        if self.roles is not None:
            return self.roles
        return MEMBERS if self.needs_workspace else SIGNED_IN

    def require_role(self, role: str | None) -> None:
        """403 naming the role needed, when ``role`` (the caller's, in the workspace the call
        acts in) may not call this capability."""
        allowed = self.allowed_roles
        if not allowed or role in allowed:
            return
        names = [ROLE_NAMES[r] for r in allowed]
        needed = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
        raise RoleRequired(
            f"{self.slug} is for the workspace's {needed}; your role here is {role or 'none'}"
        )


def capability(
    slug: str,
    *,
    input: type[BaseModel],
    output: type[BaseModel],
    permissions: Iterable[str],
    effect: Effect,
    needs_workspace: bool = True,
    aliases: Iterable[str] = (),
    cost: int = 0,
    approval: ApprovalGate | None = None,
    on_reject: RejectHook | None = None,
    internal: bool = False,
    roles: Iterable[Role] | None = None,
) -> Callable[[F], F]:
    """Mark ``fn`` as the handler of capability ``slug``; no import-time registration.

    ``roles`` says who may call it (``MANAGERS``, …; see ``CapabilitySpec.roles``).
    ``approval`` gates the capability (see ``ApprovalGate``). ``on_reject`` is awaited after
    approvals.reject rejected a stored call of it (to record that it will not run).
    ``internal`` keeps it out of every face (see ``CapabilitySpec.internal``).
    """

    def mark(fn: F) -> F:
        spec = CapabilitySpec(
            slug=slug,
            handler=fn,
            input=input,
            output=output,
            permissions=tuple(permissions),
            effect=effect,
            needs_workspace=needs_workspace,
            aliases=tuple(aliases),
            cost=cost,
            approval=approval,
            on_reject=on_reject,
            internal=internal,
            roles=None if roles is None else tuple(roles),
        )
        setattr(fn, CAPABILITY_ATTR, spec)
        return fn

    return mark


class RegistryError(Exception):
    """The registry was assembled wrongly (duplicate slug or model name, late addition)."""


class Registry:
    """Capabilities by slug (aliases resolve to the same spec), frozen before serving."""

    def __init__(self) -> None:
        self._by_slug: dict[str, CapabilitySpec] = {}
        self._canonical: list[CapabilitySpec] = []
        self._models: dict[str, type[BaseModel]] = {}
        self._derived: dict[Hashable, Any] = {}
        self._frozen = False

    @classmethod
    def from_modules(cls, modules: Iterable[ModuleType]) -> Registry:
        registry = cls()
        for module in modules:
            for _, member in inspect.getmembers(module):
                spec = getattr(member, CAPABILITY_ATTR, None)
                if isinstance(spec, CapabilitySpec):
                    registry.add(spec)
        return registry

    def add(self, spec: CapabilitySpec) -> None:
        if self._frozen:
            raise RegistryError(f"registry is frozen; cannot add {spec.slug}")
        for slug in (spec.slug, *spec.aliases):
            if slug in self._by_slug:
                raise RegistryError(f"duplicate capability slug {slug!r}")
            self._by_slug[slug] = spec
        for model in (spec.input, spec.output):
            other = self._models.setdefault(model.__name__, model)
            if other is not model:
                raise RegistryError(
                    f"two models named {model.__name__!r} ({other.__module__} and "
                    f"{model.__module__}); prefix one with its resource"
                )
        if not spec.internal:
            self._canonical.append(spec)

    def freeze(self) -> Registry:
        self._frozen = True
        self._canonical.sort(key=lambda spec: spec.slug)
        return self

    def derived(self, key: Hashable, build: Callable[[], Derived]) -> Derived:
        """What ``build()`` makes of this registry, made once per ``key`` while it is frozen.

        A face's artefacts are functions of the frozen registry and a few settings (the GraphQL
        schema of its limits, the OpenAPI document of its address, the MCP tool list): ``key``
        names the artefact and those settings. Building them costs about a second of CPU a
        set, and a process that makes more than one app of one registry (the tests make
        hundreds) pays it once. Callers treat the value as read-only: it is shared. An
        unfrozen registry can still change, so nothing is kept.
        """
        if not self._frozen:
            return build()
        try:
            value: Derived = self._derived[key]
        except KeyError:
            value = self._derived[key] = build()
        return value

    def get(self, slug: str) -> CapabilitySpec | None:
        """The capability ``slug`` names (an alias or an internal one included)."""
        return self._by_slug.get(slug)

    def __iter__(self) -> Iterator[CapabilitySpec]:
        """The public capabilities, what the faces list (aliases are not listed twice, internal
        ones not at all), sorted by slug."""
        return iter(self._canonical)

    def __len__(self) -> int:
        return len(self._canonical)

    def scopes_of_role(self, role: str | None) -> tuple[str, ...]:
        """The scopes a person with ``role`` in a workspace can use there: those some capability
        open to that role needs (``("all",)`` when one needs ``all``, which holds every scope).
        What a credential made for that person may carry at most (``api-keys.create``, the
        dashboard's sign-in)."""
        needed: set[str] = set()
        for spec in self:
            if not spec.allowed_roles or role in spec.allowed_roles:
                needed.update(spec.permissions)
        if "all" in needed:
            return ("all",)
        return tuple(scope for scope in SCOPES if scope in needed)
