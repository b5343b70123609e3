"""The help center's articles and its search engine, without HTTP."""

from __future__ import annotations

import re

import pytest

from engines.help_center import default_help_center
from engines.help_center.articles import (
    ArticleError,
    heading_anchors,
    markdown_parser,
    parse_article,
    render_html,
    shipped_articles,
)
from engines.help_center.fulltext import match_expression, query_terms
from engines.help_center.search import HelpCenter

TOPICS = (
    "getting-started",
    "uploading-files",
    "how-extraction-works",
    "correcting-documents",
    "bulk-edit",
    "duplicates",
    "currencies",
    "where-clauses",
    "graphql-and-dashboards",
    "api-keys-and-workspaces",
    "mcp-and-oauth",
    "command-line",
    "integrations",
    "rules",
    "billing",
    "troubleshooting",
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_every_topic_of_the_issue_has_an_article() -> None:
    ids = {article.id for article in shipped_articles()}
    assert len(ids) >= 15
    assert set(TOPICS) <= ids


@pytest.mark.parametrize("article", shipped_articles(), ids=lambda a: a.id)
def test_article_is_complete(article) -> None:  # type: ignore[no-untyped-def]
    assert article.title and article.summary
    assert len(article.questions) >= 3, "questions let the meaning side find the article"
    assert len(article.passages) >= 5
    assert all(passage.text.strip() for passage in article.passages)
    assert "**" not in "".join(p.text for p in article.passages), "marks must stay unambiguous"


@pytest.mark.parametrize("article", shipped_articles(), ids=lambda a: a.id)
def test_links_between_articles_resolve(article) -> None:  # type: ignore[no-untyped-def]
    known = {a.id: a for a in shipped_articles()}
    for target in LINK.findall(article.markdown):
        if target.startswith(("http://", "https://", "/")):
            continue
        name, _, anchor = target.partition("#")
        assert name in known, f"{article.id} links to unknown article {name!r}"
        if anchor:
            anchors = heading_anchors(markdown_parser().parse(known[name].markdown)).values()
            assert anchor in anchors, f"{article.id} links to unknown section {target!r}"


def test_parse_rejects_malformed_articles() -> None:
    with pytest.raises(ArticleError):
        parse_article("no-title", "Just text.\n")
    with pytest.raises(ArticleError):
        parse_article("Bad_Id", "# Title\n\nText.\n")
    with pytest.raises(ArticleError):
        parse_article("open-front", "---\nquestions:\n- Why?\n# Title\n")


def test_passages_are_plain_text_by_block() -> None:
    article = parse_article(
        "sample",
        "---\nquestions:\n- Why?\n---\n# Sample\n\nIntro with **bold** and `code`.\n\n"
        "## Limits & errors\n\n- first item\n- second *item*\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    )
    assert article.questions == ("Why?",)
    assert article.summary == "Intro with bold and code."
    texts = [(p.section, p.anchor, p.text) for p in article.passages]
    assert texts == [
        ("", "", "Intro with bold and code."),
        ("Limits & errors", "limits-errors", "first item"),
        ("Limits & errors", "limits-errors", "second item"),
        ("Limits & errors", "limits-errors", "a · b"),
        ("Limits & errors", "limits-errors", "1 · 2"),
    ]


def test_rendering_escapes_raw_html_and_unsafe_links() -> None:
    article = parse_article(
        "unsafe",
        "# Unsafe\n\n<script>alert(1)</script>\n\n[click](javascript:alert(1)) <b>x</b>\n",
    )
    html = render_html(article)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'href="javascript' not in html
    assert "<b>" not in html


def test_identifiers_are_searched_as_phrases() -> None:
    assert query_terms("How do I send X-Service-Org-Id?") == [
        ("send",),
        ("x", "service", "org", "id"),
    ]
    assert match_expression([("x", "service", "org", "id"), ("upload",)]) == (
        '"x service org id" OR "upload"*'
    )
    # FTS5 syntax in a query is only words: quotes, operators and parentheses do nothing.
    assert query_terms('the "quoted" OR NEAR(a b)') == [("quoted",), ("near", "a")]
    assert default_help_center().search('"unbalanced AND (NOT*') is not None


def test_words_only_center_marks_and_ranks() -> None:
    center = HelpCenter(shipped_articles())  # no embedder: words alone
    hits = center.search("X-Service-Org-Id", limit=3, snippets=2)
    assert hits and all(hit.matched_by == ("words",) for hit in hits)
    assert "**X-Service-Org-Id**" in hits[0].snippets[0].text
    assert center.search("Welche Dateiformate werden unterstützt?") == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        # German: no word of the query is in any article.
        ("Welche Dateiformate werden unterstützt?", "uploading-files"),
        ("Wie korrigiere ich einen falschen Betrag?", "correcting-documents"),
        ("Beleg doppelt", "duplicates"),
        ("Umgebungsvariablen", "self-hosting"),
        # English paraphrases whose words point elsewhere (or nowhere).
        ("I removed a receipt by mistake", "archiving-documents"),
        # "Connect an AI assistant" (the MCP article names Claude and receipts, so an English
        # paraphrase of it now finds it by words).
        ("KI-Assistent verbinden", "mcp-and-oauth"),
    ],
)
def test_meaning_answers_what_words_cannot(query: str, expected: str) -> None:
    hybrid = default_help_center().search(query, limit=3)
    assert hybrid[0].article.id == expected
    assert "meaning" in hybrid[0].matched_by
    words_only = HelpCenter(shipped_articles()).search(query, limit=3)
    assert not words_only or words_only[0].article.id != expected


@pytest.mark.parametrize(
    "query",
    ["zzqx vvbnm", "hello", "pizza recipe with tomatoes", "how to bake bread", "Wie spät ist es?"],
)
def test_unrelated_queries_find_nothing(query: str) -> None:
    assert default_help_center().search(query) == []


def test_marks_are_paired_and_scores_ordered() -> None:
    for query in ("bulk edit preview", "refresh token rotation", "upload pdf limit"):
        hits = default_help_center().search(query, limit=10, snippets=3)
        scores = [hit.score for hit in hits]
        assert scores == sorted(scores, reverse=True) and 0 < scores[-1] <= 1
        for hit in hits:
            for snippet in hit.snippets:
                assert snippet.text.count("**") % 2 == 0


class CountingEmbedder:
    """Deterministic unit vectors; counts the texts it was asked to embed."""

    model_name = "counting"

    def __init__(self) -> None:
        self.texts = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        import numpy as np

        self.texts += len(texts)
        rows = [np.random.default_rng(sum(map(ord, text))).normal(size=8) for text in texts]
        matrix = np.asarray(rows, dtype=np.float32)
        return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def test_vectors_are_cached_between_starts(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    articles = shipped_articles()[:3]
    first = CountingEmbedder()
    built = HelpCenter(articles, first, vector_cache=tmp_path)
    assert first.texts > 0
    [cached] = list(tmp_path.glob("help-vectors-*.npy"))

    again = CountingEmbedder()
    reused = HelpCenter(articles, again, vector_cache=tmp_path)
    assert again.texts == 0  # read from the cache
    assert reused.passage_vectors is not None and built.passage_vectors is not None
    assert np.array_equal(reused.passage_vectors, built.passage_vectors)

    cached.write_bytes(b"damaged")
    repaired = CountingEmbedder()
    HelpCenter(articles, repaired, vector_cache=tmp_path)
    assert repaired.texts == first.texts  # recomputed, and written again

    edited = CountingEmbedder()
    HelpCenter(shipped_articles()[:2], edited, vector_cache=tmp_path)
    assert edited.texts > 0  # other texts: another file, the old one removed
    assert len(list(tmp_path.glob("help-vectors-*.npy"))) == 1


async def test_start_up_builds_the_index_in_a_thread_and_survives_a_failure(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import threading

    import engines.help_center as help_center

    threads: list[str] = []

    def build() -> HelpCenter:
        threads.append(threading.current_thread().name)
        raise OSError("disk full")

    monkeypatch.setattr(help_center, "default_help_center", build)
    task = help_center.index_at_start_up()
    assert not task.done()  # start-up goes on while it builds
    await task  # a failed build is logged, never raised into start-up
    assert threads and threads[0] != threading.main_thread().name
    assert "help center index failed at start-up" in caplog.text


def test_the_shared_index_is_built_once() -> None:
    import engines.help_center as help_center

    first = default_help_center()
    assert help_center.built()
    assert default_help_center() is first


def _section(article_id: str, heading: str) -> str:
    text = next(a.markdown for a in shipped_articles() if a.id == article_id)
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else None]


def test_the_mcp_article_lists_every_scope_there_is() -> None:
    from resolvers.framework.registry import SCOPES

    listed = set(re.findall(r"`([a-z_]+)`", _section("mcp-and-oauth", "Scopes")))
    assert listed - {"insufficient_scope", "invalid_scope", "permissions"} == set(SCOPES)


def test_the_approvals_article_names_every_gated_capability_and_no_other() -> None:
    from resolvers import build_registry

    gated = {spec.slug for spec in build_registry() if spec.approval is not None}
    section = _section("approvals", "Which actions need approval")
    named = set(re.findall(r"`([a-z][a-z-]*\.[a-z][a-zA-Z-]*)`", section.split("Previews")[0]))
    assert named == gated
    # ...and none of them is called planned: rules.execute was, after its saves were gated.
    for sentence in re.split(r"(?<=[.)])\s", section):
        if any(f"`{slug}`" in sentence for slug in gated):
            assert "planned" not in sentence and "not built" not in sentence, sentence


def test_capabilities_the_articles_name_exist_unless_they_say_not_built() -> None:
    from resolvers import build_registry

    slugs = {spec.slug for spec in build_registry()}
    resources = {slug.split(".")[0] for slug in slugs}
    for article in shipped_articles():
        for line in article.markdown.splitlines():
            for name in re.findall(r"`([a-z][a-z-]*\.[a-z][a-zA-Z-]*)`", line):
                if name.split(".")[0] in resources and name not in slugs:
                    assert "not built" in line, (article.id, name)
