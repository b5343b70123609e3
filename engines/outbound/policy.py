"""The outbound policy: resolve a host once, check every address, connect to a checked one.

Every connection the server opens on a tenant's behalf goes through one ``OutboundPolicy``
(IMAP mailboxes, rule webhooks, the e-mail relay, the rules' language model, the accounting
connectors, WhatsApp Graph). It resolves the host name itself, refuses the whole host when any
address it resolves to is not public (``addresses.why_not_public``) unless the allow-list
admits it, and hands back the checked addresses: the caller dials one of those, never the name
again, so a DNS answer that changes between the check and the connection (rebinding) changes
nothing.

Every refusal and every connection failure reads the same to the caller, ``could not connect
to <host>:<port>``: whether a port was closed, filtered, timed out or answered with some other
service's banner is written to the server log only, so the API cannot be used to map the
network the server sits in.

The allow-list (``FINCAP_OUTBOUND_ALLOW``) names networks (``10.0.0.0/8``, ``127.0.0.1``,
``fd00::/8``) whose addresses are admitted whatever name led to them, and host names
(``mail.internal``, ``localhost``) admitted with whatever they resolve to. It is the one way to
reach a private address: self-hosters list their own relay or mail server there, tests their
loopback fakes. The operator's own endpoints (connector base URLs, the relay, Graph, the
language model) get no exception: public ones pass as they are, a private one is listed.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_network
from typing import TYPE_CHECKING

from engines.outbound.addresses import (
    IPAddress,
    literal_address,
    local_name,
    parse_address,
    why_not_public,
)
from engines.outbound.refusal import refused

if TYPE_CHECKING:
    import ssl

    import httpx

# (host, port) → the addresses it resolves to, as text. Blocking; async callers use a thread.
Resolver = Callable[[str, int], Sequence[str]]
Network = IPv4Network | IPv6Network

_HOST_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-.")


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``getaddrinfo`` gives for a TCP connection to ``host``, in its order."""
    found: list[str] = []
    for *_, sockaddr in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        text = str(sockaddr[0])
        if text not in found:
            found.append(text)
    return found


def normal_host(host: str) -> str:
    """A host as compared with the allow-list: lower case, no brackets, no final dot."""
    text = host.strip().lower()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return text.rstrip(".") if text != "." else text


@dataclass(frozen=True)
class OutboundPolicy:
    """Public addresses only, plus what the allow-list admits. The default admits nothing."""

    networks: tuple[Network, ...] = ()
    hosts: frozenset[str] = frozenset()
    resolver: Resolver = field(default=system_resolver, compare=False)

    @classmethod
    def allowing(cls, entries: Iterable[str], resolver: Resolver | None = None) -> OutboundPolicy:
        """A policy admitting ``entries`` (networks, addresses or host names); ValueError
        naming the first entry that is none of those."""
        networks: list[Network] = []
        hosts: set[str] = set()
        for raw in entries:
            entry = raw.strip()
            if not entry:
                continue
            try:
                networks.append(ip_network(normal_host(entry), strict=False))
                continue
            except ValueError:
                pass
            name = normal_host(entry)
            if literal_address(name) is not None:
                # 127.1 or 2130706433 in the list: the address it spells.
                networks.append(ip_network(literal_address(name)))  # type: ignore[arg-type]
            elif name and set(name) <= _HOST_NAME_CHARS and ".." not in name:
                hosts.add(name)
            else:
                raise ValueError(f"{entry!r} is neither a network, an address nor a host name")
        return cls(tuple(networks), frozenset(hosts), resolver or system_resolver)

    @classmethod
    def from_setting(cls, text: str | None) -> OutboundPolicy:
        """The policy of ``FINCAP_OUTBOUND_ALLOW`` (entries separated by commas or spaces)."""
        return cls.allowing((text or "").replace(",", " ").split())

    def admits(self, host: str, address: IPAddress) -> bool:
        """Whether connecting to ``address``, found for ``host``, is allowed."""
        if normal_host(host) in self.hosts:
            return True
        if any(address in network for network in self.networks):
            return True
        return why_not_public(address) is None

    def literal_refusal(self, host: str) -> str | None:
        """Without asking DNS: why ``host`` can never be reached (an address or a local name
        the policy refuses), else None. For checks when something is saved; the connection
        itself is checked again, after resolution."""
        name = normal_host(host)
        if name in self.hosts:
            return None
        address = literal_address(name)
        if address is not None:
            if self.admits(name, address):
                return None
            return why_not_public(address) or "not allowed"
        if local_name(name):
            return "a name of this server"
        return None

    # -- resolving and connecting ---------------------------------------------------------

    def checked_addresses(self, host: str, port: int) -> list[str]:
        """The addresses to dial for ``host`` (blocking: it resolves). ``Unreachable`` when
        the name does not resolve, or resolves to any address the policy refuses (a name
        answering one public and one private address is refused whole)."""
        name = normal_host(host)
        try:
            answers = list(self.resolver(name, port))
            addresses = [parse_address(text) for text in answers]
        except (OSError, UnicodeError, ValueError) as exc:
            raise refused(host, port, f"resolution failed: {exc}") from None
        if not addresses:
            raise refused(host, port, "the name resolved to no address")
        for address in addresses:
            if not self.admits(name, address):
                raise refused(host, port, why_not_public(address) or "not allowed")
        return [str(address) for address in addresses]

    async def checked_addresses_async(self, host: str, port: int) -> list[str]:
        """``checked_addresses`` with the resolution in a worker thread."""
        return await asyncio.to_thread(self.checked_addresses, host, port)

    def connect(self, host: str, port: int, timeout: float | None) -> socket.socket:
        """A TCP socket to a checked address of ``host`` (blocking; for ``imaplib`` and
        ``smtplib``, whose TLS then names ``host`` itself). ``Unreachable`` otherwise."""
        failure: OSError | None = None
        for address in self.checked_addresses(host, port):
            try:
                return socket.create_connection((address, port), timeout)
            except OSError as exc:
                failure = exc
        raise refused(host, port, f"connection failed: {failure}")

    def http_client(
        self, *, timeout: float | httpx.Timeout, verify: ssl.SSLContext | bool = True
    ) -> httpx.AsyncClient:
        """An ``httpx`` client whose every connection goes through this policy (no proxies
        from the environment, no redirects followed)."""
        from engines.outbound.http import policy_client

        return policy_client(self, timeout=timeout, verify=verify)
