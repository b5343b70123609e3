"""``fincap files upload PATH…``: files and folders to files.upload, optionally waiting for them.

Each file's type is read from its content (the same signatures the server checks); files of
other types are listed as skipped and never sent. Several files get a progress bar on a
terminal. ``--wait`` follows each document (documents.get) until its processing ends and prints
what was extracted. The summary counts processed, warnings, skipped, failed and rejected files;
the exit code is 0 when none failed or was rejected, else 1 (or the code of a failure that
stopped the whole batch: no key, server unreachable).
"""

from __future__ import annotations

import base64
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from app.cli.client import EXIT_FAILED_ITEMS, EXIT_OK, CallFailed, Client
from app.cli.commands import common_options, fail
from app.cli.config import resolve
from app.cli.output import print_json, table, wants_json
from domain.documents import NOTHING_SAVED, SAVED, TERMINAL
from domain.uploads import MAX_UPLOAD_BYTES, MAX_UPLOAD_TEXT, UPLOAD_MIME_TYPES
from engines.sniff import sniff_mime

SHOWN_FIELDS = ("merchant", "amount", "currency", "docDate", "category", "docType")


@dataclass
class Outcome:
    """What happened to one file."""

    path: str
    status: str  # queued | processed | warning | skipped | failed | rejected
    documentId: str | None = None
    reason: str | None = None
    fields: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {
            "file": self.path,
            "status": self.status,
            "documentId": self.documentId,
            **{name: self.fields.get(name) for name in SHOWN_FIELDS},
            "reason": self.reason,
        }


def expand(paths: tuple[str, ...]) -> list[Path]:
    """Files of ``paths``; folders are walked (sorted, hidden entries skipped)."""
    found: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found += sorted(
                p
                for p in path.rglob("*")
                if p.is_file()
                and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
        elif path.is_file():
            found.append(path)
        else:
            raise click.UsageError(f"no such file or folder: {name}")
    return found


def upload_one(client: Client, path: Path) -> Outcome:
    data = path.read_bytes()
    mime = sniff_mime(data)
    if mime not in UPLOAD_MIME_TYPES:
        what = f"a {mime} file" if mime else "not a recognised file type"
        return Outcome(str(path), "skipped", reason=f"{what}; fincap takes PDF and images")
    if len(data) > MAX_UPLOAD_BYTES:
        reason = f"{len(data):,} bytes; the limit is {MAX_UPLOAD_TEXT}"
        return Outcome(str(path), "rejected", reason=reason)
    body = {
        "fileName": path.name,
        "mimeType": mime,
        "base64Data": base64.b64encode(data).decode(),
    }
    try:
        accepted = client.result("files.upload", body)
    except CallFailed as failed:
        if failed.status in (400, 413, 422):
            return Outcome(str(path), "rejected", reason=failed.message)
        raise
    return Outcome(str(path), "queued", documentId=accepted["documentId"])


def wait_for(client: Client, outcome: Outcome, deadline: float) -> None:
    """Poll documents.get until processing ends or the deadline passes."""
    delay = 0.3
    while True:
        document = client.result("documents.get", {"id": outcome.documentId})["document"]
        status = document.get("processingStatus")
        if status in TERMINAL or time.monotonic() >= deadline:
            outcome.status = status if status in TERMINAL else "queued"
            outcome.reason = (
                document.get("processingReason")
                if status in TERMINAL
                else ("still processing when --timeout ran out")
            )
            outcome.fields = {name: document.get(name) for name in SHOWN_FIELDS}
            return
        time.sleep(delay)  # the server is working; ask again a little later each time
        delay = min(delay * 1.5, 2.0)


@click.command("upload")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--wait", is_flag=True, help="Wait for processing and print the extracted fields.")
@common_options
def upload(
    paths: tuple[str, ...],
    wait: bool,
    host: str | None,
    org: str | None,
    as_json: bool,
    raw: bool,
    timeout: float,
) -> None:
    """Upload receipts and invoices (files and folders; PDF, JPEG, PNG, GIF, WebP, BMP, TIFF).

    Capability files.upload, once per file. --timeout bounds each call and, with --wait, the
    wait for each document (default 60 s).
    """
    files = expand(paths)
    if not files:
        raise click.UsageError("no files found in the given folders")
    as_json = wants_json(as_json) or raw
    outcomes: list[Outcome] = []
    console = Console(stderr=True, highlight=False)
    show_bar = len(files) > 1 and console.is_terminal and not as_json
    with (
        Client(resolve(host=host, org=org), timeout=timeout) as client,
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=console,
            disable=not show_bar,
            transient=True,
        ) as progress,
    ):
        task = progress.add_task("uploading", total=len(files) * (2 if wait else 1))
        try:
            for path in files:
                progress.update(task, description=f"uploading {path.name}")
                outcome = upload_one(client, path)
                outcomes.append(outcome)
                progress.advance(task)
                if not as_json and not show_bar:
                    click.echo(f"{outcome.status:9} {path}" + _why(outcome))
            if wait:
                for outcome in outcomes:
                    if outcome.documentId is not None:
                        progress.update(task, description=f"processing {Path(outcome.path).name}")
                        wait_for(client, outcome, time.monotonic() + timeout)
                    progress.advance(task)
        except CallFailed as failed:
            fail(failed, raw)
    report(outcomes, as_json=as_json, waited=wait)
    bad = [o for o in outcomes if o.status in ("failed", "rejected")]
    sys.exit(EXIT_FAILED_ITEMS if bad else EXIT_OK)


def _why(outcome: Outcome) -> str:
    return f": {outcome.reason}" if outcome.reason else ""


def report(outcomes: list[Outcome], *, as_json: bool, waited: bool) -> None:
    counts: dict[str, int] = {}
    for outcome in outcomes:
        counts[outcome.status] = counts.get(outcome.status, 0) + 1
    if as_json:
        print_json({"files": [o.row() for o in outcomes], "summary": counts})
        return
    if waited:
        rows = [{k: v for k, v in o.row().items() if k != "reason"} for o in outcomes]
        Console(highlight=False, soft_wrap=True).print(table(rows))
        # Why a file was not simply processed (duplicate, unreadable, …) matters more than a
        # column can hold: one line each, below the table.
        for outcome in outcomes:
            if outcome.status != "processed" and outcome.reason:
                click.echo(f"{outcome.status}: {outcome.path}: {outcome.reason}")
    order = (*SAVED, "queued", *NOTHING_SAVED, "rejected")
    summary = ", ".join(f"{counts[s]} {s}" for s in order if counts.get(s))
    click.echo(f"{len(outcomes)} file(s): {summary}")
