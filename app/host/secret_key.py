"""Where the server secret comes from: ``FINCAP_SECRET_KEY``, else ``<data dir>/secret.key``.

On one machine the generated file keeps cursors (and later CSRF tokens, encrypted integration
tokens) valid across restarts. Several processes on one database (``MONGODB_URI``) must share a
secret, so operators set ``FINCAP_SECRET_KEY`` there; without it each machine would have its own
and a cursor from one would be refused by another.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from app.host.config import Settings
from engines.keyring import Keyring, KeyringError, new_secret_text

SECRET_FILE = "secret.key"
log = logging.getLogger("fincap.secrets")


class SecretKeyError(RuntimeError):
    """The configured or stored secret cannot be used; the message says how to fix it."""


def load_keyring(settings: Settings) -> Keyring:
    """The keyring of ``FINCAP_SECRET_KEY``, else of the data directory's key file (created,
    mode 0600, the first time)."""
    if settings.secret_key:
        try:
            return Keyring.from_text(settings.secret_key.get_secret_value())
        except KeyringError as exc:
            raise SecretKeyError(f"FINCAP_SECRET_KEY: {exc}") from None
    if settings.mongodb_uri:
        log.warning(
            "FINCAP_SECRET_KEY is not set: this process keeps its own key in its data "
            "directory, so cursors it signs are refused by other processes on the same "
            "database; set FINCAP_SECRET_KEY to one value on every process"
        )
    path = settings.data_dir / SECRET_FILE
    try:
        return Keyring.from_text(_read_or_create(path))
    except KeyringError as exc:
        raise SecretKeyError(f"{path}: {exc}; delete the file to generate a new key") from None


def _read_or_create(path: Path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        # Written aside, then linked into place: link() fails if the name exists, so when two
        # processes start at once exactly one key wins and nobody reads a half-written file.
        text = new_secret_text()
        draft = path.with_name(f".{path.name}.{os.getpid()}")
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(text + "\n")
        try:
            os.link(draft, path)
            log.info("generated a new secret key", extra={"path": str(path)})
        except FileExistsError:
            pass
        finally:
            draft.unlink()
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        log.warning(
            "the secret key file is readable by other users; chmod 600 it",
            extra={"path": str(path), "mode": oct(mode)},
        )
    return path.read_text()
