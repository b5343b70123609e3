"""Where an anonymous request comes from, as the throttles count it.

Registration and sign-in are open to anyone, so their limits are per client address. An IPv4
address counts alone; an IPv6 address counts with its /64 (one customer's link: a host may
take any address inside it, so counting single IPv6 addresses would count nothing). Only a
digest of that key is stored.
"""

from __future__ import annotations

import hashlib
from ipaddress import IPv6Network, ip_address


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
