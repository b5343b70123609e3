"""A name people wrote ("Shell", "Deutsche Bahn") as a case-insensitive regex of whole words,
with the merchant's known aliases (``lexicon.MERCHANT_ALIASES``): what a rule's merchant
condition and a transaction rule's payee condition match."""

from __future__ import annotations

import re
from collections.abc import Iterable

from engines.rules.lexicon import MERCHANT_ALIASES


def _word_pattern(name: str) -> tuple[str, str, str]:
    """(left boundary, escaped words, right boundary) of a name in a pattern."""
    escaped = re.sub(r"([^\w\s])", r"\\\1", name.lower())
    escaped = re.sub(r"\s+", " ", escaped)
    left = r"\b" if name[:1].isalnum() else ""
    right = r"\b" if name[-1:].isalnum() else ""
    return left, escaped, right


def merchant_pattern(names: Iterable[str]) -> str:
    """A case-insensitive regex matching any of ``names`` (and their known aliases) as words."""
    variants: list[str] = []
    for name in names:
        for variant in (name, *MERCHANT_ALIASES.get(name.lower(), ())):
            if variant.lower() not in (v.lower() for v in variants):
                variants.append(variant)
    escaped = []
    for variant in variants:
        escaped.append(_word_pattern(variant))
    if len(escaped) == 1:
        left, body, right = escaped[0]
        return f"{left}{body}{right}"
    bounded = all(left and right for left, _, right in escaped)
    bodies = "|".join(body for _, body, _ in escaped)
    if bounded:
        return rf"\b(?:{bodies})\b"
    return f"(?:{bodies})"
