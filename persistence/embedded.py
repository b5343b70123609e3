"""The embedded store: a SecantusDB child process speaking the MongoDB wire protocol.

With no ``MONGODB_URI`` the service starts SecantusDB on ``<data dir>/db`` and connects motor to
it. SecantusDB is GPL-2.0, so it runs as a separate process and is never imported; it comes with
the optional ``embedded`` extra (``pip install 'fincap[embedded]'``; ``make run`` and ``make test``
install it, the MongoDB image leaves it out), and starting it without the extra fails with that
install line.

Several fincap processes may share one data directory (``fincap serve`` plus ``fincap admin …``
or ``fincap demo load``), but only one process may open the storage. The first to need it starts
the server and writes ``server.json`` (pid, port, owner); the others find it there and connect. A
file lock serialises the check-or-start, and a process that started a server only for itself (an
admin command) holds the lock until it has stopped it, so no one connects to a dying server.

The server dies with the process that started it (``parent_death``: stopped by a supervisor when
the owner dies, even by SIGKILL), and lives as long as it does: ``fincap serve`` starts it again
on the same port and files when it dies or its storage engine stops (``SharedStore.restart``,
``persistence.embedded_supervisor``), and announces the new process in ``server.json``.
Should one survive anyway (not Linux), a server whose owner is dead is never joined: the next
process stops it and starts its own, so a restart owns what it runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pymongo

from engines.parent_death import launcher_command
from persistence.lease_owners import pid_alive

STATE_FILE = "server.json"
LOCK_FILE = "embedded.lock"
START_TIMEOUT_S = 30.0
# A clean stop closes WiredTiger's files; past this the server is killed (its journal keeps
# what was acknowledged). Short, so that `fincap serve` stops within its 10 s.
STOP_GRACE_S = 3.0
# How often a stopping server's port is knocked on (``EmbeddedServer._wait_stopped``).
KNOCK_EVERY_S = 0.05
# WiredTiger's word for a fatal error; the server logs it and fails every call from then on.
FATAL_MARKER = b"WT_PANIC"
LOG_READ_BYTES = 1 << 20


INSTALL_HINT = "pip install 'fincap[embedded]'"
# Checked once: located, never imported (a GPL-2.0 program we only run as a child process).
SERVER_INSTALLED = importlib.util.find_spec("secantus") is not None


class EmbeddedStoreError(RuntimeError):
    """The embedded server could not be started or reached."""


class EmbeddedServerMissing(EmbeddedStoreError):
    """The embedded server's package (the ``embedded`` extra) is not installed."""


def require_embedded_server() -> None:
    """``EmbeddedServerMissing`` with the install line unless SecantusDB is installed."""
    if not SERVER_INSTALLED:
        raise EmbeddedServerMissing(
            "MONGODB_URI is not set and the embedded database server is not installed: "
            f"{INSTALL_HINT} (or set MONGODB_URI to a MongoDB deployment)"
        )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def _responds(uri: str, timeout_ms: int = 1500) -> bool:
    client: pymongo.MongoClient = pymongo.MongoClient(
        uri, serverSelectionTimeoutMS=timeout_ms, directConnection=True
    )
    try:
        client.admin.command("ping")
    except pymongo.errors.PyMongoError:
        return False
    finally:
        client.close()
    return True


@dataclass
class EmbeddedServer:
    """A SecantusDB process on ``storage`` ("':memory:'" for a throw-away store)."""

    storage: str
    host: str = "127.0.0.1"
    port: int = 0
    log_path: Path | None = None
    process: subprocess.Popen[bytes] | None = None
    log_offset: int = 0
    # Set once the owner stops for good: a start in progress (a restart, in another thread)
    # gives up, and no new one begins.
    _closing: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def uri(self) -> str:
        return f"mongodb://{self.host}:{self.port}/?directConnection=true"

    def database_uri(self, database: str) -> str:
        """``MONGODB_URI`` for another process (a ``fincap serve``, a worker) to use
        ``database`` on this server."""
        return f"mongodb://{self.host}:{self.port}/{database}?directConnection=true"

    def start(self) -> EmbeddedServer:
        require_embedded_server()
        self.port = self.port or free_port(self.host)
        if self.storage != ":memory:":
            Path(self.storage).mkdir(parents=True, exist_ok=True)
        if self._closing.is_set():
            raise EmbeddedStoreError("embedded store not started: the process is stopping")
        # The server's own log goes to a file: an unread pipe would fill up and stall it.
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL  # noqa: SIM115
        if not isinstance(log, int):
            self.log_offset = log.tell()  # where this run's lines begin (``fatal_error``)
        command = [
            sys.executable,
            "-m",
            "secantus",
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--storage-path",
            self.storage,
            "--standalone",
            "--log-level",
            "WARNING",
        ]
        self.process = subprocess.Popen(
            # Supervised: stopped when we die, even by SIGKILL (SIGTERM, then SIGKILL if it
            # does not exit in time); ``process`` is the supervisor, which stops it on SIGTERM.
            launcher_command(command),
            stdout=log,
            stderr=log,
            start_new_session=True,  # a Ctrl-C in the terminal reaches us, and we stop it cleanly
        )
        if not isinstance(log, int):
            log.close()  # the child keeps its own descriptor
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline and not self._closing.is_set():
            if self.process.poll() is not None:
                where = f"; see {self.log_path}" if self.log_path else ""
                raise EmbeddedStoreError(f"embedded store exited at start{where}")
            if _responds(self.uri, timeout_ms=500):
                return self
            time.sleep(0.1)
        self.stop()
        if self._closing.is_set():
            raise EmbeddedStoreError("embedded store start abandoned: the process is stopping")
        raise EmbeddedStoreError(f"embedded store did not answer within {START_TIMEOUT_S:.0f}s")

    @property
    def running(self) -> bool:
        """Whether the server's process (its supervisor) is alive."""
        return self.process is not None and self.process.poll() is None

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Stop the server: SIGTERM, SIGKILL after ``grace_s`` (WiredTiger's journal makes a
        kill safe for what was acknowledged; the grace lets it close cleanly)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self._wait_stopped(self.process, grace_s)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def _wait_stopped(self, process: subprocess.Popen[bytes], grace_s: float) -> None:
        """Wait for the server to exit after SIGTERM, knocking on its port meanwhile.

        SecantusDB's stop closes its listening socket, then waits up to 2 s for its accept
        thread, which stays blocked in ``accept()`` until a client connects: every clean stop
        took 2 s (a ``fincap admin`` command on its own store, each stop of ``fincap serve``).
        A connection opened and closed at once wakes the thread, and the stop goes on at once.
        A knock that arrives before the stop began is an ordinary connection the server drops."""
        deadline = time.monotonic() + grace_s
        while True:
            try:
                process.wait(timeout=KNOCK_EVERY_S)
                return
            except subprocess.TimeoutExpired:
                if time.monotonic() >= deadline:
                    raise
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), timeout=KNOCK_EVERY_S),
            ):
                pass

    def close(self) -> None:
        """Stop the server for good: a ``start`` running in another thread (a restart) gives
        up and stops what it started."""
        self._closing.set()
        self.stop()

    def fatal_error(self) -> str | None:
        """What the server logged of a fatal storage error since it started (WiredTiger's
        panic: the process lives on, answers ``ping`` and fails every read and write), or
        None. Reads the log from where it was last read."""
        if self.log_path is None:
            return None
        try:
            with open(self.log_path, "rb") as log:
                # Lines are read whole: keep a marker split over two reads.
                log.seek(max(0, self.log_offset - len(FATAL_MARKER)))
                text = log.read(LOG_READ_BYTES)
                self.log_offset = log.tell()
        except OSError:
            return None
        if FATAL_MARKER in text:
            return "the database's storage engine stopped after a fatal error (WT_PANIC)"
        return None


@contextlib.contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / LOCK_FILE, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _read_state(data_dir: Path) -> dict[str, object] | None:
    try:
        state = json.loads((data_dir / STATE_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return None
    return state if isinstance(state, dict) else None


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def running_server_uri(data_dir: Path) -> str | None:
    """The URI of a live server already serving ``data_dir`` for a live ``fincap serve``."""
    state = _read_state(data_dir)
    if state is None:
        return None
    uri = state.get("uri")
    if not isinstance(uri, str) or not pid_alive(_int(state.get("pid"))):
        return None
    # A server whose owner died is an orphan about to be stopped: nobody may join it.
    if not pid_alive(_int(state.get("owner"))):
        return None
    return uri if _responds(uri) else None


def _is_our_server(pid: int, storage: Path) -> bool:
    """Whether ``pid`` is a SecantusDB process on ``storage`` (not a reused pid)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"secantus" in argv and str(storage).encode() in argv


def stop_orphan(data_dir: Path) -> None:
    """Stop the server a dead ``fincap serve`` left behind on ``data_dir`` (it would otherwise
    keep the storage and be joined by the next one, which could not stop it)."""
    state = _read_state(data_dir)
    if state is None:
        return
    pid, owner = _int(state.get("pid")), _int(state.get("owner"))
    if pid and not pid_alive(owner) and _is_our_server(pid, data_dir / "db"):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(FileNotFoundError):
        (data_dir / STATE_FILE).unlink()


@dataclass
class SharedStore:
    """The embedded store of a data directory as one process sees it: its ``uri``, and the
    ``server`` when this process started it and lets others join (``fincap serve``), which it
    then keeps running (``restart``, ``persistence.embedded_supervisor``)."""

    data_dir: Path
    uri: str
    server: EmbeddedServer | None = None

    def publish(self) -> None:
        """Announce the server in ``server.json`` (pid, uri, owner) for other processes."""
        assert self.server is not None and self.server.process is not None
        state = {"pid": self.server.process.pid, "uri": self.uri, "owner": os.getpid()}
        (self.data_dir / STATE_FILE).write_text(json.dumps(state))

    def restart(self) -> None:
        """Start the server again on the same port and files (after it died, or reported a
        fatal error): the driver's clients reconnect by themselves. Under the data
        directory's lock, so that no other process starts a server of its own meanwhile."""
        assert self.server is not None
        with _locked(self.data_dir):
            self.server.stop()
            self.server.start()
            self.publish()


@contextlib.contextmanager
def shared_embedded_store(data_dir: Path, *, publish: bool) -> Iterator[SharedStore]:
    """The embedded store of ``data_dir``, started if nobody serves it.

    ``publish=True`` (``fincap serve``) announces the server in ``server.json`` so other
    processes join it; ``publish=False`` (admin commands) keeps a private server under the lock.
    """
    data_dir = data_dir.resolve()
    lock = _locked(data_dir)
    lock.__enter__()
    locked = True
    server: EmbeddedServer | None = None
    try:
        uri = running_server_uri(data_dir)
        shared = SharedStore(data_dir, uri or "")
        if uri is None:
            stop_orphan(data_dir)
            server = EmbeddedServer(
                storage=str(data_dir / "db"), log_path=data_dir / "embedded.log"
            ).start()
            shared = SharedStore(data_dir, server.uri, server if publish else None)
            if publish:
                shared.publish()
        if server is None or publish:
            lock.__exit__(None, None, None)
            locked = False
        yield shared
    finally:
        if server is not None:
            if publish:
                with contextlib.suppress(FileNotFoundError):
                    (data_dir / STATE_FILE).unlink()
            server.close()
        if locked:
            lock.__exit__(None, None, None)
