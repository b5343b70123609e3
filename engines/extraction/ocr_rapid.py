"""RapidOCR (PP-OCR ONNX models shipped inside the wheel): accurate on photos, slower.

Tuned for one core: detection runs on the image scaled to at most ``det_side`` pixels,
the orientation classifier is off (rotation is handled before OCR), and recognition runs
one text line at a time, which measured faster than padded batches of six.

Recognition is most of the time (a receipt has 30-70 text boxes). rapidocr pads every box
to at least ``rec_min_width`` pixels (320 by default, PaddleOCR's training shape), so a
"9.00" box cost as much as a whole line; a 96 px floor cut the time per receipt by about
a fifth with the same fields read on the dev set (bench/extraction.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy

from .layout import TextBox, apply, deskew_angle, rotation
from .ocr_engine import OcrBoxes

if TYPE_CHECKING:
    from PIL.Image import Image


class RapidOcrEngine:
    """OCR with PP-OCR detection + recognition models; one box per detected text run."""

    name = "rapidocr"

    def __init__(self, threads: int = 1, det_side: int = 960, rec_min_width: int = 96) -> None:
        params: dict[str, Any] = {
            "Global.log_level": "error",
            "Global.use_cls": False,
            "Det.limit_type": "max",
            "Det.limit_side_len": det_side,
            "Rec.rec_batch_num": 1,
            "Rec.rec_img_shape": [3, 48, rec_min_width],
            "EngineConfig.onnxruntime.intra_op_num_threads": threads,
            "EngineConfig.onnxruntime.inter_op_num_threads": 1,
        }
        # Imported here, where analysis runs (worker and analysis processes): importing rapidocr
        # and onnxruntime costs about a second, which the API process never needs to pay.
        from rapidocr import RapidOCR

        self._ocr = RapidOCR(params=params)

    def read(self, image: Image) -> OcrBoxes:
        # rapidocr expects OpenCV's BGR channel order. The reversed view must be made
        # contiguous: otherwise OpenCV copies the whole page for every text box it crops.
        pixels = numpy.ascontiguousarray(numpy.asarray(image.convert("RGB"))[:, :, ::-1])
        result: Any = self._ocr(pixels)
        if result.boxes is None or result.txts is None:
            return OcrBoxes(())
        quads = [[(float(x), float(y)) for x, y in quad] for quad in result.boxes]
        return level_boxes(
            quads,
            [str(t) for t in result.txts],
            [float(s) for s in result.scores],
            image.width,
            image.height,
        )


def level_boxes(
    quads: list[list[tuple[float, float]]],
    texts: list[str],
    scores: list[float],
    width: float,
    height: float,
) -> OcrBoxes:
    """Text quads → boxes in a frame where the page's tilt is removed.

    A photographed receipt is rarely straight: at 2° the total's label and its amount at
    the far right differ by more than a text height, and rows would not pair up.
    """
    tilt = deskew_angle(quads)
    cx, cy = width / 2, height / 2
    level = rotation(-tilt, cx, cy)
    boxes = []
    for quad, text, score in zip(quads, texts, scores, strict=True):
        points = [apply(level, x, y) for x, y in quad]
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        boxes.append(TextBox(text, min(xs), min(ys), max(xs), max(ys), score))
    return OcrBoxes(tuple(boxes), rotation(tilt, cx, cy))
