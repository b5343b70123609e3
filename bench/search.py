"""Ranked search: quality on labelled queries, and latency of a top-5 over 10k and 100k documents.

Quality: the queries of ``bench/search_queries.json`` over a corpus of demo documents
(``engines/demo.py``, seed 11) and documents made from the labels of the dev receipts
(``datasets/receipts-dev``: the merchant, address, date and total extraction reads from them,
categorised by the project's categorizer). Each query is ranked over every document by

* ``lexical (before)``: ``engines/ranking/lexical.py``, the BM25 that ranked before this change;
* ``lexical``: the index's BM25 (the same, plus one-letter typos);
* ``vector``: cosine of the embeddings only;
* ``hybrid rrf``: both, fused by reciprocal rank fusion (what documents.search uses);
* ``hybrid sum``: both, fused by a weighted sum of normalised scores (the alternative).

recall@5 is the share of a query's relevant documents among its first 5, out of at most 5
(a query with 40 relevant supermarket receipts scores 1.0 when its first 5 are relevant);
nDCG@10 uses binary relevance. Both are averaged over queries, overall and by kind.

Latency: for N documents (demo texts, their embeddings cached per distinct text), the
in-process ranking of a top-5 (ids to rows, BM25 + cosine over every candidate, fusion of the
rankings' heads, query vector given; the fusion alone is also timed over every candidate, as it
was before) and, through the embedded store (SecantusDB) and the ASGI app, the end-to-end
documents.search call (REST, warm index; the first call that builds the index is shown apart;
the store's own reads are timed beside it). Median (fastest, p95) of ``--runs`` runs of each of
several queries; the load average is printed with each figure (the machine is shared).

    .venv/bin/python bench/search.py                         # quality + ranking 10k/100k + e2e 10k
    .venv/bin/python bench/search.py --skip-quality --sizes --e2e-sizes 100000 --runs 3
                                       # slow: loading 100k documents into the embedded store
    .venv/bin/python bench/search.py --skip-quality --sizes --e2e-sizes 10000   # e2e only

``--queries-per-kind N`` computes the quality tables over the first N queries of each kind only
(the smoke test's tiny run); the figures quoted are over all of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import pickle
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import numpy as np

from engines.demo import demo_documents
from engines.extraction.categorization import categorize
from engines.ranking.embeddings import load_embedder
from engines.ranking.lexical import top_ranked
from engines.ranking.search_index import (
    SearchIndex,
    fuse,
    fused_top,
    limit_blas_threads,
    top,
    weighted_sum,
)
from persistence.documents.query import DocumentQuery
from persistence.documents.records import searchable_texts
from persistence.documents.vectors import embedding_text, stored_fields

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "bench" / "search_queries.json"
DEV = ROOT.parent / "shared" / "datasets" / "receipts-dev"
TODAY = date(2026, 11, 1)
LATENCY_QUERIES = ["coffee", "software subscriptions", "Tankstelle", "hotel in Berlin", "starbuks"]
MODES = ("lexical (before)", "lexical", "vector", "hybrid rrf", "hybrid sum")


# -- corpus -----------------------------------------------------------------------------------


def dev_documents(folder: Path) -> list[dict[str, Any]]:
    """Documents as extraction would make them from the dev receipts' labels."""
    documents: list[dict[str, Any]] = []
    if not folder.is_dir():
        print(f"(no dev receipts at {folder}: the corpus is the demo documents only)")
        return documents
    for path in sorted((folder / "sroie" / "key").glob("*.json")):
        label = json.loads(path.read_text())
        address = label.get("address", "")
        state = next((s for s in ("Johor", "Selangor", "Sarawak") if s.upper() in address), None)
        city = "Kuala Lumpur" if "KUALA LUMPUR" in address or " KL" in address else None
        if city is None and "JOHOR BAHRU" in address:
            city = "Johor Bahru"
        documents.append(
            _document(
                f"sroie/{path.stem}", label["company"], address, "MYR", state, city, "MY", "receipt"
            )
        )
    labels = folder / "de" / "labels.json"
    if labels.is_file():
        for label in json.loads(labels.read_text()):
            documents.append(
                _document(
                    f"de/{label['file']}",
                    label["merchant"].upper(),
                    "",
                    "EUR",
                    None,
                    None,
                    "DE",
                    "receipt",
                )
            )
    for path in sorted((folder / "invoices").glob("*.json")):
        label = json.loads(path.read_text())[0]
        lines = [line["name"] for line in label.get("lines", []) if line.get("name")]
        documents.append(
            _document(
                f"invoices/{path.stem}",
                label.get("issuer") or path.stem,
                label.get("partner_city") or "",
                label.get("currency") or "EUR",
                None,
                label.get("partner_city"),
                label.get("country_code"),
                "invoice",
                lines,
            )
        )
    return documents


COUNTRIES = {"MY": "Malaysia", "DE": "Germany", "NL": "Netherlands", "IN": "India", "FR": "France"}


def _document(
    doc_id: str,
    merchant: str,
    address: str,
    currency: str,
    state: str | None,
    city: str | None,
    country_code: str | None,
    doc_type: str,
    lines: Sequence[str] = (),
) -> dict[str, Any]:
    category, _ = categorize(merchant, text=address)
    return {
        "_id": doc_id,
        "merchant": merchant,
        "category": category,
        "docType": doc_type,
        "summary": f"{doc_type.capitalize()} from {merchant}.",
        "currency": currency,
        "lineItems": [{"description": line} for line in lines],
        "expenseLocation": {
            "primary": {
                "countryCode": country_code,
                "country": COUNTRIES.get(country_code or ""),
                "city": city,
                "stateOrProvince": state,
            }
        },
    }


def relevant(document: dict[str, Any], query: dict[str, Any]) -> bool:
    """Whether ``document`` is one ``query``'s labels name: by merchant or place, and by the
    kind of document when the query names kinds (alone: every document of those kinds)."""
    kinds = query.get("docTypes")
    if kinds and document.get("docType") not in kinds:
        return False
    if kinds and not query.get("merchants") and not query.get("places"):
        return True
    merchant = document.get("merchant") or ""
    for pattern in query.get("merchants", []):
        if re.search(pattern, merchant, re.IGNORECASE):
            return True
    primary = (document.get("expenseLocation") or {}).get("primary") or {}
    place = " ".join(str(primary.get(k) or "") for k in ("city", "stateOrProvince", "country"))
    return any(p.lower() in place.lower() for p in query.get("places", []))


# -- metrics ----------------------------------------------------------------------------------


def recall_at(ranked: Sequence[int], wanted: set[int], k: int = 5) -> float:
    return len(set(ranked[:k]) & wanted) / min(k, len(wanted))


def ndcg_at(ranked: Sequence[int], wanted: set[int], k: int = 10) -> float:
    gain = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in wanted)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(k, len(wanted))))
    return gain / ideal


def build_index(
    documents: Sequence[dict[str, Any]], vectors: np.ndarray
) -> tuple[SearchIndex, np.ndarray]:
    index = SearchIndex(vectors.shape[1])
    for document, vector in zip(documents, vectors, strict=True):
        index.upsert(
            document["_id"], searchable_texts(document), vector, doc_type=document.get("docType")
        )
    return index, index.rows_of([d["_id"] for d in documents])


def ranking(
    mode: str,
    query: str,
    qvec: np.ndarray,
    index: SearchIndex,
    rows: np.ndarray,
    texts: list[dict[str, str | None]],
    k: int,
) -> list[int]:
    if mode == "lexical (before)":
        best, _ = top_ranked(query, texts, k)
        return [item.index for item in best]
    words = index.lexical_match(query, rows)
    lexical, distinctive = words.scores, words.distinctive
    if mode == "lexical":
        return top(lexical, k).rows
    similarity = index.vector_scores(qvec, rows)
    if mode == "vector":
        return [int(i) for i in np.argsort(-similarity, kind="stable")[:k]]
    if mode == "hybrid rrf":
        best = fused_top(lexical, similarity, k, distinctive=distinctive, first=words.complete)
        return best.ranked.rows
    return top(weighted_sum(lexical, similarity), k).rows


def quality(show: bool = False, per_kind: int | None = None) -> None:
    """The quality tables over the labelled queries: all of them, or the first ``per_kind`` of
    each kind (the smoke test's tiny run: every kind and mode, a tenth of the ranking work)."""
    spec = json.loads(QUERIES.read_text())["queries"]
    if per_kind is not None:
        taken: dict[str, int] = defaultdict(int)
        kept = []
        for query in spec:
            taken[query["kind"]] += 1
            if taken[query["kind"]] <= per_kind:
                kept.append(query)
        spec = kept
    demo = demo_documents(400, seed=11, today=TODAY)
    dev = dev_documents(DEV)
    documents = demo + dev
    embedder = load_embedder()
    texts_for_model = [embedding_text(d) for d in documents]
    started = time.perf_counter()
    vectors = embedder.embed(texts_for_model)
    per_doc = (time.perf_counter() - started) / len(documents) * 1000
    started = time.perf_counter()
    for text in texts_for_model[:20]:
        embedder.embed([text])
    alone = (time.perf_counter() - started) / 20 * 1000
    index, rows = build_index(documents, vectors)
    texts = [searchable_texts(d) for d in documents]
    print(
        f"corpus: {len(demo)} demo + {len(dev)} dev-receipt documents; {len(spec)} queries; "
        f"model {embedder.model_name}"
    )
    print(
        f"embedding cost: {per_doc:.1f} ms per document in batches of 32, "
        f"{alone:.1f} ms for one alone (OCR: ~800 ms per photo)"
    )
    scores: dict[str, dict[str, list[tuple[float, float]]]] = {m: defaultdict(list) for m in MODES}
    # What documents.search finds in all (its pages end there): how many, how many of them are
    # relevant, how many of the relevant it finds.
    found: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    qvecs = embedder.embed([q["query"] for q in spec])
    for q, qvec in zip(spec, qvecs, strict=True):
        wanted = {i for i, d in enumerate(documents) if relevant(d, q)}
        assert wanted, f"no relevant document for {q['query']!r}"
        for mode in MODES:
            ranked = ranking(mode, q["query"], qvec, index, rows, texts, 10)
            pair = (recall_at(ranked, wanted), ndcg_at(ranked, wanted))
            scores[mode][q["kind"]].append(pair)
            scores[mode]["all"].append(pair)
            if show and mode == "hybrid rrf":
                names = ", ".join(
                    ("+" if i in wanted else "-") + str(documents[i]["merchant"])[:18]
                    for i in ranked[:5]
                )
                print(f"  {q['query'][:22]:22} r@5 {pair[0]:.2f}  {names}")
        every = ranking("hybrid rrf", q["query"], qvec, index, rows, texts, len(documents))
        hits = len(wanted & set(every))
        triple = (len(every), hits / len(every) if every else 0.0, hits / len(wanted))
        found[q["kind"]].append(triple)
        found["all"].append(triple)
    kinds = ["all", *sorted({q["kind"] for q in spec})]
    header = f"{'':18}" + "".join(f"{k + f' ({len(scores[MODES[0]][k])})':>22}" for k in kinds)
    print("\nrecall@5 / nDCG@10 by kind of query (number of queries)")
    print(header)
    for mode in MODES:
        cells = []
        for kind in kinds:
            pairs = scores[mode][kind]
            r = statistics.mean(p[0] for p in pairs)
            n = statistics.mean(p[1] for p in pairs)
            cells.append(f"{r:.2f} / {n:.2f}")
        print(f"{mode:18}" + "".join(f"{c:>22}" for c in cells))
    print("\nfound by documents.search (hybrid rrf, every page): count / relevant share / recall")
    print(
        f"{'':18}"
        + "".join(
            f"{f'{statistics.mean(t[0] for t in found[k]):.0f}'}"
            f" / {statistics.mean(t[1] for t in found[k]):.2f}"
            f" / {statistics.mean(t[2] for t in found[k]):.2f}".rjust(22)
            for k in kinds
        )
    )


# -- latency ----------------------------------------------------------------------------------


def cached_vectors(documents: Sequence[dict[str, Any]]) -> np.ndarray:
    """Embeddings of ``documents``, each distinct text embedded once."""
    texts = [embedding_text(d) for d in documents]
    distinct = list(dict.fromkeys(texts))
    embedded = dict(zip(distinct, load_embedder().embed(distinct), strict=True))
    return np.stack([embedded[t] for t in texts])


def timed(runs: int, call: Any) -> float:
    return timed_all(runs, call)[0]


def timed_all(runs: int, call: Any) -> tuple[float, float, float]:
    """Median, fastest and 95th percentile of ``runs`` calls (after one warm-up), in ms: the
    fastest shows the cost on an idle machine, the median and p95 what a shared one gives."""
    call()
    samples = []
    for _ in range(runs):
        begin = time.perf_counter()
        call()
        samples.append((time.perf_counter() - begin) * 1000)
    return statistics.median(samples), min(samples), percentile(samples, 95)


def percentile(samples: Sequence[float], p: float) -> float:
    """The nearest-rank percentile (of 7 samples, p95 is the largest)."""
    ordered = sorted(samples)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def ranking_latency(sizes: Sequence[int], runs: int) -> None:
    limit_blas_threads(1)  # as documents.search's SearchIndexes does
    print(
        f"\nin-process ranking of a top-5 over every document (query vector given), ms: median "
        f"(fastest, p95) over {len(LATENCY_QUERIES)} queries x {runs} runs; {load_average()}"
    )
    embedder = load_embedder()
    qvecs = embedder.embed(LATENCY_QUERIES)
    for size in sizes:
        documents = demo_documents(size, seed=3, today=TODAY)
        vectors = cached_vectors(documents)
        started = time.perf_counter()
        index, rows = build_index(documents, vectors)
        build_s = time.perf_counter() - started
        ids = list(index.ids)
        shipped: list[float] = []
        full: list[float] = []
        head: list[float] = []
        for text, qvec in zip(LATENCY_QUERIES, qvecs, strict=True):

            def rank(
                ids: list[str],
                text: str = text,
                qvec: np.ndarray = qvec,
                index: SearchIndex = index,
            ) -> None:
                # What rank_documents does once the candidates' ids are read.
                every = index.rows_of(ids)
                words = index.lexical_match(text, every)
                similarity = index.vector_scores(qvec, every)
                fused_top(
                    words.scores,
                    similarity,
                    5,
                    distinctive=words.distinctive,
                    first=words.complete,
                )

            shipped.extend(samples(runs, rank, lambda d=ids: fresh_copies(d)))
            # The fusion alone: as shipped (the heads of the rankings) and over every candidate.
            lexical, distinctive = index.lexical(text, rows)
            similarity = index.vector_scores(qvec, rows)
            head.extend(
                samples(
                    runs,
                    lambda a=lexical, b=similarity, c=distinctive: fused_top(
                        a, b, 5, distinctive=c
                    ),
                )
            )
            full.extend(
                samples(
                    runs,
                    lambda a=lexical, b=similarity, c=distinctive: top(
                        fuse(a, b, distinctive=c), 5
                    ),
                )
            )
        ids_again = samples(runs, index.rows_of, lambda d=ids: fresh_copies(d))

        def first_time(d: list[str] = ids, i: SearchIndex = index) -> list[str]:
            i._recent = None  # as if the candidates had changed
            return fresh_copies(d)

        ids_first = samples(runs, index.rows_of, first_time)
        lexical_ms = timed_all(runs, lambda i=index, r=rows: i.lexical_scores("coffee", r))
        vector_ms = timed_all(runs, lambda i=index, r=rows: i.vector_scores(qvecs[0], r))
        print(
            f"  {size:>7} documents: hybrid top-5 {fmt(shipped)}; parts: ids to rows "
            f"{statistics.median(ids_again):.1f} (new candidates: "
            f"{statistics.median(ids_first):.1f}), BM25 'coffee' {lexical_ms[0]:.1f}, "
            f"cosine {vector_ms[0]:.1f}, "
            f"fusion of the heads {statistics.median(head):.2f} (of every candidate, as before: "
            f"{statistics.median(full):.2f}); index built in {build_s:.1f} s, vectors "
            f"{index.nbytes / 1e6:.0f} MB"
        )
    alone = timed(runs, lambda: embedder.embed(["software subscriptions"]))
    print(f"  query embedding (once per distinct query, then cached): {alone:.1f} ms")


def samples(runs: int, call: Any, prepare: Any = None) -> list[float]:
    """``runs`` timings of ``call`` in ms after a warm-up; with ``prepare``, each call gets
    what ``prepare()`` returned, made outside the timing."""
    call() if prepare is None else call(prepare())
    out = []
    for _ in range(runs):
        given = () if prepare is None else (prepare(),)
        begin = time.perf_counter()
        call(*given)
        out.append((time.perf_counter() - begin) * 1000)
    return out


def fresh_copies(ids: list[str]) -> list[str]:
    """The ids as new string objects, as the database driver decodes them for every search
    (their hashes not computed yet)."""
    return pickle.loads(pickle.dumps(ids))


def fmt(values: Sequence[float]) -> str:
    return f"{statistics.median(values):6.1f} ({min(values):.1f}, p95 {percentile(values, 95):.1f})"


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (5 min {five:.1f}) on {os.cpu_count()} cores"


class Refused(Exception):
    """documents.search did not answer 200."""


async def end_to_end(sizes: Sequence[int], runs: int) -> None:
    from app.host.config import Settings
    from bench.harness import discard, serving_app
    from persistence.client import connect
    from persistence.embedded import EmbeddedServer
    from persistence.ids import utcnow
    from persistence.store import Store
    from resolvers import build_registry
    from resolvers.services.auth import accounts
    from resolvers.services.documents.search_indexes import OVERLAP, model_vectorizer

    print(
        "\nend to end: POST /v1/capabilities/documents.search (limit 5, mmr) through the ASGI "
        f"app on the embedded store, ms: median (fastest, p95) over {len(LATENCY_QUERIES)} "
        f"queries x {runs} runs"
    )
    server = EmbeddedServer(storage=":memory:").start()
    try:
        for size in sizes:
            name = f"search_{size}"
            client, db = connect(server.uri, name)
            await client.drop_database(name)
            store = Store(db)
            await store.ensure_indexes()
            tenant = await accounts.bootstrap(store, "big@example.com", "Big")
            documents = demo_documents(size, seed=5, today=TODAY)
            vectors = cached_vectors(documents)
            store.documents.collection.vectorize = model_vectorizer()  # for documents written later
            started = time.perf_counter()
            # Straight into the collection: prepared records with their vectors, as
            # insert_many writes them, without the dashboard rollups (search never reads them,
            # and keeping them makes loading the embedded store many times slower).
            records = []
            for fields, vector in zip(documents, vectors, strict=True):
                record = dict(store.documents.writes.prepare(tenant["orgId"], fields))
                record.update(stored_fields(vector))
                records.append(record)
            for start in range(0, size, 2000):
                await db["documents"].insert_many(records[start : start + 2000])
            load_s = time.perf_counter() - started
            app = serving_app(Settings(), store, registry=build_registry())
            headers = {
                "Authorization": f"Bearer {tenant['apiKey']}",
                "X-Service-Org-Id": tenant["orgId"],
            }
            async with httpx.AsyncClient(
                transport=httpx.ASGITransport(app=app), base_url="http://bench"
            ) as http:

                async def search(
                    text: str, headers: dict[str, str] = headers, **extra: Any
                ) -> float:
                    begin = time.perf_counter()
                    response = await http.post(
                        "/v1/capabilities/documents.search",
                        json={"query": text, "limit": 5, **extra},
                        headers=headers,
                    )
                    took = (time.perf_counter() - begin) * 1000
                    if response.status_code != 200:
                        # At 100k documents the embedded store's read of the candidates can
                        # pass the query time limit (a 400 that says so): report, not crash.
                        raise Refused(
                            f"{response.status_code} after {took:.0f} ms: {response.text[:200]}"
                        )
                    return took

                try:
                    cold = await search("coffee")
                except Refused as refused:
                    print(
                        f"  {size:>7} documents (loaded in {load_s:.0f} s): refused {refused}; "
                        f"{load_average()}"
                    )
                    await client.drop_database(name)
                    client.close()
                    continue
                warm: list[float] = []
                for text in LATENCY_QUERIES:
                    await search(text)
                    warm.extend([await search(text) for _ in range(runs)])
                where = {"conditions": [{"field": "currency", "op": "eq", "value": "EUR"}]}
                try:
                    await search("coffee", where=where)
                    filtered = [await search("coffee", where=where) for _ in range(runs)]
                except Refused as refused:
                    # The where path still reads every candidate id: at 100k on the embedded
                    # store that passes the time limit. Report the rest.
                    print(f"  {size:>7} documents: where currency=EUR refused {refused}")
                    filtered = [float("nan")]
                floor: list[float] = []
                refresh: list[float] = []
                for _ in range(runs):
                    begin = time.perf_counter()
                    await store.documents.reads.candidate_ids(tenant["orgId"], DocumentQuery())
                    floor.append((time.perf_counter() - begin) * 1000)
                    # The index's refresh when nothing changed: the read of recent changes.
                    begin = time.perf_counter()
                    await store.documents.search.index_rows(tenant["orgId"], utcnow() - OVERLAP)
                    refresh.append((time.perf_counter() - begin) * 1000)
            print(
                f"  {size:>7} documents (loaded in {load_s:.0f} s): warm {fmt(warm)}; "
                f"where currency=EUR {fmt(filtered)}; first call, building the index {cold:.0f}; "
                f"the store's read of every candidate id (where path) {fmt(floor)}; the "
                f"index's read of recent changes {fmt(refresh)}; {load_average()}"
            )
            await client.drop_database(name)
            client.close()
    finally:
        discard(server)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--e2e-sizes", type=int, nargs="*", default=[10_000])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--show", action="store_true", help="each query's first 5 (hybrid rrf)")
    parser.add_argument(
        "--queries-per-kind",
        type=int,
        help="quality over the first N labelled queries of each kind only (default: all)",
    )
    options = parser.parse_args()
    if not options.skip_quality:
        quality(options.show, options.queries_per_kind)
    if options.sizes:
        ranking_latency(options.sizes, options.runs)
    if options.e2e_sizes:
        asyncio.run(end_to_end(options.e2e_sizes, options.runs))


if __name__ == "__main__":
    main()
