"""``GET /v1/files/{id}`` and ``GET /v1/files/{id}/thumbnail``: a document's original, streamed,
and its JPEG preview; both authenticated and scoped to the caller's workspace."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from app.http.envelope import render_error
from app.http.request_context import workspace_context
from app.http.security_headers import file_headers
from resolvers.framework.registry import Registry
from resolvers.resources.files import open_original
from resolvers.services.thumbnails import thumbnail_of


def ascii_header(text: str, limit: int = 300) -> str:
    """``text`` as a header value: ASCII, one line, bounded."""
    plain = " ".join(text.replace("×", "x").split())
    return plain.encode("ascii", "replace").decode("ascii")[:limit]


async def get_original(request: Request) -> Response:
    """The original upload of a document, streamed (authenticated, workspace-scoped)."""
    try:
        ctx = await workspace_context(request, ("read_documents",))
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
        ctx = await workspace_context(request, ("read_documents",))
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


def file_routes(registry: Registry) -> list[Route]:
    """The file routes, where the registry has documents at all."""
    if registry.get("documents.get") is None:
        return []
    return [
        Route("/v1/files/{document_id}", get_original, methods=["GET"]),
        Route("/v1/files/{document_id}/thumbnail", thumbnail, methods=["GET"]),
    ]
