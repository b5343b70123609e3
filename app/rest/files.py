"""``GET /v1/files/{id}`` and ``GET /v1/files/{id}/thumbnail``: a document's original, streamed,
and its JPEG preview; both authenticated, scoped to the caller's workspace, and needing what
documents.get needs."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from app.http.envelope import render_error
from app.http.request_context import workspace_context
from app.http.security_headers import file_headers
from app.rest.routes import BINARY, PlainRoute, permissions_of
from domain.uploads import UPLOAD_MIME_TYPES
from resolvers.framework.registry import Registry
from resolvers.resources.files import open_original
from resolvers.services.processing.thumbnails import thumbnail_of

# The data these routes serve is documents.get's: they need its scopes.
SERVES_LIKE = "documents.get"
JPEG = {"image/jpeg": BINARY}
PREVIEW_HEADERS = {
    "X-Thumbnail": {
        "description": "ready, unavailable (a placeholder says why) or pending",
        "schema": {"type": "string", "enum": ["ready", "unavailable", "pending"]},
    },
    "X-Thumbnail-Reason": {
        "description": "Why there is no preview (ASCII, one line)",
        "schema": {"type": "string"},
    },
}


def ascii_header(text: str, limit: int = 300) -> str:
    """``text`` as a header value: ASCII, one line, bounded."""
    plain = " ".join(text.replace("×", "x").split())
    return plain.encode("ascii", "replace").decode("ascii")[:limit]


def file_routes(registry: Registry) -> list[PlainRoute]:
    """The file routes, where the registry has documents at all."""
    if registry.get(SERVES_LIKE) is None:
        return []
    permissions = permissions_of(registry, SERVES_LIKE)

    async def get_original(request: Request) -> Response:
        """The original upload of a document, streamed (authenticated, workspace-scoped)."""
        try:
            ctx = await workspace_context(request, permissions)
            file_ref, chunks = await open_original(ctx, request.path_params["document_id"])
        except Exception as exc:
            return render_error(exc)
        media_type, headers = file_headers(file_ref["fileName"], file_ref["mimeType"])
        return StreamingResponse(
            chunks,
            media_type=media_type,
            headers={
                **headers,
                "Content-Length": str(file_ref["size"]),
                "ETag": f'"{file_ref["sha256"]}"',
                "Cache-Control": "private, max-age=3600",
            },
        )

    async def thumbnail(request: Request) -> Response:
        """A JPEG preview of a document's original (authenticated, workspace-scoped), read from
        storage: 200 with the preview, 200 with a placeholder saying why there is none
        (``X-Thumbnail: unavailable`` and the reason), or 202 with a placeholder while it is
        being made (``Retry-After``)."""
        try:
            ctx = await workspace_context(request, permissions)
            answer = await thumbnail_of(ctx, request.path_params["document_id"])
        except Exception as exc:
            return render_error(exc)
        media_type, headers = file_headers("thumbnail.jpg", "image/jpeg")
        headers["X-Thumbnail"] = answer.status
        if answer.reason is not None:
            headers["X-Thumbnail-Reason"] = ascii_header(answer.reason)
        if answer.status == "pending":
            headers.update({"Retry-After": "2", "Cache-Control": "no-store"})
            return Response(answer.jpeg, status_code=202, media_type=media_type, headers=headers)
        headers.update({"ETag": f'"thumb-{answer.etag}"', "Cache-Control": "private, max-age=3600"})
        return Response(answer.jpeg, media_type=media_type, headers=headers)

    return [
        PlainRoute(
            "/v1/files/{document_id}",
            get_original,
            operation_id="getOriginalFile",
            summary="The original upload of a document, streamed as it was stored",
            tag="documents",
            permissions=permissions,
            responses={
                "200": {
                    "description": "The file as stored, in the type it was uploaded with; images "
                    "and PDF inline, anything else as an attachment (nosniff either way)",
                    "content": {mime: BINARY for mime in sorted(UPLOAD_MIME_TYPES)},
                }
            },
        ),
        PlainRoute(
            "/v1/files/{document_id}/thumbnail",
            thumbnail,
            operation_id="getThumbnail",
            summary="A JPEG preview of a document's original, read from storage",
            tag="documents",
            permissions=permissions,
            responses={
                "200": {
                    "description": "The preview, or a placeholder saying why there is none",
                    "headers": PREVIEW_HEADERS,
                    "content": JPEG,
                },
                "202": {
                    "description": "A placeholder while the preview is made (Retry-After)",
                    "headers": PREVIEW_HEADERS,
                    "content": JPEG,
                },
            },
        ),
    ]
