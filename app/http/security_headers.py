"""The security headers of what the service sends to browsers: its HTML pages, GraphiQL's
policy, and the files people uploaded.

Every page: its own Content-Security-Policy (``frame-ancestors 'none'`` in each), plus
``X-Frame-Options: DENY`` for browsers that predate ``frame-ancestors``, ``nosniff`` and no
referrer. A page that cannot be framed cannot be clickjacked; a policy without
``'unsafe-inline'`` scripts cannot run an injected one.

Files (originals, thumbnails): ``nosniff`` always, so a browser takes the declared type and
never guesses HTML from the bytes; shown inline only for types that cannot run anything
(raster images, PDF, plain text); anything else, SVG and HTML included, is an attachment.
"""

from __future__ import annotations

import base64
import hashlib
import re
from urllib.parse import quote

COMMON = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
# A page that needs nothing but its own inline styles (the plain pages: callbacks, errors).
PLAIN_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; form-action 'none'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def page_headers(csp: str = PLAIN_CSP) -> dict[str, str]:
    """The headers of an HTML page whose Content-Security-Policy is ``csp``."""
    return {"Content-Security-Policy": csp, **COMMON}


def graphiql_csp(html: str) -> str:
    """The GraphQL explorer's policy: scripts from this server only (and any inline script of
    the page by hash: the explorer has none), styles from this server and inline (GraphiQL
    sets style attributes and injects style elements), images and fonts as data: URLs,
    requests to this server only, nothing else."""
    hashes = [
        "'sha256-" + base64.b64encode(hashlib.sha256(body.encode()).digest()).decode() + "'"
        for body in _INLINE_SCRIPT.findall(html)
    ]
    directives = {
        "default-src": ["'none'"],
        "script-src": ["'self'", *hashes],
        "style-src": ["'self'", "'unsafe-inline'"],
        # GraphiQL's fonts are data: URLs inside its stylesheet; the page's icon is one too.
        "img-src": ["data:"],
        "font-src": ["data:"],
        "connect-src": ["'self'"],
        "form-action": ["'none'"],
        "frame-ancestors": ["'none'"],
        "base-uri": ["'none'"],
        "object-src": ["'none'"],
    }
    return "; ".join(f"{name} {' '.join(values)}" for name, values in directives.items())


# Types a browser shows without running anything the file holds. Deliberately its own list, not
# the upload or receipt types: a type accepted there later (SVG, say) must not become inline by
# accident.
INLINE_FILE_TYPES = frozenset(
    {
        "image/jpeg",
        "image/png",
        "image/gif",
        "image/webp",
        "image/bmp",
        "image/tiff",
        "application/pdf",
        "text/plain",
    }
)


def file_headers(file_name: str, mime_type: str) -> tuple[str, dict[str, str]]:
    """The media type and headers to send a stored file with (see the module's docstring)."""
    inline = mime_type in INLINE_FILE_TYPES
    media_type = "text/plain; charset=utf-8" if mime_type == "text/plain" else mime_type
    disposition = "inline" if inline else "attachment"
    return media_type, {
        "Content-Disposition": f"{disposition}; filename*=UTF-8''{quote(file_name)}",
        "X-Content-Type-Options": "nosniff",
    }
