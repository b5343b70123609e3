"""Where an anonymous request comes from, as the throttles count it.

Registration and sign-in are open to anyone, so their limits are per client address. An IPv4
address counts alone; an IPv6 address counts with its /64 (one customer's link: a host may
take any address inside it, so counting single IPv6 addresses would count nothing). Only a
digest of that key is stored.

Behind a reverse proxy the peer is the proxy; the client is in ``X-Forwarded-For``. That header
is anyone's to write, so it is believed only from the proxies named in
``FINCAP_TRUSTED_PROXIES`` (``TrustedProxies``): the client is the right-most address in it that
is not one of them. (uvicorn believed it from any loopback peer by default; ``fincap serve``
turns that off, so this is the one place that reads it.)
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network


def address_key(host: str | None) -> str:
    """The digest the throttles count ``host`` (a client address) under."""
    text = (host or "").strip()
    try:
        address = ip_address(text.split("%", 1)[0])
    except ValueError:
        key = text.lower() or "unknown"  # a test transport's name, or none at all
    else:
        mapped = getattr(address, "ipv4_mapped", None)
        if mapped is not None:
            key = str(mapped)
        elif address.version == 6:
            key = str(IPv6Network(f"{address}/64", strict=False))
        else:
            key = str(address)
    return hashlib.sha256(key.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class TrustedProxies:
    """The networks whose ``X-Forwarded-For`` is believed (none by default)."""

    networks: tuple[IPv4Network | IPv6Network, ...] = ()

    @classmethod
    def from_setting(cls, text: str | None) -> TrustedProxies:
        """``10.0.0.0/8, 127.0.0.1, fd00::/8``; a ``ValueError`` names an entry that is not
        an address or network."""
        networks = []
        for entry in (text or "").split(","):
            if entry.strip():
                try:
                    networks.append(ip_network(entry.strip(), strict=False))
                except ValueError:
                    raise ValueError(f"not an address or network: {entry.strip()!r}") from None
        return cls(tuple(networks))

    def trusts(self, host: str | None) -> bool:
        try:
            address = ip_address((host or "").split("%", 1)[0])
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    def client(self, peer: str | None, forwarded_for: str | None) -> str | None:
        """The client's address: the peer, unless the peer is a trusted proxy; then the
        right-most address of ``X-Forwarded-For`` that is not a trusted proxy."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        hops = [hop.strip() for hop in forwarded_for.split(",") if hop.strip()]
        for hop in reversed(hops):
            if not self.trusts(hop):
                return hop
        return hops[0] if hops else peer
