"""Documents as MCP resources, for clients that attach context rather than call tools.

- ``fincap://documents/{id}``: the document's fields as JSON, what documents_get returns;
- ``fincap://documents/{id}/original``: the original upload (image or PDF) as a blob, at most
  ``MAX_ORIGINAL_BYTES`` (larger originals are refused with where to download them).

Both templates are listed (``resources/templates/list``); ``resources/list`` pages through the
workspace's documents, newest first. Reading goes through the same ``invoke()`` and
authorization as REST (scope ``read_documents``, the caller's workspace only: another
workspace's document is not found).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator, Mapping
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from starlette.requests import HTTPConnection

from app.http.request_context import services_of
from app.mcp.access import Caller
from app.mcp.errors import protocol_error
from resolvers.framework.errors import CapabilityError, PayloadTooLarge
from resolvers.framework.invoke import authorize, invoke
from resolvers.framework.registry import Registry
from resolvers.resources.files import open_original

SCHEME = "fincap://documents/"
DOCUMENT = SCHEME + "{id}"
ORIGINAL = SCHEME + "{id}/original"
URI = re.compile(r"^fincap://documents/([A-Za-z0-9_-]{1,100})(/original)?$")
JSON = "application/json"
# What one resource read may carry: an image an assistant can look at, a PDF it can read.
# Base64 makes it a third larger on the wire. Uploads may be up to 10 MB.
MAX_ORIGINAL_BYTES = 5 * 1024 * 1024
PAGE = 50

TEMPLATES = [
    types.ResourceTemplate(
        uri_template=DOCUMENT,
        name="document",
        title="Document",
        description="A receipt's or invoice's fields as JSON (what documents_get returns)",
        mime_type=JSON,
    ),
    types.ResourceTemplate(
        uri_template=ORIGINAL,
        name="document-original",
        title="Document original",
        description="The original upload (image or PDF) as a blob, up to "
        f"{MAX_ORIGINAL_BYTES // (1024 * 1024)} MB",
    ),
]


def uri_of(document_id: str, original: bool = False) -> str:
    return (ORIGINAL if original else DOCUMENT).format(id=document_id)


def label(document: dict[str, Any]) -> str:
    """A document as a person would name it in a list: merchant, date, amount."""
    parts = [
        str(document.get("merchant") or "Document"),
        str(document.get("docDate") or ""),
        " ".join(str(document[key]) for key in ("amount", "currency") if document.get(key)),
    ]
    return " · ".join(part for part in parts if part)


class DocumentResources:
    """The document resources of one registry (absent when it has no documents.get)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def list(
        self, conn: HTTPConnection, caller: Caller, cursor: str | None
    ) -> types.ListResourcesResult:
        """A page of the workspace's documents (newest first) as field resources."""
        arguments: dict[str, Any] = {"useSearch": False, "limit": PAGE, "sortOrder": -1}
        if cursor:
            arguments["cursor"] = cursor
        try:
            page = await invoke(
                self.registry,
                "documents.search",
                arguments,
                caller.credentials(),
                services_of(conn),
            )
        except CapabilityError as exc:
            raise protocol_error(exc, caller) from None
        found = page.model_dump(mode="json", exclude_unset=True)
        resources = [
            types.Resource(uri=uri_of(document["id"]), name=label(document), mime_type=JSON)
            for document in found["documents"]
        ]
        return types.ListResourcesResult(resources=resources, next_cursor=found.get("nextCursor"))

    async def read(
        self, conn: HTTPConnection, caller: Caller, uri: str
    ) -> types.ReadResourceResult:
        matched = URI.match(uri)
        if matched is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown resource {uri!r}; fincap's resources are {DOCUMENT} and {ORIGINAL}",
            )
        document_id, original = matched.group(1), matched.group(2) is not None
        credentials = caller.credentials()
        services = services_of(conn)
        try:
            if original:
                ctx = await authorize(
                    credentials, services, ("read_documents",), needs_workspace=True
                )
                # An original is held in memory while it is encoded (up to 5 MB, a third more
                # as base64): one at a time per key, as expensive capabilities run, so parallel
                # reads cannot add up (429 for the second meanwhile), nor a person's or a
                # workspace's over many keys. No budget is spent.
                with services.expensive_calls.slot(
                    ctx.principal.key_id,
                    ORIGINAL,
                    cost=0,
                    member=ctx.principal.user_id,
                    workspace=ctx.workspace_id,
                ):
                    file_ref, chunks = await open_original(ctx, document_id)
                    content = await self._blob(
                        uri, document_id, file_ref, chunks, services.base_url
                    )
                return types.ReadResourceResult(contents=[content])
            result = await invoke(
                self.registry, "documents.get", {"id": document_id}, credentials, services
            )
        except CapabilityError as exc:
            raise protocol_error(exc, caller) from None
        document = result.model_dump(mode="json", exclude_unset=True)["document"]
        text = json.dumps(document, ensure_ascii=False)
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)]
        )

    @staticmethod
    async def _blob(
        uri: str,
        document_id: str,
        file_ref: Mapping[str, Any],
        chunks: AsyncIterator[bytes],
        base_url: str,
    ) -> types.BlobResourceContents:
        """The original, read only when it fits: its stored size is checked first, and the
        bytes are counted as they arrive."""
        too_large = PayloadTooLarge(
            f"The original of {document_id} is {int(file_ref['size']):,} bytes; a resource "
            f"carries at most {MAX_ORIGINAL_BYTES:,}. Download it from "
            f"{base_url}/v1/files/{document_id} with an API key"
        )
        if int(file_ref["size"]) > MAX_ORIGINAL_BYTES:
            raise too_large
        data = bytearray()
        async for chunk in chunks:
            data.extend(chunk)
            if len(data) > MAX_ORIGINAL_BYTES:
                raise too_large
        return types.BlobResourceContents(
            uri=uri, mime_type=file_ref["mimeType"], blob=base64.b64encode(data).decode()
        )


__all__ = ["MAX_ORIGINAL_BYTES", "TEMPLATES", "DocumentResources", "uri_of"]
