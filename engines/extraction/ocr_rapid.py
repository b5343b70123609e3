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
from rapidocr import RapidOCR

if TYPE_CHECKING:
    from PIL.Image import Image


class RapidOcrEngine:
    """OCR with PP-OCR detection + recognition models, boxes assembled into text lines."""

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
        self._ocr = RapidOCR(params=params)

    def read(self, image: Image) -> str:
        # rapidocr expects OpenCV's BGR channel order. The reversed view must be made
        # contiguous: otherwise OpenCV copies the whole page for every text box it crops.
        pixels = numpy.ascontiguousarray(numpy.asarray(image.convert("RGB"))[:, :, ::-1])
        result: Any = self._ocr(pixels)
        if result.boxes is None or result.txts is None:
            return ""
        boxes = [
            (
                float(min(p[0] for p in box)),
                float(min(p[1] for p in box)),
                float(max(p[1] for p in box)),
                str(text),
            )
            for box, text in zip(result.boxes, result.txts, strict=True)
        ]
        return "\n".join(assemble_lines(boxes))


def assemble_lines(boxes: list[tuple[float, float, float, str]]) -> list[str]:
    """Join text boxes ``(left, top, bottom, text)`` that share a row into lines.

    The detector returns one box per text run, so "TOTAL" and "9.00" on a receipt come as
    two boxes; the field parser needs them on one line. A box joins a row when its vertical
    centre falls inside the row's first box (receipts are printed in straight rows).
    """
    rows: list[list[tuple[float, float, float, str]]] = []
    for box in sorted(boxes, key=lambda b: (b[1] + b[2]) / 2):
        centre = (box[1] + box[2]) / 2
        for row in rows:
            anchor = row[0]
            if anchor[1] <= centre <= anchor[2]:
                row.append(box)
                break
        else:
            rows.append([box])
    return [" ".join(b[3] for b in sorted(row, key=lambda b: b[0])) for row in rows]
