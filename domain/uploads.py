"""What a file handed to fincap may be: its types and its size, written once.

files.upload's input (``schema.files``), inbound email's attachments (``engines.mail``),
WhatsApp media (``engines.connectors.whatsapp``) and the CLI's check before sending all read
these; ``tests/test_upload_limits.py`` keeps every door on them.
"""

from __future__ import annotations

from typing import Literal, get_args

from domain.vocabulary import vocabulary

UploadMimeType = Literal[
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/tiff",
    "application/pdf",
]
UPLOAD_MIME_TYPES: frozenset[str] = frozenset(get_args(UploadMimeType))
MAX_UPLOAD_MB = 10
MAX_UPLOAD_BYTES = MAX_UPLOAD_MB * 1024 * 1024
# How messages and descriptions name the limit.
MAX_UPLOAD_TEXT = f"{MAX_UPLOAD_MB} MB"

# What each value means (the GraphQL enum values' descriptions read it).
UPLOAD_TYPES = vocabulary(
    UploadMimeType,
    {
        "image/jpeg": "A JPEG photo",
        "image/png": "A PNG image",
        "image/gif": "A GIF image",
        "image/webp": "A WebP image",
        "image/bmp": "A BMP image",
        "image/tiff": "A TIFF image",
        "application/pdf": "A PDF (its text layer, else its pages are read as images)",
    },
)
