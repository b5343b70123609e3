"""One MCP tool per capability, written for an assistant that pays for every byte it reads.

A tool is the capability's name (slug with ``.`` and ``-`` as ``_``), a title, its description
(the capability's docstring, with other capabilities named by their tool names), its input
schema in the compact form of ``app.mcp.schemas``, and hints from its effect.

**Output schemas only where they carry meaning.** A tool publishes an ``outputSchema`` when its
result is a computed answer whose figures need their meaning stated and its description
cannot say it in a sentence (which currency each total is in, what the converted total leaves
out): documents_count. Tools that return records (documents, rules, members, approvals,
billing accounts) or self-explaining answers (currency_convert: amount, rate, rateDate) publish
none: their descriptions name the fields that matter, every result carries
``structuredContent`` and the same JSON as text, and their schemas would be most of the
listing (a document's is 10 KB, and five tools returned one). An output schema is keys and
types only: the tool's description says what the figures mean, and the field descriptions the
other faces show (GraphQL's Docs, OpenAPI) stay out of the listing.

**Toolsets** are the resources of the registry (``documents``, ``files``, ``rules``, …): the
part of the slug before the dot. ``workspace_get_context`` belongs to every selection.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import mcp_types as types

from app.mcp.schemas import compact, types_only
from resolvers.framework.registry import CapabilitySpec, Registry

CONTEXT_TOOL = "workspace_get_context"
# A line break inside a paragraph (not a blank line between two).
PARAGRAPH = re.compile(r"(?<!\n)\n(?!\n)")
# Results that are answers to compute with, not records (see the module's rule).
OUTPUT_SCHEMA_SLUGS = frozenset({"documents.count"})
# A capability that gives null a meaning of its own ("null clears a field") says so in its
# description; for the others null is the same as leaving an argument out.
NULL_SAID = re.compile(r"\bnull\b")


def tool_name(slug: str) -> str:
    """``documents.bulk-edit`` → ``documents_bulk_edit``."""
    return slug.replace(".", "_").replace("-", "_")


# A resource is its own toolset, except those grouped here by the work they serve together.
GROUPED_TOOLSETS: dict[str, str] = {
    "statements": "reconcile",
    "transactions": "reconcile",
    "matches": "reconcile",
}


def toolset_of(slug: str) -> str:
    """The toolset a capability's tool belongs to: its resource, or the group it is in."""
    resource = slug.partition(".")[0]
    return GROUPED_TOOLSETS.get(resource, resource)


def hints(effect: str) -> types.ToolAnnotations:
    """What a client may assume about a call, stated only where it differs from the
    protocol's defaults (not read-only, destructive, not idempotent, open world). The open
    world stays the default: some tools reach mail servers and accounting products."""
    if effect == "read":
        return types.ToolAnnotations(read_only_hint=True)
    # A write repeated may queue or change twice: not idempotent (the default).
    return types.ToolAnnotations(destructive_hint=effect == "destructive")


class Naming:
    """Rewrites text for the MCP face: capability slugs become the tool names an assistant
    calls (``documents.unarchive restores it`` → ``documents_unarchive restores it``), and
    reStructuredText's double backquotes single ones."""

    def __init__(self, registry: Registry) -> None:
        slugs = sorted((spec.slug for spec in registry), key=len, reverse=True)
        self._slug = re.compile(
            # Not a slug in backquotes: a value to send as it is (approvals_configure's).
            r"(?<![\w.`-])(" + "|".join(re.escape(slug) for slug in slugs) + r")(?![\w`-])"
        )

    def __call__(self, text: str) -> str:
        named = self._slug.sub(lambda found: tool_name(found.group(1)), text).replace("``", "`")
        # Docstrings wrap at 100 columns; a model reads paragraphs, so lines join (each
        # newline escaped in JSON costs two bytes).
        return PARAGRAPH.sub(" ", named)


@dataclass(frozen=True)
class Entry:
    """A tool with what the face needs to list and call it."""

    tool: types.Tool
    toolset: str
    read_only: bool
    permissions: tuple[str, ...]
    spec: CapabilitySpec | None = None  # None: a native tool of the face

    @property
    def name(self) -> str:
        return self.tool.name


def tool_of(spec: CapabilitySpec, naming: Naming) -> types.Tool:
    output: dict[str, Any] | None = None
    if spec.slug in OUTPUT_SCHEMA_SLUGS:
        # What the result holds as sent (Money is a JSON number), not what an input accepts.
        output = types_only(compact(spec.output.model_json_schema(mode="serialization"), naming))
    # No title: it would only repeat the name ("Documents: search"); clients show the name.
    return types.Tool(
        name=tool_name(spec.slug),
        description=naming(spec.description),
        input_schema=compact(
            spec.input.model_json_schema(),
            naming,
            null_is_absent=NULL_SAID.search(spec.description) is None,
        ),
        output_schema=output,
        annotations=hints(spec.effect),
    )


class Catalog:
    """The tools of one frozen registry, built once per app, in listing order."""

    def __init__(self, registry: Registry, native: list[Entry]) -> None:
        self.naming = Naming(registry)
        entries = [
            *native,
            *(
                Entry(
                    tool_of(spec, self.naming),
                    toolset_of(spec.slug),
                    spec.read_only,
                    spec.permissions,
                    spec,
                )
                for spec in registry
            ),
        ]
        self.by_name = {entry.name: entry for entry in entries}
        self.toolsets = sorted({entry.toolset for entry in entries if entry.spec is not None})

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.by_name.values())

    def get(self, name: str) -> Entry | None:
        return self.by_name.get(name)


__all__ = [
    "CONTEXT_TOOL",
    "GROUPED_TOOLSETS",
    "Catalog",
    "Entry",
    "Naming",
    "tool_name",
    "toolset_of",
]
