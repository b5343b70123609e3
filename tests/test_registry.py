from __future__ import annotations

import re

import pytest

from resolvers import build_registry, workspaces
from resolvers.registry import Registry, RegistryError, camel_name, capability
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
    from resolvers.errors import NotFound
    from resolvers.invoke import lookup

    registry = build_registry()
    spec = registry.get("rules.resume")
    assert spec is not None and spec.internal
    assert "rules.resume" not in {listed.slug for listed in registry}
    assert all(not listed.internal for listed in registry)
    with pytest.raises(NotFound, match=re.escape("Unknown capability 'rules.resume'")):
        lookup(registry, "rules.resume")
