"""The seam every OCR engine plugs into."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .layout import IDENTITY, Affine, TextBox

if TYPE_CHECKING:
    from PIL.Image import Image


@dataclass(frozen=True)
class OcrBoxes:
    """What an engine read on one image: text boxes in a level reading frame, and the map
    from that frame back to the image's pixels (the identity unless the engine removed a
    tilt)."""

    boxes: tuple[TextBox, ...]
    to_image: Affine = IDENTITY


@runtime_checkable
class OcrEngine(Protocol):
    """Reads the text boxes of one page image.

    Implementations are built once (model loading is the slow part) and reused for every
    page; they must be safe to call repeatedly from one thread.
    """

    name: str

    def read(self, image: Image) -> OcrBoxes: ...
