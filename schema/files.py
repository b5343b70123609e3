"""Contract models of the files resource."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schema.base import CapabilityInput, CapabilityOutput

UploadMimeType = Literal[
    "image/jpeg",
    "image/png",
    "image/gif",
    "image/webp",
    "image/bmp",
    "image/tiff",
    "application/pdf",
]
MAX_FILE_BYTES = 10 * 1024 * 1024


class UploadFile(CapabilityInput):
    """Input of files.upload."""

    fileName: str = Field(
        min_length=1, max_length=255, description="Original name including extension"
    )
    mimeType: UploadMimeType | None = Field(
        default=None,
        description="Must agree with the content; default: taken from it",
    )
    base64Data: str = Field(
        min_length=1, description="Base64-encoded file content, at most 10 MB decoded"
    )


class UploadAccepted(CapabilityOutput):
    """The upload is stored and queued; follow it with documents.get (processingStatus)."""

    documentId: str
    activityId: str
    status: Literal["queued"]
