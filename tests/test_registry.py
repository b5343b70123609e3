from __future__ import annotations

import html
import re

import pytest

from resolvers import build_registry
from resolvers.framework.registry import (
    MANAGERS,
    MEMBERS,
    OWNERS,
    SIGNED_IN,
    CapabilitySpec,
    Registry,
    RegistryError,
    camel_name,
    capability,
)
from resolvers.resources import workspaces
from schema.base import CapabilityInput, CapabilityOutput
from tests import probe_resource


@pytest.mark.parametrize(
    ("slug", "name"),
    [
        ("documents.bulk-edit", "documentsBulkEdit"),
        ("help-center.search", "helpCenterSearch"),
        ("billing.listHistory", "billingListHistory"),
        ("workspaces.list", "workspacesList"),
    ],
)
def test_camel_name(slug: str, name: str) -> None:
    assert camel_name(slug) == name


def test_build_registry_collects_declared_capabilities() -> None:
    registry = build_registry()
    spec = registry.get("workspaces.list")
    assert spec is not None and spec.name == "workspacesList"
    assert spec.permissions == ("read_workspaces",)
    assert spec.needs_workspace is False
    assert spec.description.startswith("Lists the workspaces")


def test_duplicate_slug_fails_the_build() -> None:
    with pytest.raises(
        # The first slug of the module met twice (members are read in name order).
        RegistryError,
        match=re.escape("duplicate capability slug 'workspaces."),
    ):
        Registry.from_modules([workspaces, workspaces])


def test_frozen_registry_rejects_additions() -> None:
    registry = Registry.from_modules([probe_resource]).freeze()
    spec = build_registry().get("workspaces.list")
    assert spec is not None
    with pytest.raises(RegistryError, match="frozen"):
        registry.add(spec)


def test_two_models_with_one_name_fail_the_build() -> None:
    class ListWorkspaces(CapabilityInput):  # same name as schema.workspaces.ListWorkspaces
        pass

    class Out(CapabilityOutput):
        pass

    @capability("other.list", input=ListWorkspaces, output=Out, permissions=[], effect="read")
    async def other(ctx, args):  # type: ignore[no-untyped-def]
        """Other."""

    registry = Registry.from_modules([workspaces])
    with pytest.raises(RegistryError, match="two models named 'ListWorkspaces'"):
        registry.add(other.__fincap_capability__)


def test_capability_without_docstring_is_refused() -> None:
    class In(CapabilityInput):
        pass

    with pytest.raises(ValueError, match="needs a docstring"):

        @capability("x.y", input=In, output=CapabilityOutput, permissions=[], effect="read")
        async def undocumented(ctx, args):  # type: ignore[no-untyped-def]
            return None


def test_bad_slug_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("resource.action")):
        capability(
            "nodot", input=CapabilityInput, output=CapabilityOutput, permissions=[], effect="read"
        )(lambda ctx, args: None)


def test_an_internal_capability_is_registered_but_listed_by_no_face() -> None:
    """rules.resume runs only from an approval: get() finds it for the approvals resource,
    iteration (what REST discovery, GraphQL, MCP, the CLI and OpenAPI are built from) does not,
    and the faces' lookup answers it like an unknown slug."""
    from resolvers.framework.errors import NotFound
    from resolvers.framework.invoke import lookup

    registry = build_registry()
    spec = registry.get("rules.resume")
    assert spec is not None and spec.internal
    assert "rules.resume" not in {listed.slug for listed in registry}
    assert all(not listed.internal for listed in registry)
    with pytest.raises(NotFound, match=re.escape("Unknown capability 'rules.resume'")):
        lookup(registry, "rules.resume")


def _all_specs() -> list[CapabilitySpec]:
    """Every capability, the internal ones included (they run too)."""
    registry = build_registry()
    internal = [registry.get("rules.resume")]
    return [*registry, *(spec for spec in internal if spec is not None)]


@pytest.mark.parametrize("spec", _all_specs(), ids=lambda spec: spec.slug)
def test_every_change_declares_who_may_call_it(spec: CapabilitySpec) -> None:
    """The threats checklist (resolvers/THREATS.md), "who may call it": a capability that
    writes or deletes names its roles in its @capability (roles=MEMBERS, MANAGERS, OWNERS, or
    SIGNED_IN without a workspace), so invoke() checks them and discovery shows them."""
    if spec.effect == "read":
        return
    assert spec.roles is not None, f"{spec.slug}: declare roles= in its @capability"
    if spec.needs_workspace:
        assert spec.roles, f"{spec.slug}: a workspace capability names the roles that may call it"


def test_roles_are_checked_before_the_handler_with_a_403_naming_them() -> None:
    from resolvers.framework.errors import Forbidden

    spec = build_registry().get("members.remove")
    assert spec is not None and spec.allowed_roles == MANAGERS
    spec.require_role("admin")
    with pytest.raises(Forbidden) as refused:
        spec.require_role("member")
    assert refused.value.message == (
        "members.remove is for the workspace's owners and admins; your role here is member"
    )
    owners_only = build_registry().get("billing.change-plan")
    assert owners_only is not None and owners_only.allowed_roles == OWNERS
    # A read that declares nothing is open to every member; without a workspace, to anyone.
    search = build_registry().get("documents.search")
    assert search is not None and search.allowed_roles == MEMBERS
    listing = build_registry().get("workspaces.list")
    assert listing is not None and listing.allowed_roles == SIGNED_IN
    listing.require_role(None)


def test_a_role_declaration_is_checked_when_declared() -> None:
    class In(CapabilityInput):
        pass

    with pytest.raises(ValueError, match="unknown role"):

        @capability("x.y", input=In, output=CapabilityOutput, permissions=[], effect="write",
                    roles=["superuser"])  # type: ignore[list-item]  # fmt: skip
        async def odd(ctx, args):  # type: ignore[no-untyped-def]
            """Odd."""

    with pytest.raises(ValueError, match="SIGNED_IN"):

        @capability("x.z", input=In, output=CapabilityOutput, permissions=[], effect="write",
                    needs_workspace=False, roles=MANAGERS)  # fmt: skip
        async def placeless(ctx, args):  # type: ignore[no-untyped-def]
            """Placeless."""


def test_discovery_and_openapi_show_the_roles() -> None:
    from app.rest.capabilities import discovery_item
    from app.rest.openapi import build_openapi

    registry = build_registry()
    spec = registry.get("whatsapp.remove-sender")
    assert spec is not None
    assert discovery_item(spec)["roles"] == ["owner", "admin"]
    operation = build_openapi(registry, "http://x")["paths"]["/capabilities/whatsapp.remove-sender"]
    assert operation["post"]["x-roles"] == ["owner", "admin"]


def test_each_scope_is_declared_once_with_the_text_the_consent_page_shows() -> None:
    from app.oauth.pages import consent_page
    from resolvers.framework.registry import CONSENT_TEXT, SCOPE_TABLE, SCOPES

    assert len(set(SCOPES)) == len(SCOPE_TABLE) and all(s.consent for s in SCOPE_TABLE)
    used = {scope for spec in build_registry() for scope in spec.permissions}
    assert used <= set(SCOPES)
    page = consent_page(
        action="/v1/oauth/consent",
        request="sealed",
        csrf="token",
        client="Claude",
        destination="https://claude.example",
        email="alice@example.com",
        workspaces=[{"id": "org_1", "name": "Alice Co", "role": "owner"}],
        scopes=list(SCOPES),
    )
    for scope in SCOPE_TABLE:
        assert f"{html.escape(scope.consent)} <code>{scope.name}</code>" in page
    assert CONSENT_TEXT["write_documents"] == "Upload, correct, archive and restore documents"


def test_what_is_derived_from_a_frozen_registry_is_made_once_per_key() -> None:
    registry = Registry.from_modules([workspaces]).freeze()
    made: list[str] = []

    def build(name: str) -> object:
        made.append(name)
        return object()

    first = registry.derived(("schema", 10), lambda: build("schema 10"))
    assert registry.derived(("schema", 10), lambda: build("again")) is first
    other = registry.derived(("schema", 20), lambda: build("schema 20"))
    assert other is not first
    assert made == ["schema 10", "schema 20"]
    # Another registry of the same modules keeps its own.
    again = Registry.from_modules([workspaces]).freeze()
    assert again.derived(("schema", 10), lambda: build("other registry")) is not first


def test_an_unfrozen_registry_keeps_nothing_it_may_still_change() -> None:
    registry = Registry.from_modules([workspaces])
    made = [registry.derived("tools", lambda: object()) for _ in range(2)]
    assert made[0] is not made[1]


def test_apps_of_one_registry_share_its_faces_artefacts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two apps of one registry and settings build the OpenAPI document, the GraphQL schema,
    the MCP tool list and the API reference page once (they cost about a second of CPU a set)."""
    from app.graphql import face
    from app.host import main
    from app.host.config import Settings
    from app.mcp import server
    from app.web import routes

    built: list[str] = []
    builders = (
        (main, "build_openapi"),
        (face, "service_schema"),
        (server, "build_server"),
        (routes, "api_reference_page"),
    )
    for module, name in builders:
        original = getattr(module, name)

        def counted(*args: object, _original: object = original, _name: str = name) -> object:
            built.append(_name)
            return _original(*args)  # type: ignore[operator]

        monkeypatch.setattr(module, name, counted)
    registry = build_registry()
    apps = [main.create_app(Settings(), registry=registry) for _ in range(3)]
    assert sorted(built) == [
        "api_reference_page",
        "build_openapi",
        "build_server",
        "service_schema",
    ]
    assert apps[0] is not apps[1]
    # Another address is another OpenAPI document (its server URL), and another reference.
    main.create_app(Settings(public_url="https://books.example.com"), registry=registry)
    assert built.count("build_openapi") == 2 and built.count("api_reference_page") == 2
