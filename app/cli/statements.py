"""``fincap statements import FILE``: a bank statement file to statements.import.

The file is read from disk and sent as base64 (the capability's body); ``--mapping`` takes the
CSV column mapping as JSON or ``@file.json``. The answer says how many transactions were added
and how many an earlier import already had, with the statement's account, period and balances.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import click

from app.cli.client import CallFailed, Client
from app.cli.commands import common_options, fail
from app.cli.config import resolve
from app.cli.output import print_json, print_result, wants_json
from domain.transactions import MAX_STATEMENT_BYTES, MAX_STATEMENT_TEXT

FORMATS = ("auto", "csv", "ofx", "camt053", "mt940")


def _mapping(value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    text = Path(value[1:]).read_text() if value.startswith("@") else value
    try:
        mapping = json.loads(text)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--mapping") from None
    if not isinstance(mapping, dict):
        raise click.BadParameter("a JSON object of columns", param_hint="--mapping")
    return mapping


def _summary(result: dict[str, Any]) -> str:
    lines = [
        f"{result['added']} added, {result['alreadyThere']} already there"
        + (f", {result['notBooked']} not booked" if result.get("notBooked") else "")
        + f" ({result['format']})"
    ]
    if result.get("account"):
        lines.append(f"account  {result['account']}")
    if result.get("periodStart") or result.get("periodEnd"):
        lines.append(
            f"period   {result.get('periodStart') or '?'} – {result.get('periodEnd') or '?'}"
        )
    for name, key in (("opening", "openingBalance"), ("closing", "closingBalance")):
        balance = result.get(key)
        if balance:
            lines.append(
                f"{name:8} {balance['amount']:.2f} {balance['currency']} on {balance['date']}"
            )
    if result.get("mappingSource"):
        lines.append(f"mapping  {result['mappingSource']}: {json.dumps(result['mapping'])}")
    return "\n".join(lines)


@click.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    default="auto",
    show_default=True,
    help="The file's format; auto tells it from the content.",
)
@click.option("--mapping", default=None, help="CSV column mapping: JSON, or @file.json.")
@click.option("--account", default=None, help="The account, when the file does not name it.")
@click.option("--currency", default=None, help="CSV without a currency column: its currency.")
@click.option("--no-save-mapping", is_flag=True, help="Do not remember the CSV mapping used.")
@common_options
def import_statement(
    path: Path,
    format_: str,
    mapping: str | None,
    account: str | None,
    currency: str | None,
    no_save_mapping: bool,
    host: str | None,
    org: str | None,
    as_json: bool,
    raw: bool,
    timeout: float,
) -> None:
    """Import a bank statement (CSV, OFX/QFX, CAMT.053, MT940) as transactions.

    Capability statements.import. Importing the same statement again adds nothing.
    """
    data = path.read_bytes()
    if len(data) > MAX_STATEMENT_BYTES:
        raise click.UsageError(f"{path}: {len(data):,} bytes; the limit is {MAX_STATEMENT_TEXT}")
    body: dict[str, Any] = {
        "fileName": path.name,
        "base64Data": base64.b64encode(data).decode(),
        "format": format_,
    }
    parsed = _mapping(mapping)
    extras = {"mapping": parsed, "account": account, "currency": currency}
    body |= {key: value for key, value in extras.items() if value is not None}
    if no_save_mapping:
        body["saveMapping"] = False
    try:
        with Client(resolve(host=host, org=org), timeout=timeout) as client:
            envelope = client.call("statements.import", body)
    except CallFailed as failed:
        fail(failed, raw)
    result = envelope["data"]["result"]
    if raw:
        print_json(envelope)
    elif wants_json(as_json):
        print_result(result, as_json=True)
    else:
        click.echo(_summary(result))
