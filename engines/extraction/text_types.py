"""What text extraction returns: the layout and text of each page and how it was obtained."""

from __future__ import annotations

from dataclasses import dataclass, field

from .layout import PageLayout, layout_text


@dataclass(frozen=True)
class PageText:
    """One page: its text boxes (``layout``) and the engine that produced them."""

    number: int  # 1-based, as a person counts pages
    layout: PageLayout
    engine: str  # "pdf-text", "tesseract", "rapidocr", "plain-text"
    ocr: bool

    @property
    def text(self) -> str:
        return layout_text([self.layout])


@dataclass(frozen=True)
class ExtractedText:
    """All pages of one document, in order."""

    pages: tuple[PageText, ...]
    page_count: int  # pages in the document, which may exceed len(pages) with max_pages
    warnings: tuple[str, ...] = field(default=())

    @property
    def layouts(self) -> tuple[PageLayout, ...]:
        return tuple(page.layout for page in self.pages)

    @property
    def text(self) -> str:
        """The whole text, visual rows separated by newlines and pages by form feeds."""
        return layout_text(self.layouts)

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
