"""What text extraction returns: the text of each page and how it was obtained."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class PageText:
    """The text of one page and the engine that produced it."""

    number: int  # 1-based, as a person counts pages
    text: str
    engine: str  # "pdf-text", "tesseract", "rapidocr", ...
    ocr: bool


@dataclass(frozen=True)
class ExtractedText:
    """All pages of one document, in order."""

    pages: tuple[PageText, ...]
    page_count: int  # pages in the document, which may exceed len(pages) with max_pages
    warnings: tuple[str, ...] = field(default=())

    @property
    def text(self) -> str:
        """The whole text, pages separated by a form feed (as pdftotext does)."""
        return "\f".join(page.text for page in self.pages)

    @property
    def ocr_used(self) -> bool:
        return any(page.ocr for page in self.pages)

    @property
    def engine(self) -> str:
        """The engines used, in page order and without repeats, joined by '+'."""
        seen: list[str] = []
        for page in self.pages:
            if page.engine not in seen:
                seen.append(page.engine)
        return "+".join(seen) or "none"
