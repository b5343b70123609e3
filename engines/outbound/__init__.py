"""One outbound policy for every connection the server opens on a tenant's behalf.

``OutboundPolicy`` (``policy.py``) resolves, checks and connects; ``addresses.py`` says which
addresses are public; ``http.py`` puts the policy under ``httpx``; ``refusal.py`` is how both say
no. Callers take the policy from ``Services.outbound`` (built from ``FINCAP_OUTBOUND_ALLOW``) and
never open a socket or an HTTP client of their own.
"""

from engines.outbound.policy import OutboundPolicy
from engines.outbound.refusal import Unreachable, unreachable_text

__all__ = ["OutboundPolicy", "Unreachable", "unreachable_text"]
