"""The seam every OCR engine plugs into, and the list of engines this install can run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from PIL.Image import Image


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text of one page image, lines separated by newlines, in reading order.

    Implementations are built once (model loading is the slow part) and reused for every
    page; they must be safe to call repeatedly from one thread.
    """

    name: str

    def read(self, image: Image) -> str: ...
