"""Capabilities of the files resource: uploads that become documents."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import AsyncIterator

from domain.uploads import MAX_UPLOAD_BYTES, MAX_UPLOAD_TEXT, UPLOAD_MIME_TYPES
from engines.extraction import OverBudget, check_image_bytes
from engines.sniff import sniff_mime
from persistence.documents import StoredFile
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, NotFound
from resolvers.framework.registry import MEMBERS, capability
from resolvers.services.processing.pipeline import receive
from schema.files import UploadAccepted, UploadFile

_DATA_URL = re.compile(r"^data:[\w.+/-]+;base64,", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
# Base64 of 10 MB is ~13.4 MB; anything longer cannot decode to an acceptable size.
MAX_BASE64_CHARS = (MAX_UPLOAD_BYTES + 2) // 3 * 4


def decode_upload(args: UploadFile) -> tuple[bytes, str]:
    """The file's bytes and its MIME type, or a 400 that says what is wrong."""
    text = _WHITESPACE.sub("", _DATA_URL.sub("", args.base64Data, count=1))
    if len(text) > MAX_BASE64_CHARS:
        raise BadRequest(f"Invalid request: base64Data: the file is larger than {MAX_UPLOAD_TEXT}")
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise BadRequest("Invalid request: base64Data: not valid base64") from None
    if not data:
        raise BadRequest("Invalid request: base64Data: the file is empty")
    if len(data) > MAX_UPLOAD_BYTES:
        raise BadRequest(
            f"Invalid request: base64Data: the file is {len(data):,} bytes; "
            f"the limit is {MAX_UPLOAD_TEXT}"
        )
    actual = sniff_mime(data)
    if actual is None or actual not in UPLOAD_MIME_TYPES:
        raise BadRequest(
            "Invalid request: base64Data: the content is not a JPEG, PNG, GIF, WebP, BMP, "
            "TIFF or PDF file" + (f" (it looks like {actual})" if actual else "")
        )
    if args.mimeType is not None and args.mimeType != actual:
        raise BadRequest(
            f"Invalid request: mimeType: says {args.mimeType} but the content is {actual}"
        )
    if actual.startswith("image/"):
        try:
            # From the header alone: a decompression bomb is refused before any decoding.
            check_image_bytes(data)
        except OverBudget as exc:
            raise BadRequest(f"Invalid request: base64Data: {exc}") from None
    return data, actual


@capability(
    "files.upload",
    input=UploadFile,
    output=UploadAccepted,
    permissions=["write_documents"],
    effect="write",
    roles=MEMBERS,
)
async def upload(ctx: Context, args: UploadFile) -> UploadAccepted:
    """Uploads a receipt, invoice or other financial document (JPEG, PNG, GIF, WebP, BMP, TIFF or
    PDF; at most 10 MB and 50 megapixels) to be extracted and categorized. Returns at once,
    queued; documents.get shows processingStatus becoming processed, warning (e.g. a likely
    duplicate), skipped (not a financial document) or failed.
    """
    workspace_id = ctx.require_workspace()
    data, mime = decode_upload(args)
    document_id, activity_id = await receive(
        ctx.services,
        workspace_id,
        data=data,
        file_name=args.fileName,
        mime_type=mime,
        source="upload",
        details={"uploadedBy": ctx.user_id},
        request_id=ctx.request_id,
    )
    return UploadAccepted(documentId=document_id, activityId=activity_id, status="queued")


async def open_original(ctx: Context, document_id: str) -> tuple[StoredFile, AsyncIterator[bytes]]:
    """The file reference and a chunk stream of a document's original, workspace-scoped."""
    workspace_id = ctx.require_workspace()
    record = await ctx.store.documents.reads.get(workspace_id, document_id)
    if record is None or not isinstance(record.get("file"), dict):
        raise NotFound(f"No original file for document '{document_id}'")
    file_ref = record["file"]
    try:
        grid_out = await ctx.store.files.open(workspace_id, file_ref)
    except FileNotFoundError:
        raise NotFound(f"No original file for document '{document_id}'") from None
    return file_ref, ctx.store.files.chunks(grid_out)
