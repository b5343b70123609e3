"""How many examples each property test draws: the ``ci`` profile by default, ``full`` on demand.

    FINCAP_HYPOTHESIS=full .venv/bin/python -m pytest tests/documents tests/hardening

Each property names its full count (``examples(150)``): what it ran with before CI had a
profile, and what ``full`` still runs. ``ci`` draws a quarter of that (at least 10), which keeps
every property and every explicit example in each run while the suite stays within its time;
the search space is explored fully whenever someone asks for it (before a release, after
changing the code a property covers). Unset, ``@given`` tests without ``examples`` draw the
profile's default.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILES = ("ci", "full")
PROFILE = os.environ.get("FINCAP_HYPOTHESIS", "ci")
if PROFILE not in PROFILES:
    raise RuntimeError(f"FINCAP_HYPOTHESIS={PROFILE!r}: expected one of {', '.join(PROFILES)}")

CI_SHARE = 4  # ci draws 1/CI_SHARE of a property's full count
CI_FLOOR = 10

settings.register_profile("full", max_examples=100)
settings.register_profile("ci", max_examples=100 // CI_SHARE)
settings.load_profile(PROFILE)


def examples(full: int) -> int:
    """``max_examples`` for a property whose full count is ``full``, under the loaded profile."""
    return full if PROFILE == "full" else max(CI_FLOOR, full // CI_SHARE)
