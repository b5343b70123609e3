"""Help articles: Markdown files shipped inside the package, read into passages and HTML.

An article is ``content/<id>.md``; its first level-1 heading is the title and its first
paragraph the summary. It may open with a front matter block listing the questions it answers,
in the words people ask them (``---`` / ``questions:`` / ``- …`` / ``---``): they are not shown,
but the meaning side of the search compares a query with them, because a question is closest to
a question. Level-2 and level-3 headings open sections, each with an anchor, so a
search hit can link to the place it was found. Every top-level block (a paragraph, one list
item, one table row, a code block) becomes a *passage*: the unit the index ranks and snippets
are cut from. Passages are plain text (Markdown markup removed), so the marks a search puts
around matched terms are the only markup in a snippet.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources

from markdown_it import MarkdownIt
from markdown_it.token import Token

ARTICLE_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Passage:
    """One block of an article, as plain text, with the section it sits in."""

    article_id: str
    section: str  # the nearest level-2/3 heading above it ('' before the first one)
    anchor: str  # that heading's id in the rendered page ('' before the first one)
    text: str


@dataclass(frozen=True)
class Article:
    """A help article: its Markdown source and what the index and the pages need of it."""

    id: str
    title: str
    summary: str
    markdown: str
    passages: tuple[Passage, ...]
    questions: tuple[str, ...] = ()


class ArticleError(ValueError):
    """An article file is malformed (no title, bad id): raised when the articles are loaded."""


def markdown_parser() -> MarkdownIt:
    """CommonMark with tables; raw HTML in the source is shown as text, never passed through."""
    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")


def slugify(text: str) -> str:
    """A heading's anchor: 'Limits & errors' → 'limits-errors'."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "section"


def inline_text(token: Token) -> str:
    """The readable text of an inline token: markup dropped, code and link text kept."""
    parts: list[str] = []
    for child in token.children or ():
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "image":
            parts.append(child.content)
    return "".join(parts)


def heading_anchors(tokens: Sequence[Token]) -> dict[int, str]:
    """Anchors of the level-2/3 headings, by the index of their ``heading_open`` token;
    repeated headings get ``-2``, ``-3``… as in most Markdown renderers."""
    anchors: dict[int, str] = {}
    seen: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag in ("h2", "h3"):
            base = slugify(inline_text(tokens[index + 1]))
            seen[base] = seen.get(base, 0) + 1
            anchors[index] = base if seen[base] == 1 else f"{base}-{seen[base]}"
    return anchors


def _passages(article_id: str, tokens: Sequence[Token]) -> Iterator[Passage]:
    anchors = heading_anchors(tokens)
    section = anchor = ""
    parts: list[str] = []
    in_heading = False

    def flush() -> Passage | None:
        text = " ".join(" ".join(parts).split()).strip(" ·")
        parts.clear()
        return Passage(article_id, section, anchor, text) if text else None

    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            in_heading = True
            if index in anchors:
                section, anchor = inline_text(tokens[index + 1]), anchors[index]
            continue
        if token.type == "heading_close":
            in_heading = False
            continue
        if in_heading:
            continue
        # A unit ends where a top-level block, a top-level list item or a table row closes.
        closes_unit = token.nesting == -1 and (
            token.level == 0
            or (token.type == "list_item_close" and token.level == 1)
            or token.type == "tr_close"
        )
        if token.type == "inline":
            parts.append(inline_text(token))
        elif token.type in ("fence", "code_block"):
            parts.append(token.content)
            if token.level == 0 and (passage := flush()):
                yield passage
        elif token.type == "th_close" or token.type == "td_close":
            parts.append("·")
        if closes_unit and (passage := flush()):
            yield passage


def split_front_matter(article_id: str, source: str) -> tuple[tuple[str, ...], str]:
    """The questions of a leading ``---`` block and the Markdown after it."""
    lines = source.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return (), source
    try:
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
    except StopIteration:
        raise ArticleError(f"article {article_id!r}: front matter is not closed by ---") from None
    questions = []
    for line in lines[1:end]:
        text = line.strip()
        if text.startswith("- "):
            questions.append(text[2:].strip())
        elif text and text != "questions:":
            raise ArticleError(f"article {article_id!r}: unexpected front matter line {text!r}")
    return tuple(questions), "".join(lines[end + 1 :])


def parse_article(article_id: str, source: str) -> Article:
    """Read one article's Markdown; raises ``ArticleError`` when it has no title."""
    if not ARTICLE_ID.match(article_id):
        raise ArticleError(f"article id {article_id!r} must be lower-case words joined by '-'")
    questions, source = split_front_matter(article_id, source)
    tokens = markdown_parser().parse(source)
    title = summary = ""
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1" and not title:
            title = inline_text(tokens[index + 1]).strip()
        elif token.type == "paragraph_open" and token.level == 0 and title and not summary:
            summary = " ".join(inline_text(tokens[index + 1]).split())
    if not title:
        raise ArticleError(f"article {article_id!r} has no '# Title' line")
    passages = tuple(_passages(article_id, tokens))
    return Article(article_id, title, summary, source, passages, questions)


@cache
def shipped_articles() -> tuple[Article, ...]:
    """The articles inside the installed package, in the order of their file names."""
    folder = resources.files("engines.help_center").joinpath("content")
    articles = [
        parse_article(entry.name.removesuffix(".md"), entry.read_text(encoding="utf-8"))
        for entry in sorted(folder.iterdir(), key=lambda item: item.name)
        if entry.name.endswith(".md")
    ]
    return tuple(articles)


@cache
def render_html(article: Article) -> str:
    """The article's body as HTML (escaped by the renderer; raw HTML in the source is text),
    with ids on the level-2/3 headings that search results link to."""
    parser = markdown_parser()
    tokens = parser.parse(article.markdown)
    for index, anchor in heading_anchors(tokens).items():
        tokens[index].attrSet("id", anchor)
    return parser.renderer.render(tokens, parser.options, {})
