"""help-center.search: index build time, query latency and answer quality.

Prints, with the medians of several runs:
- the FTS5 index build over every passage, the embedding of passages and questions, and the
  model load (once per process, shared with documents.search);
- query latency over the labelled queries: words only, hybrid in-process, and end to end
  through the ASGI app (REST, an in-memory store);
- quality on ``bench/help_center_queries.tsv`` (query, expected article, kind): hit@1,
  recall@3 and MRR for words only, meaning only, the shipped fusion (normalised scores) and
  reciprocal rank fusion, overall and per kind (words, paraphrase, German);
- with ``--tantivy`` (``pip install tantivy`` first; not a dependency): the same passages in
  tantivy, build and query-with-snippets time beside FTS5's;
- with ``--cosines``: each labelled query's best question cosine to its article and to any
  article, and unrelated queries' best cosine (where the meaning side's floors come from).

    .venv/bin/python bench/help_center.py [--runs 5] [--cosines] [--tantivy]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from mongomock_motor import AsyncMongoMockClient

from app.host.config import Settings
from bench.harness import load_average, serving_app
from engines.help_center import use_vector_cache
from engines.help_center.articles import shipped_articles
from engines.help_center.fulltext import FullTextIndex
from engines.help_center.search import HelpCenter
from engines.ranking.embeddings import load_embedder
from persistence.store import Store
from resolvers.services.auth import accounts

# The in-memory store as the tests set it up: mongomock accepts the store's journaled writes.
from tests import mongomock_compat  # noqa: F401

QUERIES = Path(__file__).with_name("help_center_queries.tsv")
UNRELATED = (
    "hello",
    "zzqx vvbnm",
    "pizza recipe with tomatoes",
    "what is the weather in Paris",
    "how to bake bread",
    "python list comprehension",
    "Wie spät ist es?",
)
RRF_K = 60


def labelled() -> list[tuple[str, str, str]]:
    rows = []
    for line in QUERIES.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            query, expected, kind = line.split("\t")
            rows.append((query, expected, kind))
    return rows


def timed(action: Callable[[], object], runs: int) -> float:
    """Median seconds of ``runs`` calls."""
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def rankings(center: HelpCenter, query: str) -> dict[str, list[str]]:
    """Article ids best first, per method."""
    sides = center.side_scores(query)

    def order(scores: dict[str, float]) -> list[str]:
        return sorted(scores, key=lambda a: (-scores[a], a))

    words, meaning = order(sides.words), order(sides.meaning)
    rrf: dict[str, float] = {}
    for ranked in (words, meaning):
        for rank, article_id in enumerate(ranked):
            rrf[article_id] = rrf.get(article_id, 0) + 1 / (RRF_K + rank + 1)
    return {
        "words only": words,
        "meaning only": meaning,
        "rrf": order(rrf),
        "shipped (normalised sum)": [hit.article.id for hit in center.search(query, limit=10)],
    }


def quality(center: HelpCenter, rows: list[tuple[str, str, str]]) -> None:
    kinds = sorted({kind for _, _, kind in rows})
    methods = list(rankings(center, rows[0][0]))
    results: dict[str, dict[str, list[int | None]]] = {m: {k: [] for k in kinds} for m in methods}
    for query, expected, kind in rows:
        for method, ranked in rankings(center, query).items():
            position = ranked.index(expected) + 1 if expected in ranked else None
            results[method][kind].append(position)
    print(f"\nquality over {len(rows)} labelled queries ({QUERIES.name})")
    header = f"{'method':26} {'kind':11} {'n':>3} {'hit@1':>6} {'recall@3':>9} {'MRR':>6}"
    print(header)
    for method in methods:
        for kind in [*kinds, "all"]:
            positions = (
                [p for k in kinds for p in results[method][k]]
                if kind == "all"
                else results[method][kind]
            )
            n = len(positions)
            hit1 = sum(p == 1 for p in positions) / n
            recall3 = sum(p is not None and p <= 3 for p in positions) / n
            mrr = sum(1 / p for p in positions if p) / n
            print(f"{method:26} {kind:11} {n:3d} {hit1:6.2f} {recall3:9.2f} {mrr:6.2f}")


def cosines(center: HelpCenter, rows: list[tuple[str, str, str]]) -> None:
    assert center.embedder is not None and center.question_vectors is not None
    print("\nbest question cosine: to the expected article | to any article")
    for query, expected, _ in rows:
        vector = center.embedder.embed([query])[0]
        sims = center.question_vectors @ vector
        pairs = zip(sims, center.question_articles, strict=True)
        own = max(float(s) for s, a in pairs if a == expected)
        print(f"  {own:5.2f} | {float(sims.max()):5.2f}  {query}")
    for query in UNRELATED:
        vector = center.embedder.embed([query])[0]
        best_passage = float((center.passage_vectors @ vector).max())  # type: ignore[operator]
        print(
            f"  unrelated: question {float((center.question_vectors @ vector).max()):5.2f}, "
            f"passage {best_passage:5.2f}  {query}"
        )


def tantivy_comparison(rows: list[tuple[str, str, str]], runs: int) -> None:
    """Build and query times of tantivy over the same passages (stemmed English, title x4,
    section x2, one snippet per hit of the 10 best), next to FTS5's."""
    import re

    import tantivy  # type: ignore[import-not-found]

    articles = shipped_articles()
    passages = [(a.title, p.section, p.text) for a in articles for p in a.passages]

    def build() -> tuple[tantivy.Index, tantivy.Schema]:
        builder = tantivy.SchemaBuilder()
        for name in ("title", "section", "body"):
            builder.add_text_field(name, stored=True, tokenizer_name="en_stem")
        schema = builder.build()
        index = tantivy.Index(schema)
        writer = index.writer(heap_size=15_000_000, num_threads=1)
        for title, section, body in passages:
            writer.add_document(tantivy.Document(title=title, section=section, body=body))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return index, schema

    index, schema = build()
    print(f"\ntantivy index build: {timed(build, runs) * 1000:.1f} ms (median of {runs})")
    searcher = index.searcher()

    def search(query: str) -> None:
        words = re.findall(r"\w+", query.lower())
        if not words:
            return
        parsed = index.parse_query(
            " OR ".join(words), ["title", "section", "body"], {"title": 4.0, "section": 2.0}
        )
        snippets = tantivy.SnippetGenerator.create(searcher, parsed, schema, "body")
        for _, address in searcher.search(parsed, 10).hits:
            snippets.snippet_from_doc(searcher.doc(address)).to_html()

    fulltext = FullTextIndex(articles)
    for name, action in (("tantivy", search), ("FTS5", fulltext.search)):
        samples = []
        for _ in range(runs):
            for query, _, _ in rows:
                began = time.perf_counter()
                action(query)
                samples.append(time.perf_counter() - began)
        print(
            f"{name} query with snippets: median {statistics.median(samples) * 1000:.3f} ms, "
            f"p95 {percentile(samples, 0.95) * 1000:.3f} ms"
        )


async def rest_latency(rows: list[tuple[str, str, str]], runs: int) -> list[float]:
    store = Store(AsyncMongoMockClient()["bench_help"])
    await store.ensure_indexes()
    created = await accounts.bootstrap(store, "bench@example.com", "Bench")
    app = serving_app(Settings(), store)
    headers = {"Authorization": f"Bearer {created['apiKey']}"}
    samples = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        for _ in range(runs):
            for query, _, _ in rows:
                started = time.perf_counter()
                response = await client.post(
                    "/v1/capabilities/help-center.search", json={"query": query}, headers=headers
                )
                samples.append(time.perf_counter() - started)
                assert response.status_code == 200, response.text
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cosines", action="store_true")
    parser.add_argument("--tantivy", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fincap-help-vectors-") as folder:
        measure(options, Path(folder))


def measure(options: argparse.Namespace, folder: Path) -> None:
    """Every figure, in order; ``folder`` keeps the index builds' vectors (see below)."""
    rows = labelled()

    started = time.perf_counter()
    articles = shipped_articles()
    parse_s = time.perf_counter() - started
    passages = sum(len(a.passages) for a in articles)
    questions = sum(len(a.questions) for a in articles)
    print(f"{len(articles)} articles, {passages} passages, {questions} questions")
    print(f"read and parse the articles (once): {parse_s * 1000:.1f} ms")
    fts = timed(lambda: FullTextIndex(articles), options.runs)
    print(f"FTS5 index build: {fts * 1000:.1f} ms (median of {options.runs})")
    started = time.perf_counter()
    embedder = load_embedder()
    print(f"embedding model load (once per process): {time.perf_counter() - started:.2f} s")
    # The last index the timing built is the one queried below (building it again cost as much
    # as the timing: ~2 s of embeddings). Each build keeps its vectors in a folder emptied
    # before it (so every timed build computes them, and saves them as the service's first
    # start does); the app's own index (REST below) then reads the last build's instead of
    # computing them again.
    built: list[HelpCenter] = []

    def build_fresh() -> None:
        for old in folder.iterdir():
            old.unlink()
        built.append(HelpCenter(articles, embedder, vector_cache=folder))

    build = timed(build_fresh, max(1, options.runs // 2))
    print(f"whole index with vectors (FTS5 + {passages + questions} embeddings): {build:.2f} s")
    use_vector_cache(folder)

    words_center = HelpCenter(articles)
    center = built[-1]
    for name, target in (("words only", words_center), ("hybrid", center)):
        samples = []
        for _ in range(options.runs):
            for query, _, _ in rows:
                began = time.perf_counter()
                target.search(query, limit=3, snippets=2)
                samples.append(time.perf_counter() - began)
        print(
            f"query in-process, {name}: median {statistics.median(samples) * 1000:.2f} ms, "
            f"p95 {percentile(samples, 0.95) * 1000:.2f} ms ({len(samples)} queries)"
        )
    rest = asyncio.run(rest_latency(rows, options.runs))
    print(
        f"query end to end (REST through the ASGI app): median "
        f"{statistics.median(rest) * 1000:.2f} ms, p95 {percentile(rest, 0.95) * 1000:.2f} ms"
    )
    print(f"({load_average()})")
    quality(center, rows)
    if options.cosines:
        cosines(center, rows)
    if options.tantivy:
        tantivy_comparison(rows, options.runs)


if __name__ == "__main__":
    main()
