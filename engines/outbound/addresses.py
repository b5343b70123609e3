"""Which IP addresses the server may connect to on a tenant's behalf: public unicast ones only.

A tenant names a host (an IMAP server, a webhook URL); a resolver turns it into addresses. An
address is refused when it reaches the server itself or its private network: loopback,
private (RFC 1918, unique-local), link-local (cloud metadata at 169.254.169.254), shared
(CGNAT, 100.64/10), multicast, unspecified (``0.0.0.0`` reaches the local host on Linux),
reserved, documentation and benchmarking ranges, the deprecated IPv6 site-local range, and
any IPv6 form that carries one of those IPv4 addresses inside it (mapped ``::ffff:a.b.c.d``,
compatible ``::a.b.c.d``, 6to4, Teredo, NAT64).

``literal_address`` reads an address written in any notation resolvers accept (``127.1``,
``2130706433``, ``0x7f.1``, ``0177.0.0.1``, ``[::1]``) without asking DNS, for checks that
must not resolve (a webhook URL when a rule is saved).
"""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

IPAddress = IPv4Address | IPv6Address

SHARED = IPv4Network("100.64.0.0/10")
# IPv6 prefixes that translate to an IPv4 address in their last 32 bits (RFC 6052, RFC 8215).
NAT64 = (IPv6Network("64:ff9b::/96"), IPv6Network("64:ff9b:1::/48"))
# Names that always mean this machine (RFC 6761 §6.3, and the usual /etc/hosts aliases).
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})

_KINDS = (
    ("is_unspecified", "unspecified"),
    ("is_loopback", "loopback"),
    ("is_link_local", "link-local"),
    ("is_multicast", "multicast"),
    ("is_private", "private"),
    ("is_reserved", "reserved"),
)


def embedded_ipv4(address: IPv6Address) -> IPv4Address | None:
    """The IPv4 address an IPv6 address carries, when it is one of the forms that do."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]  # (server, client): the client is where packets go
    value = int(address)
    if any(address in prefix for prefix in NAT64) or (value >> 32 == 0 and value > 1):
        return IPv4Address(value & 0xFFFFFFFF)  # NAT64, or IPv4-compatible ::a.b.c.d
    return None


def why_not_public(address: IPAddress) -> str | None:
    """None for a public unicast address; otherwise what it is (words for the server log)."""
    if isinstance(address, IPv6Address):
        inner = embedded_ipv4(address)
        if inner is not None and (reason := why_not_public(inner)) is not None:
            return f"{reason} inside the IPv6 address {address}"
        if address.is_site_local:
            return f"site-local address {address}"
    for attribute, kind in _KINDS:
        if getattr(address, attribute):
            return f"{kind} address {address}"
    if isinstance(address, IPv4Address) and address in SHARED:
        return f"shared (CGNAT) address {address}"
    if not address.is_global:
        return f"non-public address {address}"
    return None


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` spells without DNS (every notation ``getaddrinfo`` accepts for
    IPv4, IPv6 with or without brackets and zone), or None when it is a name."""
    text = host.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    try:
        return ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    # inet_aton is the C library's reader: it accepts 127.1, 2130706433, 0x7f.1 and 0177.0.0.1
    # exactly as the resolver does. Only digits, dots and hex letters can spell an address.
    if not text or any(ch not in "0123456789abcdefxABCDEFX." for ch in text):
        return None
    try:
        return IPv4Address(socket.inet_aton(text))
    except OSError:
        return None


def local_name(host: str) -> bool:
    """Whether ``host`` is a name that always means this machine (``localhost``,
    ``*.localhost``)."""
    name = host.strip().rstrip(".").lower()
    return name in LOCAL_NAMES or name.endswith(".localhost")


def parse_address(text: str) -> IPAddress:
    """An address a resolver answered (IPv6 may carry a ``%zone``)."""
    return ip_address(text.split("%", 1)[0])
