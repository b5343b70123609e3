"""Tool schemas as an assistant reads them: a capability's JSON Schema without what repeats.

The registry's models give pydantic's JSON Schema (draft 2020-12), which every face shares.
An assistant pays for every byte of it in every conversation, so the MCP face writes the same
schema more tightly, without changing what it accepts:

- ``title`` goes where it only repeats a name: pydantic titles each property after its key
  (``limit`` gets ``"Limit"``) and each model after its class; the schema's own description
  goes too (``"Input of documents.search."``: the tool's description describes the call);
- ``default: null`` goes (a field not sent is left as it is: absent is not null);
- a named value type (a subschema titled by its type, such as ``Money``) used more than once
  moves to ``$defs`` and each use becomes a ``$ref``, as pydantic already does for models;
  used once, it stays inline, untitled;
- ``anyOf: [{type: T, …}, {type: null}]`` becomes ``{type: [T, "null"], …}``.

``$ref``/``$defs`` are first-class in tool schemas from the 2026-07-28 specification (JSON
Schema 2020-12 is the default dialect, as in 2025-11-25); the official Python client validates
with ``jsonschema``, and the MCP Inspector lists and calls such tools (tests/mcp).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Schema = dict[str, Any]
Rewrite = Callable[[Schema, str | None], Schema]
REF = "#/$defs/{name}"
# Keywords holding one subschema, a list of them, or a map of them by name.
ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains"})
MANY = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
MAP = frozenset({"properties", "patternProperties", "$defs"})


def compact(schema: Schema, describe: Callable[[str], str] = str) -> Schema:
    """The tool form of ``schema`` (a model's ``model_json_schema()``), as the module says.

    ``describe`` rewrites each description (the MCP face names tools where text names slugs).
    """

    def tighten(node: Schema, key: str | None) -> Schema:
        out = {k: v for k, v in node.items() if not (k == "default" and v is None)}
        title = out.get("title")
        if "properties" in out or (key is not None and title == key.replace("_", " ").title()):
            out.pop("title", None)
        if isinstance(out.get("description"), str):
            out["description"] = describe(out["description"])
        return out

    top = walk(schema, tighten)
    top.pop("description", None)
    top = hoist_named_types(top)
    return walk(top, lambda node, key: nullable(node))


def walk(node: Any, rewrite: Rewrite, key: str | None = None) -> Any:
    """``node`` with ``rewrite(subschema, its property or definition name)`` applied to every
    subschema, innermost first."""
    if isinstance(node, list):
        return [walk(item, rewrite) for item in node]
    if not isinstance(node, dict):
        return node
    out: Schema = {}
    for name, value in node.items():
        if name in MAP and isinstance(value, dict):
            out[name] = {sub: walk(child, rewrite, sub) for sub, child in value.items()}
        elif name in ONE or name in MANY:
            out[name] = walk(value, rewrite)
        else:
            out[name] = value
    return rewrite(out, key)


def named(node: Schema) -> str | None:
    """The name of a named value type (its title), for a subschema that is one."""
    title = node.get("title")
    return title if isinstance(title, str) and "properties" not in node else None


def definition(node: Schema) -> Schema:
    """A named type's definition: the subschema without its title and the description of the
    place it is used in."""
    return {k: v for k, v in node.items() if k not in ("title", "description")}


def hoist_named_types(top: Schema) -> Schema:
    """Named types used more than once become ``$defs`` entries; every title left goes."""
    forms: dict[str, list[str]] = {}

    def collect(node: Schema, key: str | None) -> Schema:
        if (name := named(node)) is not None:
            forms.setdefault(name, []).append(json.dumps(definition(node), sort_keys=True))
        return node

    walk(top, collect)
    # Two different types under one title stay inline: a $ref would say they were the same.
    shared = {name for name, seen in forms.items() if len(seen) > 1 and len(set(seen)) == 1}
    shared -= set(top.get("$defs", {}))
    hoisted: dict[str, Schema] = {}

    def swap(node: Schema, key: str | None) -> Schema:
        name = named(node)
        if name is None:
            return node
        if name not in shared:
            return {k: v for k, v in node.items() if k != "title"}
        hoisted.setdefault(name, definition(node))
        ref: Schema = {"$ref": REF.format(name=name)}
        if "description" in node:
            ref["description"] = node["description"]
        return ref

    out = walk(top, swap)
    if hoisted:
        out["$defs"] = {**out.get("$defs", {}), **hoisted}
    return out


def nullable(node: Schema) -> Schema:
    """``anyOf: [{type: T, …}, {type: null}]`` → ``{type: [T, "null"], …}`` when the branch
    is a plain typed schema (``minLength`` and the like do not apply to null)."""
    branches = node.get("anyOf")
    null = {"type": "null"}
    if not isinstance(branches, list) or len(branches) != 2 or null not in branches:
        return node
    other = branches[0] if branches[1] == null else branches[1]
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    if not isinstance(other.get("type"), str) or set(other) & set(rest):
        return node
    return {**rest, **other, "type": [other["type"], "null"]}


__all__ = ["compact", "walk"]
