"""Shared helpers of the statement readers: text decoding, amounts, names."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from engines.statements.model import StatementError

_SPACES = re.compile(r"\s+")


def decode_text(data: bytes) -> str:
    """The file's text: UTF-8 (with or without a byte-order mark), else Windows-1252, which
    German and British banks still export; every byte decodes in one of the two."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def one_line(value: str | None, limit: int = 500) -> str | None:
    """Whitespace collapsed, bounded, ``None`` when empty."""
    if value is None:
        return None
    text = _SPACES.sub(" ", value).strip()
    return text[:limit] or None


def parse_amount(text: str, decimal_comma: bool | None = None) -> Decimal:
    """A decimal amount written either way: ``1.234,56``, ``1,234.56``, ``-12.5``, ``12,50-``.

    ``decimal_comma`` says which separator is the decimal one; ``None`` guesses from the text
    (the last separator followed by one or two digits). Raises ``ValueError`` with the reason.
    """
    raw = text.strip().replace("\u00a0", "").replace(" ", "").replace("'", "")
    negative = False
    if raw.endswith("-") or (raw.startswith("(") and raw.endswith(")")):
        negative, raw = True, raw.strip("()").rstrip("-")
    if raw.startswith(("+", "-")):
        negative, raw = raw[0] == "-", raw[1:]
    for symbol in ("€", "$", "£", "EUR", "USD", "GBP", "CHF"):
        raw = raw.replace(symbol, "")
    if not raw or not re.fullmatch(r"[0-9.,]+", raw):
        raise ValueError(f"'{text.strip()}' is not an amount")
    if decimal_comma is None:
        match = re.search(r"[.,](\d{1,2})$", raw)
        decimal_comma = bool(match) and raw[match.start()] == ","  # type: ignore[union-attr]
    whole, point = (",", ".") if decimal_comma else (".", ",")
    if raw.count(whole) > 1 or (whole in raw and not re.search(rf"\{whole}\d{{1,2}}$", raw)):
        raise ValueError(f"'{text.strip()}' is not an amount with '{whole}' as decimal separator")
    normal = raw.replace(point, "").replace(whole, ".")
    try:
        value = Decimal(normal)
    except InvalidOperation:
        raise ValueError(f"'{text.strip()}' is not an amount") from None
    if abs(value) >= Decimal(10) ** 13:
        raise ValueError(f"'{text.strip()}' is larger than any amount fincap stores")
    return -value if negative else value


CURRENCY = re.compile(r"^[A-Z]{3}$")


def currency_code(text: str | None, place: str) -> str:
    code = (text or "").strip().upper()
    if not CURRENCY.match(code):
        raise StatementError(place, f"'{text}' is not a three-letter currency code")
    return code
