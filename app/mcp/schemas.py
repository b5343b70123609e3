"""Tool schemas as an assistant reads them: a capability's JSON Schema without what repeats.

The registry's models give pydantic's JSON Schema (draft 2020-12), which every face shares.
An assistant pays for every byte of it in every conversation, so the MCP face writes the same
schema more tightly. Where the tool schema accepts more than the capability, the capability's
own 400 names the field and the reason; it accepts less only where a call loses nothing (null
where null means leaving the argument out):

- no length bound a sensible call never nears: a minimum of 1 (an empty string or list) and a
  maximum of ``LONG`` characters or items or more (ids, names, free text); shorter bounds stay;
- no ``additionalProperties: false`` on the call's own arguments: an unknown argument is
  refused naming the known ones (nested objects keep it: there it tells what the object holds);
- a decimal (a bounded number or a string of digits) is one ``[number, string]`` schema with
  the strings' pattern, without the number's bounds;
- null goes where it means what leaving the argument out means: in every tool whose
  capability does not say what null does (documents_update says "null clears a field",
  integrations_configure "null removes a mapping": theirs stay);
- ``title`` goes where it only repeats a name: pydantic titles each property after its key
  (``limit`` gets ``"Limit"``) and each model after its class; the schema's own description
  goes too (``"Input of documents.search."``: the tool's description describes the call);
- ``default: null`` goes (a field not sent is left as it is: absent is not null);
- a named value type (a subschema titled by its type, such as ``Money``) used more than once
  moves to ``$defs`` and each use becomes a ``$ref``, as pydantic already does for models;
  used once, it stays inline, untitled;
- a definition in ``$defs`` has no description of its own: each place using it has one;
- ``anyOf: [{type: T, …}, {type: null}]`` becomes ``{type: [T, "null"], …}``, and an enum
  lists its values (null among them) without a ``type``;
- "one of these must be set" branches keep only ``required`` (the types are stated where the
  properties are).

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
# A maxLength at least this long is a guard of the server, not a hint to the caller.
LONG = 100
# Keywords holding one subschema, a list of them, or a map of them by name.
ONE = frozenset({"items", "additionalProperties", "not", "if", "then", "else", "contains"})
MANY = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
MAP = frozenset({"properties", "patternProperties", "$defs"})


def compact(
    schema: Schema, describe: Callable[[str], str] = str, null_is_absent: bool = False
) -> Schema:
    """The tool form of ``schema`` (a model's ``model_json_schema()``), as the module says.

    ``describe`` rewrites each description (the MCP face names tools where text names slugs);
    ``null_is_absent``: null means what leaving the argument out means, so it is not listed.
    """

    def tighten(node: Schema, key: str | None) -> Schema:
        out = {k: v for k, v in node.items() if not (k == "default" and v is None)}
        for low, high in (("minLength", "maxLength"), ("minItems", "maxItems")):
            if out.get(low) == 1:
                del out[low]
            if isinstance(out.get(high), int) and out[high] >= LONG:
                del out[high]
        title = out.get("title")
        if "properties" in out or (key is not None and title == key.replace("_", " ").title()):
            out.pop("title", None)
        if isinstance(out.get("description"), str):
            out["description"] = describe(out["description"])
        return out

    top = walk(schema, tighten)
    top.pop("description", None)
    if top.get("additionalProperties") is False:
        del top["additionalProperties"]
    if top.get("properties") == {}:  # a call without arguments: {"type": "object"} says it
        del top["properties"]
    top = hoist_named_types(top)
    for name, shared in top.get("$defs", {}).items():
        # Each use is a property, described where it is used (tests/mcp hold every property
        # to having a description); the definition's own docstring would say it again.
        top["$defs"][name] = {k: v for k, v in shared.items() if k != "description"}
    return walk(top, lambda node, key: nullable(node, null_is_absent))


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


def nullable(node: Schema, null_is_absent: bool) -> Schema:
    """``anyOf: [{type: T, …}, {type: null}]`` → ``{type: [T, "null"], …}`` when the branch
    is a plain typed schema (``minLength`` and the like do not apply to null); an enum takes
    null among its values instead (``type`` adds nothing to an enum). With ``null_is_absent``
    the null goes: the tool's schema says what to send, and null means the same as leaving
    the argument out."""
    branches = node.get("anyOf")
    null = {"type": "null"}
    if isinstance(branches, list) and len(branches) == 2 and null in branches:
        other = branches[0] if branches[1] == null else branches[1]
        rest = {k: v for k, v in node.items() if k != "anyOf"}
        if set(other) & set(rest):
            return node
        if null_is_absent:
            return {**rest, **other}
        if "enum" in other:
            return {**rest, **other, "enum": [*other["enum"], None]}
        if not isinstance(other.get("type"), str):
            return node
        return {**rest, **other, "type": [other["type"], "null"]}
    if (decimal := as_decimal(node)) is not None:
        return decimal
    if null_is_absent and isinstance(node.get("anyOf"), list):
        # "one of these must be set" branches ({properties: {x: {type: string}}, required:
        # [x]}): with null not sent, required says it; x's type is stated where x is.
        node = {**node, "anyOf": [presence(branch) for branch in node["anyOf"]]}
    if "enum" in node and "type" in node:
        return {k: v for k, v in node.items() if k != "type"}
    if null_is_absent and isinstance(node.get("type"), list) and "null" in node["type"]:
        kinds = [kind for kind in node["type"] if kind != "null"]
        return {**node, "type": kinds[0] if len(kinds) == 1 else kinds}
    return node


def presence(branch: Any) -> Any:
    """``{properties: {x: {type: T}}, required: [x]}`` → ``{required: [x]}``."""
    if not isinstance(branch, dict) or set(branch) != {"properties", "required"}:
        return branch
    if any(set(sub) != {"type"} for sub in branch["properties"].values()):
        return branch
    return {"required": branch["required"]}


def as_decimal(node: Schema) -> Schema | None:
    """A decimal input (``schema.money.decimal_input``: a bounded number, or a string of digits)
    as one schema: ``{type: [number, string], pattern, description}``. The pattern still
    holds strings to their digits; a number past the bounds is refused by the capability,
    naming the field."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) != 2:
        return None
    number, text = branches
    if (
        number.get("type") != "number"
        or set(text) != {"type", "pattern"}
        or text["type"] != "string"
    ):
        return None
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    merged: Schema = {"type": ["number", "string"], "pattern": text["pattern"]}
    if "description" in number and "description" not in rest:
        merged["description"] = number["description"]
    return {**rest, **merged}


__all__ = ["compact", "walk"]
