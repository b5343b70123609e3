"""What the tests' local fakes need from the outbound policy: their loopback address, admitted
explicitly (the server's default admits public addresses only); and targets that fail in each
way a connection can fail, to show the failures read alike."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from engines.outbound import OutboundPolicy
from tests.live import refused_address

# Every fake server of the tests listens on this address (FINCAP_OUTBOUND_ALLOW's value).
LOOPBACK_FAKES = "127.0.0.1"


def loopback_fakes() -> OutboundPolicy:
    """A policy admitting the tests' fake servers on 127.0.0.1 (and nothing else private)."""
    return OutboundPolicy.from_setting(LOOPBACK_FAKES)


def resolving(answers: dict[str, list[str]]) -> Callable[[str, int], list[str]]:
    """A resolver (DNS) answering from ``answers``; any other name does not exist."""

    def resolve(host: str, port: int) -> list[str]:
        if host not in answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers[host]

    return resolve


@contextmanager
def raw_server(behaviour: str) -> Iterator[int]:
    """A TCP server on 127.0.0.1 that accepts and then stays silent (``silent``) or sends
    another service's banner and hangs up (``banner``)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            if behaviour == "banner":
                conn.sendall(b"SSH-2.0-OpenSSH_9.6 internal-build-host\r\n")
                conn.close()
            else:
                held.append(conn)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


@contextmanager
def target(kind: str) -> Iterator[tuple[str, int]]:
    """(host, port) of a target that fails in the way ``kind`` names."""
    if kind == "refused by the policy":
        yield "10.255.255.1", 8080
    elif kind == "closed port":
        with refused_address() as address:
            host, port = address.rsplit(":", 1)
            yield host, int(port)
    else:
        with raw_server("silent" if kind == "timeout" else "banner") as port:
            yield "127.0.0.1", port


FAILURES = ["refused by the policy", "closed port", "timeout", "banner"]
