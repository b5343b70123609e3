"""``fincap auth``, ``fincap workspace`` and ``fincap doctor``: who and where the CLI calls as.

Both spellings work: ``fincap auth login|status|logout`` and ``fincap auth <key>`` /
``fincap auth --status``; ``fincap workspace list|use|clear|status`` and ``--status``.
"""

from __future__ import annotations

import stat
import sys
from typing import Any

import click
from rich.console import Console

from app.cli.client import EXIT_AUTH, EXIT_FAILED_ITEMS, EXIT_OK, CallFailed, Client
from app.cli.commands import common_options, fail
from app.cli.config import config_path, normalize_host, read_config, resolve, write_config
from app.cli.output import print_json, table, wants_json


class SpelledGroup(click.Group):
    """A group that also takes the spec's spellings (spec/decisions.md): ``--status``, bare key."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] == "--status":
            args = ["status", *args[1:]]
        elif self.name == "auth" and args and args[0].startswith("sk_"):
            args = ["login", "--key", args[0], *args[1:]]
        return super().parse_args(ctx, args)


def workspaces_of(client: Client) -> dict[str, Any]:
    """``GET /v1/workspaces``: ``{currentOrgId, workspaces: [...]}``."""
    result: dict[str, Any] = client.envelope("GET", "/v1/workspaces")["data"]["result"]
    return result


@click.group(cls=SpelledGroup)
def auth() -> None:
    """Log in with an API key, show who you are, log out (config: ~/.fincap/config.json)."""


@auth.command()
@click.option("--key", default=None, help="The API key (sk_…); else read from stdin or a prompt.")
@click.option("--host", default=None, help="Server address to save with the key.")
def login(key: str | None, host: str | None) -> None:
    """Check an API key against the server and save it (file mode 0600)."""
    if key is None:
        if sys.stdin.isatty():
            key = click.prompt("API key", hide_input=True)
        else:
            key = sys.stdin.readline()
    key = (key or "").strip()
    if not key:
        raise click.UsageError("no API key given (--key, stdin, or the prompt)")
    target = resolve(host=host, api_key=key)
    with Client(target, timeout=15) as client:
        try:
            found = workspaces_of(client)
        except CallFailed as failed:
            fail(failed)
    workspaces = found.get("workspaces") or []
    changes: dict[str, str | None] = {"apiKey": key}
    if host:
        changes["host"] = normalize_host(host)
    if len(workspaces) == 1:
        changes["orgId"] = workspaces[0]["id"]
    path = write_config(**changes)
    chosen = f"; workspace {changes['orgId']}" if "orgId" in changes else ""
    click.echo(
        f"Logged in to {target.host} ({len(workspaces)} workspace(s){chosen}); saved in {path}"
    )


@auth.command()
@click.option("--host", default=None, help="Server address (else FINCAP_HOST, config).")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def status(host: str | None, as_json: bool) -> None:
    """Which server and key the CLI uses, where each comes from, and whether the key works."""
    target = resolve(host=host)
    report: dict[str, Any] = {
        "host": target.host,
        "hostFrom": target.sources.get("host"),
        "apiKey": target.masked_key,
        "apiKeyFrom": target.sources.get("apiKey"),
        "orgId": target.org_id,
        "orgIdFrom": target.sources.get("orgId"),
    }
    code = EXIT_OK
    if target.api_key is None:
        report["keyValid"] = False
        report["problem"] = "no API key: run `fincap auth login` or set FINCAP_API_KEY"
        code = EXIT_AUTH
    else:
        with Client(target, timeout=15) as client:
            try:
                report["keyValid"] = True
                report["workspaces"] = len(workspaces_of(client).get("workspaces") or [])
            except CallFailed as failed:
                report["keyValid"] = False
                report["problem"] = failed.message
                code = failed.exit_code
    if wants_json(as_json):
        print_json(report)
    else:
        for name, value in report.items():
            click.echo(f"{name:11} {value if value is not None else '-'}")
    sys.exit(code)


@auth.command()
def logout() -> None:
    """Forget the saved API key (the host and workspace stay)."""
    had = "apiKey" in read_config()
    write_config(apiKey=None)
    click.echo("Logged out." if had else "No saved key; nothing to forget.")


@click.group(cls=SpelledGroup)
def workspace() -> None:
    """List workspaces and choose the one commands act in (X-Service-Org-Id)."""


@workspace.command("list")
@common_options
def list_workspaces(
    host: str | None, org: str | None, as_json: bool, raw: bool, timeout: float
) -> None:
    """The workspaces your key may act in (the current one is marked)."""
    with Client(resolve(host=host, org=org), timeout=timeout) as client:
        try:
            envelope = client.envelope("GET", "/v1/workspaces")
        except CallFailed as failed:
            fail(failed, raw)
    if raw:
        print_json(envelope)
        return
    result = envelope["data"]["result"]
    if wants_json(as_json):
        print_json(result)
        return
    rows = result.get("workspaces") or []
    Console(highlight=False).print(table(rows) if rows else "(no workspaces)")


@workspace.command()
@click.argument("org_id")
@click.option("--host", default=None, help="Server address (else FINCAP_HOST, config).")
def use(org_id: str, host: str | None) -> None:
    """Act in ORG_ID from now on (checked against your workspaces, then saved)."""
    with Client(resolve(host=host), timeout=15) as client:
        try:
            listed = workspaces_of(client).get("workspaces") or []
        except CallFailed as failed:
            fail(failed)
    names = {w["id"]: w["name"] for w in listed}
    if org_id not in names:
        known = ", ".join(names) or "none"
        # The server answers the same for a workspace you are not a member of: 403, exit 3.
        click.echo(f"error: {org_id} is not one of your workspaces ({known})", err=True)
        sys.exit(EXIT_AUTH)
    write_config(orgId=org_id)
    click.echo(f"Now acting in {org_id} ({names[org_id]}).")


@workspace.command()
def clear() -> None:
    """Forget the saved workspace."""
    write_config(orgId=None)
    click.echo("No workspace saved; pass --org or set FINCAP_ORG_ID per call.")


@workspace.command("status")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def workspace_status(as_json: bool) -> None:
    """The workspace commands act in, and where that comes from."""
    target = resolve()
    report = {"orgId": target.org_id, "from": target.sources.get("orgId")}
    if wants_json(as_json):
        print_json(report)
    elif target.org_id:
        click.echo(f"{target.org_id} (from {report['from']})")
    else:
        click.echo("none: pass --org, set FINCAP_ORG_ID, or run `fincap workspace use org_…`")


# -- doctor -----------------------------------------------------------------------------------


def _check(lines: list[tuple[bool, str, str]], ok: bool, what: str, detail: str) -> bool:
    lines.append((ok, what, detail))
    return ok


@click.command()
@click.option("--host", default=None, help="Server address (else FINCAP_HOST, config).")
@click.option("--org", default=None, help="Workspace org_… (else FINCAP_ORG_ID, config).")
def doctor(host: str | None, org: str | None) -> None:
    """Check the whole path: config file, server, version, store, OCR, key and workspace.

    Each check prints ok, or the problem and how to fix it; the exit code is 0 when all pass,
    1 otherwise.
    """
    lines: list[tuple[bool, str, str]] = []
    path = config_path()
    if path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
        _check(
            lines,
            mode & 0o077 == 0,
            "config file",
            f"{path}" if mode & 0o077 == 0 else f"{path} is readable by others: chmod 600 {path}",
        )
    target = resolve(host=host, org=org)
    with Client(target, timeout=10) as client:
        try:
            health = client.request("GET", "/healthz", authenticated=False)
            reachable = health.status_code == 200
        except CallFailed as failed:
            reachable, health = False, None
            detail = failed.message
        else:
            detail = f"{target.host} ({target.sources.get('host')})"
        if _check(lines, reachable, "server reachable", detail) and health is not None:
            info = health.json()
            _check(lines, True, "server version", str(info.get("version", "unknown")))
            ready = client.request("GET", "/readyz", authenticated=False)
            checks = ready.json().get("checks") or {}
            store_ok = ready.status_code == 200 or checks.get("store") is True
            _check(
                lines,
                store_ok,
                "store ready",
                "ok" if store_ok else "the server cannot reach its database: see its log",
            )
            engines = info.get("ocr") or []
            _check(
                lines,
                bool(engines),
                "OCR engine",
                ", ".join(engines)
                if engines
                else "none installed on the server: `make install` installs rapidocr",
            )
            _check_identity(lines, client, target.api_key, target.org_id)
    for ok, what, detail in lines:
        mark = click.style("ok  ", fg="green") if ok else click.style("FAIL", fg="red")
        click.echo(f"{mark} {what}: {detail}")
    sys.exit(EXIT_OK if all(ok for ok, _, _ in lines) else EXIT_FAILED_ITEMS)


def _check_identity(
    lines: list[tuple[bool, str, str]], client: Client, key: str | None, org: str | None
) -> None:
    if not key:
        _check(lines, False, "API key", "none: run `fincap auth login` or set FINCAP_API_KEY")
        return
    try:
        found = workspaces_of(client)
    except CallFailed as failed:
        _check(
            lines, False, "API key", f"{failed.message}: run `fincap auth login` with a valid key"
        )
        return
    _check(lines, True, "API key", f"valid ({client.target.masked_key})")
    ids = [w["id"] for w in found.get("workspaces") or []]
    current = found.get("currentOrgId")
    if current:
        _check(lines, True, "workspace", f"{current}")
    elif org:
        _check(lines, False, "workspace", f"{org} is not one of yours ({', '.join(ids) or 'none'})")
    else:
        _check(
            lines,
            False,
            "workspace",
            "none chosen: `fincap workspace use org_…` (yours: " + (", ".join(ids) or "none") + ")",
        )
