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
- ``title`` goes: pydantic titles each property after its key (``limit`` gets ``"Limit"``) and
  each model after its class; the schema's own description goes too (``"Input of
  documents.search."``: the tool's description describes the call);
- ``default: null`` goes (a field not sent is left as it is: absent is not null);
- a model used by the input (a where condition, a line item) stays defined once in ``$defs``
  and referred to by ``$ref``, as pydantic writes it; its definition has no description of
  its own: each place using it has one;
- ``anyOf: [{type: T, …}, {type: null}]`` becomes ``{type: [T, "null"], …}``, and an enum
  lists its values (null among them) without a ``type``;
- "one of these must be set" branches keep only ``required`` (the types are stated where the
  properties are).

``$ref``/``$defs`` are first-class in tool schemas from the 2026-07-28 specification (JSON
Schema 2020-12 is the default dialect, as in 2025-11-25); the official Python client validates
with ``jsonschema``, and the MCP Inspector lists and calls such tools (tests/mcp).
"""

from __future__ import annotations

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
        out.pop("title", None)  # pydantic's: a property's key title-cased, a model's class
        if isinstance(out.get("description"), str):
            out["description"] = describe(out["description"])
        return out

    top = walk(schema, tighten)
    top.pop("description", None)
    if top.get("additionalProperties") is False:
        del top["additionalProperties"]
    if top.get("properties") == {}:  # a call without arguments: {"type": "object"} says it
        del top["properties"]
    for name, shared in top.get("$defs", {}).items():
        # Each use is a property, described where it is used (tests/mcp hold every property
        # to having a description); the definition's own docstring would say it again.
        top["$defs"][name] = {k: v for k, v in shared.items() if k != "description"}
    return shared_decimals(walk(top, lambda node, key: nullable(node, null_is_absent)))


# Decimals that recur (amounts, quantities) by the pattern of their strings, and the name their
# one definition takes.
DECIMAL_NAMES = {
    "^-?[0-9]{1,13}(\\.[0-9]{1,2})?$": "Money",
    "^-?[0-9]{1,11}(\\.[0-9]{1,4})?$": "Quantity",
}


def shared_decimals(schema: Schema) -> Schema:
    """A decimal the tool takes more than once (documents_update's amounts, a line item's
    price) is defined once in ``$defs`` (with null: where null is not accepted the capability
    says so) and each use refers to it beside its own description."""
    uses: dict[str, int] = {}

    def count(node: Schema, key: str | None) -> Schema:
        name = _decimal_name(node)
        if name is not None:
            uses[name] = uses.get(name, 0) + 1
        return node

    walk(schema, count)
    shared = {name for name, times in uses.items() if times > 1}
    if not shared:
        return schema

    def refer(node: Schema, key: str | None) -> Schema:
        name = _decimal_name(node)
        if name not in shared:
            return node
        rest = {k: v for k, v in node.items() if k not in ("type", "pattern")}
        return {"$ref": REF.format(name=name), **rest}

    out: Schema = walk(schema, refer)
    definitions = dict(out.get("$defs", {}))
    for pattern, name in DECIMAL_NAMES.items():
        if name in shared:
            definitions[name] = {"type": ["number", "string", "null"], "pattern": pattern}
    out["$defs"] = definitions
    return out


def _decimal_name(node: Schema) -> str | None:
    kinds = node.get("type")
    if not isinstance(kinds, list) or kinds[:2] != ["number", "string"]:
        return None
    return DECIMAL_NAMES.get(node.get("pattern", ""))


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
    node = as_decimal(node) or node
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
    """A decimal input (``schema.money.decimal_input``: a bounded number, or a string of
    digits; maybe null) as one schema: ``{type: [number, string(, null)], pattern}``. The
    pattern still holds strings to their digits; a number past the bounds or with too many
    places is refused by the capability, naming the field."""
    branches = node.get("anyOf")
    if not isinstance(branches, list) or len(branches) not in (2, 3):
        return None
    null = {"type": "null"}
    number, text, *rest_branches = branches
    if rest_branches not in ([], [null]):
        return None
    if number.get("type") != "number" or set(text) != {"type", "pattern"}:
        return None
    if text["type"] != "string":
        return None
    kinds = ["number", "string", *(["null"] if rest_branches else [])]
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    return {**rest, "type": kinds, "pattern": text["pattern"]}


__all__ = ["compact", "walk"]


def types_only(schema: Schema) -> Schema:
    """``schema`` (a compact output schema) without property descriptions, at every depth: the
    keys and types say what the result holds, the tool's description what its figures mean
    (see ``app.mcp.tools``)."""

    def strip(node: Schema, key: str | None) -> Schema:
        return {k: v for k, v in node.items() if k != "description"}

    top: Schema = walk(schema, strip)
    return top
