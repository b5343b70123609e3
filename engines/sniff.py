"""What a file really is, from its first bytes (the ``filetype`` package's signatures)."""

from __future__ import annotations

import filetype

# filetype names BMP "image/x-ms-bmp" on some versions; the API speaks the IANA names.
_ALIASES = {"image/x-ms-bmp": "image/bmp", "image/x-bmp": "image/bmp"}


def sniff_mime(data: bytes) -> str | None:
    """The MIME type the content shows, or None when it is none we recognise."""
    kind = filetype.guess(data[:8192])
    if kind is None:
        return None
    return _ALIASES.get(kind.mime, kind.mime)
