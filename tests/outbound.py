"""What the tests' local fakes need from the outbound policy: their loopback address, admitted
explicitly (the server's default admits public addresses only)."""

from __future__ import annotations

from engines.outbound import OutboundPolicy

# Every fake server of the tests listens on this address (FINCAP_OUTBOUND_ALLOW's value).
LOOPBACK_FAKES = "127.0.0.1"


def loopback_fakes() -> OutboundPolicy:
    """A policy admitting the tests' fake servers on 127.0.0.1 (and nothing else private)."""
    return OutboundPolicy.from_setting(LOOPBACK_FAKES)
