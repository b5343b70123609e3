"""The key that makes importing a statement twice add nothing.

A line the bank identifies (OFX FITID, CAMT AcctSvcrRef, MT940's bank reference, a CSV id
column) is keyed by the account and that id. A line without one is keyed by a fingerprint of
what the bank booked — account, booking date, amount, currency, the reference and counterparty
normalised (case, spaces) — and its occurrence among identical lines of the same statement, so
two real coffees of the same price on the same day stay two, and the same statement read again
(in any order) gives the same keys.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from engines.statements.model import StatementLine

_NOT_WORD = re.compile(r"[^0-9a-z]+")


def normalise(text: str | None) -> str:
    """Lower case, no accents or punctuation, one space between words (``Müller & Söhne``
    → ``muller sohne``)."""
    if not text:
        return ""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return _NOT_WORD.sub(" ", plain).strip()


def _digest(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def line_keys(lines: list[StatementLine], account: str | None) -> list[str]:
    """One key per line, in order; ``account`` is the statement's when a line names none."""
    seen: dict[str, int] = {}
    keys = []
    for line in lines:
        owner = normalise(line.account or account)
        if line.bank_id:
            keys.append("id:" + _digest(owner, line.bank_id.strip()))
            continue
        identity = _digest(
            owner,
            line.booking_date.isoformat(),
            f"{line.amount:.2f}",
            line.currency,
            normalise(line.reference),
            normalise(line.counterparty),
        )
        occurrence = seen.get(identity, 0)
        seen[identity] = occurrence + 1
        keys.append(f"fp:{identity}:{occurrence}")
    return keys
