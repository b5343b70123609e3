"""Identifier and clock helpers shared by the collection modules."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime


def new_id(prefix: str) -> str:
    """A prefixed random identifier, e.g. ``org_3fK…`` (96 random bits, URL-safe)."""
    return f"{prefix}_{secrets.token_urlsafe(12)}"


def utcnow() -> datetime:
    """Now, in UTC, truncated to milliseconds: BSON dates keep no more."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)
