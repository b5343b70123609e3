"""MkDocs hook: the product's help center articles, as pages of the docs site under ``help/``.

The articles stay where the product serves them from (``engines/help_center/content/``, at
``/help/<id>``); the site reads them from there at build time, unchanged. An article links to
another by its id (``[bulk edit](bulk-edit)``, the form the product resolves), which becomes a
link to ``<id>.md`` here, so the strict build checks every one. ``help/index.md`` is generated:
each article's title, its summary and the questions it answers.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.pages import Page

CONTENT = Path(__file__).resolve().parent.parent / "engines" / "help_center" / "content"
FOLDER = "help"
# A link whose target is a bare article id, optionally with a section: (bulk-edit#preview)
ARTICLE_LINK = re.compile(r"\]\((?P<id>[a-z0-9]+(?:-[a-z0-9]+)*)(?P<anchor>#[^)\s]*)?\)")


def articles() -> list[Path]:
    return sorted(CONTENT.glob("*.md"))


def front_matter(text: str) -> tuple[list[str], str]:
    """(questions, body) of an article: its YAML front matter's ``questions`` list."""
    if not text.startswith("---\n"):
        return [], text
    head, _, body = text[4:].partition("\n---\n")
    questions = [line[2:].strip() for line in head.splitlines() if line.startswith("- ")]
    return questions, body


def summary(body: str) -> tuple[str, str]:
    """(title, first paragraph) of an article's body."""
    lines = body.strip().splitlines()
    title = lines[0].lstrip("# ").strip()
    paragraph: list[str] = []
    for line in lines[1:]:
        if line.strip():
            paragraph.append(line.strip())
        elif paragraph:
            break
    return title, " ".join(paragraph)


def index_page() -> str:
    parts = [
        "# Help center articles",
        "",
        "The articles fincap serves to the people who use it (`/help`, and the "
        "`help.search` capability), read from `engines/help_center/content/`: what each one "
        "covers and the questions it answers.",
        "",
    ]
    for path in articles():
        questions, body = front_matter(path.read_text())
        title, first = summary(body)
        parts += [f"## [{title}]({path.name})", "", first, ""]
        parts += [f"- {question}" for question in questions] + [""]
    return "\n".join(parts)


def on_files(files: Files, config: Any) -> Files:
    for path in articles():
        files.append(
            File.generated(
                config,
                f"{FOLDER}/{path.name}",
                abs_src_path=str(path),
                inclusion=InclusionLevel.NOT_IN_NAV,
            )
        )
    files.append(File.generated(config, f"{FOLDER}/index.md", content=index_page()))
    return files


def on_page_markdown(markdown: str, page: Page, config: Any, files: Files) -> str:
    if not page.file.src_uri.startswith(f"{FOLDER}/"):
        return markdown
    known = {path.stem for path in articles()}

    def to_page(match: re.Match[str]) -> str:
        if match["id"] not in known:
            return match[0]  # left alone: the strict build reports it
        return f"]({match['id']}.md{match['anchor'] or ''})"

    return ARTICLE_LINK.sub(to_page, markdown)
