"""Text normalisation shared by indexing and ranking: one tokenizer for both sides."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[0-9a-z]+")
MIN_TOKEN = 2


def fold(text: str) -> str:
    """Lower-case and strip accents: 'Café Müller' → 'cafe muller'."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokenize(text: str | None) -> list[str]:
    """Words of ``text`` (folded, alphanumeric, at least two characters), in order."""
    if not text:
        return []
    return [token for token in _WORD.findall(fold(text)) if len(token) >= MIN_TOKEN]
