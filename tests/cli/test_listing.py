"""The shipped discovery listing is the registry's, and every capability is a working command."""

from __future__ import annotations

import json
import os
from importlib import resources

import pytest
from click.testing import CliRunner

from app.cli import main
from app.cli.commands import COMMON_OPTIONS, LISTING_FILE, kebab, params_of, shipped_listing
from app.rest.capabilities import discovery_item
from resolvers import build_registry

UPDATE_ENV = "FINCAP_UPDATE_CLI_SNAPSHOT"


def registry_listing_text() -> str:
    items = [discovery_item(spec) for spec in build_registry()]
    return json.dumps({"capabilities": items}, indent=1, ensure_ascii=False) + "\n"


def test_shipped_listing_is_the_registry_discovery() -> None:
    """Regenerate with FINCAP_UPDATE_CLI_SNAPSHOT=1 after a capability changes."""
    text = registry_listing_text()
    target = resources.files("app.cli").joinpath(LISTING_FILE)
    if os.environ.get(UPDATE_ENV):
        with resources.as_file(target) as path:
            path.write_text(text, encoding="utf-8")
    assert text == target.read_text(encoding="utf-8"), (
        f"listing is stale: rerun with {UPDATE_ENV}=1"
    )


def test_kebab_case_names() -> None:
    assert kebab("bulkEdit") == "bulk-edit"
    assert kebab("fromCurrency") == "from-currency"
    assert kebab("base64Data") == "base64-data"
    assert kebab("search") == "search"


# Commands made by hand (they take paths, not base64), and an option only they have.
HAND_MADE = {"files.upload": "--wait", "statements.import": "--no-save-mapping"}


@pytest.mark.parametrize("slug", sorted(spec.slug for spec in build_registry()))
def test_every_capability_is_a_command_with_help(slug: str) -> None:
    resource, _, action = slug.partition(".")
    item = next(i for i in shipped_listing() if i["slug"] == slug)
    result = CliRunner().invoke(main, [resource, kebab(action), "--help"], terminal_width=200)
    assert result.exit_code == 0, result.output
    if slug in HAND_MADE:
        assert HAND_MADE[slug] in result.output  # a hand-made command that takes paths
        return
    # The description's first line and every input property appear as an option.
    first_line = item["description"].split("\n", 1)[0]
    assert " ".join(first_line.split()[:3]) in " ".join(result.output.split())
    for param in params_of(item["inputSchema"]):
        assert param.flag in result.output, (slug, param.flag)
        assert param.name not in COMMON_OPTIONS


def test_root_help_lists_commands_and_resources() -> None:
    result = CliRunner().invoke(main, ["--help"], terminal_width=200)
    assert result.exit_code == 0
    resources_listed = {spec.slug.partition(".")[0] for spec in build_registry()}
    for resource in resources_listed | {"serve", "auth", "workspace", "doctor"}:
        assert f"\n  {resource} " in result.output, resource
    assert "bulk-edit" in result.output  # actions shown next to their resource


def test_help_shows_choices_defaults_and_constraints() -> None:
    result = CliRunner().invoke(main, ["documents", "search", "--help"], terminal_width=200)
    flat = " ".join(result.output.split())
    assert "--sort-order [1|-1]" in flat
    assert "--limit INTEGER" in flat and "1 to 100" in flat
    assert "--where TEXT" in flat and "JSON, or @file.json" in flat
    converted = CliRunner().invoke(main, ["currency", "convert", "--help"], terminal_width=200)
    assert "--from-currency" in converted.output and "required" in converted.output
