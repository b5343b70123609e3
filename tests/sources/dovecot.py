"""A real IMAP server for the tests: Dovecot (Debian's ``dovecot-imapd``, installed by
``make install-test``) with its own configuration, users and mail in a temporary directory."""

from __future__ import annotations

import contextlib
import imaplib
import os
import pwd
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path

CONFIG = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {root}/dovecot.log
listen = 127.0.0.1
protocols = imap
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
# A refused login answers at once: the tests assert the refusal, not Dovecot's defence against
# guessing (2 s before each "authentication failed", and the anvil's penalty below).
auth_failure_delay = 0
mail_location = maildir:~/Maildir
first_valid_uid = 1
default_login_user = {login_user}
default_internal_user = {internal_user}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root}/passwd
}}
userdb {{
  driver = static
  args = uid={uid} gid={gid} home={root}/home/%u
}}
service imap-login {{
  inet_listener imap {{
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
  chroot =
}}
service anvil {{
  chroot =
  # Without its penalty socket the anvil keeps no tally of an address's failed logins: each
  # failure from 127.0.0.1 used to slow the next login, failed or not, by 4 s, then 8 s.
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
"""


def dovecot_binary() -> str | None:
    return shutil.which("dovecot") or (
        "/usr/sbin/dovecot" if os.access("/usr/sbin/dovecot", os.X_OK) else None
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Imap:
    """A running Dovecot: where it listens and the users it knows."""

    host: str
    port: int
    users: dict[str, str]
    root: Path

    def append(self, user: str, mail: EmailMessage | bytes) -> None:
        """Put a message into the user's INBOX over IMAP (APPEND), as a mail server would."""
        data = mail if isinstance(mail, bytes) else mail.as_bytes()
        client = imaplib.IMAP4(self.host, self.port, timeout=10)
        try:
            client.login(user, self.users[user])
            status, _ = client.append(
                "INBOX", None, None, data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            )
            assert status == "OK"
        finally:
            client.logout()


@contextlib.contextmanager
def running_dovecot(root: Path, users: dict[str, str]) -> Iterator[Imap]:
    binary = dovecot_binary()
    assert binary is not None
    port = free_port()
    if os.getuid() == 0:
        # Dovecot refuses to run mail processes as root: use its own unprivileged accounts.
        owner = pwd.getpwnam("dovecot")
        uid, gid = owner.pw_uid, owner.pw_gid
        login_user = "dovenull" if _exists("dovenull") else "dovecot"
        internal_user = "dovecot"
    else:
        uid, gid = os.getuid(), os.getgid()
        login_user = internal_user = pwd.getpwuid(uid).pw_name
    for sub in ("run", "state", "home"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "passwd").write_text(
        "".join(f"{user}:{{PLAIN}}{password}\n" for user, password in users.items())
    )
    os.chown(root / "home", uid, gid)
    (root / "dovecot.conf").write_text(
        CONFIG.format(
            root=root,
            port=port,
            uid=uid,
            gid=gid,
            login_user=login_user,
            internal_user=internal_user,
        )
    )
    process = subprocess.Popen(
        [binary, "-F", "-c", str(root / "dovecot.conf")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if process.poll() is not None or time.monotonic() > deadline:
                log = (root / "dovecot.log").read_text() if (root / "dovecot.log").exists() else ""
                err = process.stderr.read().decode() if process.stderr else ""
                raise RuntimeError(f"dovecot did not start: {err} {log[-2000:]}")
            time.sleep(0.1)
        yield Imap("127.0.0.1", port, users, root)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


def _exists(user: str) -> bool:
    try:
        pwd.getpwnam(user)
    except KeyError:
        return False
    return True
