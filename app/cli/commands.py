"""``fincap <resource> <action>``: one command per capability, built from its input schema.

The commands are generated from a discovery listing (the items of ``GET /v1/capabilities``:
slug, description, inputSchema). The listing shipped with the CLI, ``app/cli/discovery.json``,
is the installed registry's own discovery (a test keeps it equal), so ``--help`` works offline
and instantly (building the registry itself would import every engine: ~1 s per command). A
command the shipped listing does not know — a newer server's capability — is looked up in that
server's discovery instead, so no CLI change is needed for new capabilities.

Options come from the input schema: scalars and enums are typed options (choices listed),
booleans ``--flag/--no-flag``, arrays of scalars repeatable options, nested objects and other
arrays JSON (``--where '{…}'`` or ``--where @file.json``). The whole body may instead be given as
one JSON argument (``'{…}'``, ``@file.json``, or ``-`` for stdin; piped stdin is read when no
option and no argument is given). Options win over keys of the body. Defaults are the server's:
an option left out is not sent.
"""

from __future__ import annotations

import functools
import json
import re
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib import resources
from typing import Any

import click

from app.cli.client import CallFailed, Client
from app.cli.config import resolve
from app.cli.output import print_json, print_result, wants_json

LISTING_FILE = "discovery.json"
# The server's error.reason of a call that needs a workspace and named none.
WORKSPACE_REQUIRED = "workspace_required"
# Options every capability command has; a capability parameter may not take these names.
COMMON_OPTIONS = ("host", "org", "json", "raw", "timeout")


def kebab(name: str) -> str:
    """``fromCurrency`` → ``from-currency``; ``listHistory`` → ``list-history``."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"-\1", name).lower()


@functools.cache
def shipped_listing() -> tuple[dict[str, Any], ...]:
    """The discovery items of the installed registry (``app/cli/discovery.json``)."""
    text = resources.files("app.cli").joinpath(LISTING_FILE).read_text()
    return tuple(json.loads(text)["capabilities"])


def by_resource(listing: Iterable[dict[str, Any]]) -> dict[str, dict[str, dict[str, Any]]]:
    """resource → CLI action name → discovery item."""
    grouped: dict[str, dict[str, dict[str, Any]]] = {}
    for item in listing:
        resource, _, action = str(item["slug"]).partition(".")
        grouped.setdefault(resource, {})[kebab(action)] = item
    return grouped


# -- input schema → options -------------------------------------------------------------------


@dataclass(frozen=True)
class Param:
    """One input property as a command-line option."""

    name: str  # the property's wire name (camelCase)
    kind: str  # string | integer | number | decimal | boolean | choice | list | json
    required: bool
    help: str
    choices: tuple[Any, ...] = ()

    @property
    def flag(self) -> str:
        return "--" + kebab(self.name)

    @property
    def dest(self) -> str:
        return "p_" + re.sub(r"\W", "_", self.name)


def _deref(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        schema = {
            **root.get("$defs", {}).get(name, {}),
            **{k: v for k, v in schema.items() if k != "$ref"},
        }
    return schema


def _without_null(schema: dict[str, Any], root: dict[str, Any]) -> list[dict[str, Any]]:
    options = schema.get("anyOf") or schema.get("oneOf")
    if not options:
        return [schema]
    return [_deref(o, root) for o in options if o.get("type") != "null"]


def _constraints(schema: dict[str, Any]) -> str:
    parts = []
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        parts.append(f"{low} to {high}")
    elif low is not None:
        parts.append(f"at least {low}")
    elif high is not None:
        parts.append(f"at most {high}")
    short, long_ = schema.get("minLength"), schema.get("maxLength")
    if short is not None and long_ is not None:
        parts.append(f"{short} to {long_} characters")
    elif long_ is not None:
        parts.append(f"at most {long_} characters")
    elif short is not None and short > 1:
        parts.append(f"at least {short} characters")
    if schema.get("pattern"):
        parts.append(f"pattern {schema['pattern']}")
    if schema.get("format") and schema["format"] not in ("date", "date-time"):
        parts.append(str(schema["format"]))
    if schema.get("maxItems") is not None:
        parts.append(f"at most {schema['maxItems']} items")
    return ", ".join(parts)


def param_of(name: str, schema: dict[str, Any], root: dict[str, Any], required: bool) -> Param:
    schema = _deref(schema, root)
    variants = _without_null(schema, root)
    description = schema.get("description") or ""
    merged = {**{k: v for k, v in schema.items() if k not in ("anyOf", "oneOf")}, **variants[0]}
    types = {v.get("type") for v in variants}
    if len(variants) > 1:
        # Money: a JSON number or a decimal string; sent as the string typed (exact).
        kind = "decimal" if types <= {"number", "integer", "string"} else "json"
    elif "enum" in merged:
        kind = "choice"
    elif merged.get("type") in ("string", "integer", "number", "boolean"):
        kind = str(merged["type"])
    elif merged.get("type") == "array":
        items = _without_null(_deref(merged.get("items", {}), root), root)
        scalar = len(items) == 1 and items[0].get("type") in ("string", "integer", "number")
        kind = "list" if scalar else "json"
        if scalar and "enum" in items[0]:
            merged = {**merged, "enum": items[0]["enum"]}
    else:
        kind = "json"
    notes = [description.rstrip(".")] if description else []
    if kind == "json":
        notes.append("JSON, or @file.json")
    elif kind == "list":
        notes.append("repeat the option for several values, or give a JSON array")
    if "enum" in merged and kind == "list":
        notes.append("each one of: " + ", ".join(map(str, merged["enum"])))
    if constraints := _constraints(merged):
        notes.append(constraints)
    default = schema.get("default", merged.get("default"))
    if default is not None and default != [] and kind != "boolean":
        notes.append(f"default: {json.dumps(default) if isinstance(default, dict) else default}")
    if kind == "boolean" and default is not None:
        notes.append(f"default: {'on' if default else 'off'}")
    if required:
        notes.append("required")
    choices = tuple(merged.get("enum", ())) if kind == "choice" else ()
    return Param(name, kind, required, "; ".join(notes), choices)


def params_of(input_schema: dict[str, Any]) -> list[Param]:
    required = set(input_schema.get("required", ()))
    return [
        param_of(name, schema, input_schema, name in required)
        for name, schema in (input_schema.get("properties") or {}).items()
    ]


def click_option(param: Param) -> click.Option:
    if param.name in COMMON_OPTIONS:
        raise ValueError(f"capability parameter {param.name!r} clashes with a common CLI option")
    if param.kind == "boolean":
        flag = param.flag
        return click.Option([f"{flag}/--no-{flag[2:]}", param.dest], default=None, help=param.help)
    if param.kind == "choice":
        choice_type = click.Choice([str(c) for c in param.choices])
        return click.Option([param.flag, param.dest], type=choice_type, help=param.help)
    if param.kind == "list":
        return click.Option([param.flag, param.dest], multiple=True, help=param.help)
    types: dict[str, Any] = {"integer": click.INT, "number": click.FLOAT}
    return click.Option(
        [param.flag, param.dest], type=types.get(param.kind, click.STRING), help=param.help
    )


def _read_json(text: str, where: str) -> Any:
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise click.UsageError(f"{where}: cannot read {text[1:]}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise click.UsageError(f"{where}: not valid JSON ({exc})") from None


def option_value(param: Param, value: Any) -> Any:
    """The JSON value to send for an option's command-line value (None: not given)."""
    if value is None or value == ():
        return None
    if param.kind == "json":
        return _read_json(value, param.flag)
    if param.kind == "list":
        values: list[Any] = []
        for item in value:
            values += _read_json(item, param.flag) if item.lstrip().startswith("[") else [item]
        return values
    if param.kind == "choice":
        # An enum of numbers (sortOrder 1 / -1) is sent as the number.
        return next((c for c in param.choices if str(c) == value), value)
    return value


def subject_param(params: list[Param]) -> Param | None:
    """The one id a command's positional argument may name (``fincap documents get doc_…``).

    A capability whose only required parameter is an id (``id``, ``documentId``, ``userId``…)
    takes it without its flag; any other keeps the positional argument for the JSON body.
    """
    required = [p for p in params if p.required]
    if len(required) != 1 or required[0].kind != "string":
        return None
    name = required[0].name
    return required[0] if name == "id" or name.endswith("Id") else None


def looks_like_body(argument: str) -> bool:
    """A positional argument that is a JSON body (``{…}``, ``@file``, ``-``), not an id."""
    return argument == "-" or argument.lstrip().startswith(("{", "[", "@"))


def read_body(argument: str | None, options_given: bool) -> dict[str, Any]:
    """The JSON body from the argument (``{…}``, ``@file``, ``-``) or piped stdin."""
    if argument is None and not options_given and not sys.stdin.isatty():
        argument = "-"
    if argument is None:
        return {}
    if argument == "-":
        text = sys.stdin.read()
        if not text.strip():
            return {}
        body = _read_json(text, "stdin")
    else:
        body = _read_json(argument, "BODY")
    if not isinstance(body, dict):
        raise click.UsageError("BODY: the request body must be a JSON object")
    return body


# -- commands ---------------------------------------------------------------------------------


def common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """``--host``, ``--org``, ``--json``, ``--raw``, ``--timeout`` (every server command)."""
    decorators = [
        click.option("--host", default=None, help="Server address (else FINCAP_HOST, config)."),
        click.option("--org", default=None, help="Workspace org_… (else FINCAP_ORG_ID, config)."),
        click.option("--json", "as_json", is_flag=True, help="Print data.result as JSON."),
        click.option("--raw", is_flag=True, help="Print the whole response envelope as JSON."),
        click.option(
            "--timeout", type=float, default=60.0, show_default=True, help="Seconds to wait."
        ),
    ]
    for decorate in reversed(decorators):
        command = decorate(command)
    return command


def fail(failed: CallFailed, raw: bool = False) -> None:
    """Print a failed call (stderr, or the envelope with ``--raw``) and exit with its code."""
    if raw and failed.envelope is not None:
        print_json(failed.envelope)
    message = failed.message
    if failed.reason == WORKSPACE_REQUIRED:
        # The server's advice is REST's (a header); a CLI user names a workspace these ways.
        message = message.split(": send the header", 1)[0]
        message += " (choose one: --org org_…, FINCAP_ORG_ID, or `fincap workspace use org_…`)"
    click.echo(f"error: {message}", err=True)
    sys.exit(failed.exit_code)


def capability_command(item: dict[str, Any], name: str) -> click.Command:
    """The command of one discovery item."""
    slug = str(item["slug"])
    params = params_of(item.get("inputSchema") or {})
    by_dest = {param.dest: param for param in params}
    subject = subject_param(params)

    def run(
        body: str | None,
        host: str | None,
        org: str | None,
        as_json: bool,
        raw: bool,
        timeout: float,
        **values: Any,
    ) -> None:
        sent = {by_dest[d].name: option_value(by_dest[d], v) for d, v in values.items()}
        options = {k: v for k, v in sent.items() if v is not None}
        if subject is not None and body is not None and not looks_like_body(body):
            if subject.name in options and options[subject.name] != body:
                raise click.UsageError(f"two {subject.flag} given: {body} and {subject.flag}")
            options[subject.name], body = body, None
        payload = {**read_body(body, bool(options)), **options}
        missing = [p.flag for p in params if p.required and p.name not in payload]
        if missing:
            raise click.UsageError(f"missing required option(s): {', '.join(missing)}")
        with Client(resolve(host=host, org=org), timeout=timeout) as client:
            try:
                envelope = client.call(slug, payload)
            except CallFailed as failed:
                fail(failed, raw)
        print_result(
            envelope["data"]["result"], as_json=wants_json(as_json), raw=envelope if raw else None
        )

    description = str(item.get("description") or "")
    permissions = ", ".join(item.get("permissions") or ()) or "none"
    roles = item.get("roles")
    who = f"; roles: {', '.join(roles)}" if roles else ""
    metavar = "[ID|BODY]" if subject else "[BODY]"
    resource = slug.partition(".")[0]
    id_help = f" ID: the {subject.flag} itself (`fincap {resource} {name} ID`)." if subject else ""
    command = click.Command(
        name,
        callback=common_options(run),
        params=[
            click.Argument(["body"], required=False, metavar=metavar),
            *(click_option(param) for param in params),
        ],
        help=f"{description}\n\nCapability {slug}; scopes: {permissions}{who}. BODY: the whole "
        "request as JSON ('{…}', @file.json, or - for stdin); options override its keys." + id_help,
        short_help=description.split("\n", 1)[0],
        no_args_is_help=False,
    )
    # The common options were attached to the callback by decorators; move them to the command.
    command.params += getattr(run, "__click_params__", [])[::-1]
    return command


ARGS_META = "fincap.remaining_args"


def remember_args(ctx: click.Context, args: list[str]) -> None:
    """Keep the arguments a group is resolving (``ctx.meta`` is shared by the whole chain)."""
    ctx.meta[ARGS_META] = list(args)


def host_flag(ctx: click.Context) -> str | None:
    """The ``--host`` of the command line being resolved.

    A group looks a command up before the command's own options are parsed, so the server
    whose discovery is asked is read from the remaining arguments here.
    """
    args: list[str] = ctx.meta.get(ARGS_META, [])
    for index, arg in enumerate(args):
        if arg == "--host" and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith("--host="):
            return arg.partition("=")[2]
    return None


def server_listing(host: str | None = None) -> list[dict[str, Any]]:
    """The server's discovery (for capabilities this CLI does not ship), or [] if unreachable."""
    try:
        with Client(resolve(host=host), timeout=5) as client:
            return client.discovery()
    except (CallFailed, click.UsageError):
        return []


class DiscoveringGroup(click.Group):
    """A group that may ask the server's discovery, so it keeps the arguments it resolves."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        remember_args(ctx, args)
        return super().resolve_command(ctx, args)


class ResourceGroup(DiscoveringGroup):
    """``fincap <resource>``: its actions, with server discovery as the fallback."""

    def __init__(
        self,
        resource: str,
        actions: dict[str, dict[str, Any]],
        custom: dict[str, click.Command] | None = None,
    ) -> None:
        super().__init__(resource, help=f"Capabilities of the {resource} resource.")
        self.actions = dict(actions)
        self.custom = custom or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(self.actions) | set(self.custom))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.custom:
            return self.custom[cmd_name]
        item = self.actions.get(cmd_name)
        if item is None:
            listing = server_listing(host_flag(ctx))
            item = by_resource(listing).get(self.name or "", {}).get(cmd_name)
        return capability_command(item, cmd_name) if item is not None else None


def resource_group(
    resource: str, custom: dict[str, dict[str, click.Command]], host: str | None = None
) -> ResourceGroup | None:
    """The group of ``resource`` from the shipped listing, else from the server's."""
    actions = by_resource(shipped_listing()).get(resource)
    if actions is None:
        actions = by_resource(server_listing(host)).get(resource)
    if actions is None and resource not in custom:
        return None
    return ResourceGroup(resource, actions or {}, custom.get(resource))


class CapabilityGroup(DiscoveringGroup):
    """The root ``fincap`` group: its own commands plus one group per capability resource.

    ``custom_actions`` replaces generated actions where a hand-made command serves people
    better (``files upload`` takes paths instead of base64).
    """

    custom_actions: dict[str, dict[str, click.Command]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.custom_actions = {}

    def resources(self) -> list[str]:
        names = set(by_resource(shipped_listing())) | set(self.custom_actions)
        return sorted(names - set(self.commands))

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(self.commands) + self.resources()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        return resource_group(cmd_name, self.custom_actions, host_flag(ctx))

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        sections = (
            ("Commands", [(n, self.commands[n]) for n in sorted(self.commands)]),
            (
                "Capabilities (fincap RESOURCE ACTION --help)",
                [(n, None) for n in self.resources()],
            ),
        )
        for title, entries in sections:
            rows = []
            for name, command in entries:
                if command is None:
                    grouped = by_resource(shipped_listing()).get(name, {})
                    actions = sorted(set(grouped) | set(self.custom_actions.get(name, {})))
                    rows.append((name, ", ".join(actions)))
                elif not command.hidden:
                    rows.append((name, command.get_short_help_str(formatter.width)))
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)
