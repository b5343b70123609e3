"""Contract models of the files resource."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from domain.uploads import MAX_UPLOAD_TEXT, UploadMimeType
from schema.base import CapabilityInput, CapabilityOutput


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
        min_length=1, description=f"Base64-encoded file content, at most {MAX_UPLOAD_TEXT} decoded"
    )


class UploadAccepted(CapabilityOutput):
    """The upload is stored and queued; follow it with documents.get (processingStatus)."""

    documentId: str = Field(description="The document being made from the upload (doc_…)")
    activityId: str = Field(description="The activity item that follows the upload (act_…)")
    status: Literal["queued"] = Field(description="queued: processing has not started yet")
