"""API-call counts kept on local disk while the store cannot take them.

A process stopping while its store is away cannot flush its buffered API-call counts
(``resolvers.framework.usage_meter``); it writes them here instead, one file per process
(``usage-pending-<pid>-<n>.json`` in the data directory), and the next process to start on the
same data directory adds them to its own tally, which its next flush writes. A file is claimed
by renaming it before it is read, so two processes starting together never both count it.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from datetime import date
from pathlib import Path

PREFIX = "usage-pending-"
Counts = Mapping[tuple[str, date], int]


def save(directory: Path, counts: Counts) -> Path | None:
    """Write ``counts`` to a new file of ``directory``; its path (None: nothing to write)."""
    if not counts:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    rows = [[workspace, day.isoformat(), calls] for (workspace, day), calls in counts.items()]
    for n in range(1000):
        path = directory / f"{PREFIX}{os.getpid()}-{n}.json"
        try:
            with open(path, "x", encoding="utf-8") as handle:  # never over another's file
                json.dump(rows, handle)
                handle.flush()
                os.fsync(handle.fileno())
        except FileExistsError:
            continue
        return path
    raise OSError(f"no free spool file name in {directory}")


def claim(directory: Path) -> tuple[dict[tuple[str, date], int], list[Path]]:
    """The counts every spool file of ``directory`` holds, and those files, now this
    process's: ``forget`` them once the counts are in the store, ``release`` them otherwise."""
    taken: dict[tuple[str, date], int] = {}
    claimed: list[Path] = []
    if not directory.is_dir():
        return taken, claimed
    for path in sorted(directory.glob(f"{PREFIX}*.json")):
        mine = path.with_name(f"{path.name}.{os.getpid()}.claimed")
        try:
            path.rename(mine)  # atomic: another process taking it first makes this fail
        except FileNotFoundError:
            continue
        try:
            rows = json.loads(mine.read_text(encoding="utf-8"))
            counts = {(str(w), date.fromisoformat(d)): int(c) for w, d, c in rows}
        except (ValueError, TypeError, OSError):
            # A torn or foreign file: kept aside for the operator, never counted twice.
            with contextlib.suppress(OSError):
                mine.rename(mine.with_suffix(".unreadable"))
            continue
        for key, calls in counts.items():
            taken[key] = taken.get(key, 0) + calls
        claimed.append(mine)
    return taken, claimed


def forget(claimed: list[Path]) -> None:
    """The claimed files' counts are in the store: remove the files."""
    for path in claimed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def release(claimed: list[Path]) -> None:
    """The claimed files' counts could not be written: give the files back for a later start."""
    for path in claimed:
        with contextlib.suppress(FileNotFoundError):
            path.rename(path.with_name(path.name.split(".json.", 1)[0] + ".json"))
