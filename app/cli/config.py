"""Where the CLI client calls and as whom: the config file, the environment, the flags.

Precedence, strongest first: ``--host``/``--org`` on the command, ``FINCAP_HOST`` /
``FINCAP_API_KEY`` / ``FINCAP_ORG_ID`` (read through ``app.host.config.ClientSettings``), then
``~/.fincap/config.json`` (written by ``fincap auth login`` and ``fincap workspace use``, mode
0600 because it holds a key), then the default host ``http://127.0.0.1:8000``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from app.host.config import ClientSettings, ConfigError

DEFAULT_HOST = "http://127.0.0.1:8000"
CONFIG_KEYS = ("host", "apiKey", "orgId")


def config_path() -> Path:
    """``~/.fincap/config.json`` (``HOME`` decides where ``~`` is)."""
    return Path.home() / ".fincap" / "config.json"


def read_config() -> dict[str, Any]:
    """The saved configuration; an unreadable file is a usage error that names it."""
    path = config_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"cannot read {path}: {exc}") from None
    if not isinstance(data, dict):
        raise click.UsageError(f"{path} is not a JSON object; remove it and log in again")
    return {key: data[key] for key in CONFIG_KEYS if isinstance(data.get(key), str)}


def write_config(**changes: str | None) -> Path:
    """Merge ``changes`` into the config file (None removes a key); written with mode 0600."""
    path = config_path()
    data = read_config()
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Created 0600 before the key is written: it is never readable by others, not even briefly.
    descriptor = os.open(path.with_suffix(".tmp"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(data, handle, indent=2)
    os.chmod(path.with_suffix(".tmp"), 0o600)
    os.replace(path.with_suffix(".tmp"), path)
    return path


def environment() -> ClientSettings:
    try:
        return ClientSettings()
    except Exception as exc:  # pydantic's ValidationError; ClientSettings has only strings
        raise click.UsageError(f"configuration: {ConfigError(str(exc))}") from None


@dataclass(frozen=True)
class Target:
    """The server, the key and the workspace of one call, each with where it came from."""

    host: str
    api_key: str | None
    org_id: str | None
    sources: dict[str, str]

    @property
    def masked_key(self) -> str:
        if not self.api_key:
            return "none"
        return self.api_key[:7] + "…" + self.api_key[-4:]


def resolve(host: str | None = None, org: str | None = None, api_key: str | None = None) -> Target:
    """The call's target from flags, environment and config file, in that order."""
    env = environment()
    saved = read_config()
    sources: dict[str, str] = {}

    def pick(name: str, flag: str | None, env_value: str | None, saved_key: str) -> str | None:
        for source, value in (("flag", flag), ("environment", env_value)):
            if value:
                sources[name] = source
                return value
        if saved.get(saved_key):
            sources[name] = str(config_path())
            return saved[saved_key]
        return None

    chosen_host = pick("host", host, env.host, "host") or DEFAULT_HOST
    sources.setdefault("host", "default")
    return Target(
        host=normalize_host(chosen_host),
        api_key=pick("apiKey", api_key, env.api_key, "apiKey"),
        org_id=pick("orgId", org, env.org_id, "orgId"),
        sources=sources,
    )


def normalize_host(host: str) -> str:
    """``localhost:8000`` → ``http://localhost:8000``; no trailing slash."""
    host = host.strip().rstrip("/")
    if "://" not in host:
        host = "http://" + host
    return host
