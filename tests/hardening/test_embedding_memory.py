"""Attack M2 (issue 35): bulk-editing 32 documents with 1,000-character summaries took the
server from 381 to 2,170 MB, and it kept the memory. The cause (measured with RSS around one
``embed`` call): onnxruntime's CPU memory arena grows to the peak of a run (attention over 32
long texts) and never gives it back; 32 × 1,000 characters kept +630 MB in one process. Each run
now shrinks the arena when it ends. Measured in a child process, so the test's own allocations
do not count."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.requires import requires

pytestmark = requires("model")

MEASURE = """
import gc, json, random, string
import psutil
from engines.ranking.embeddings import Embedder
embedder = Embedder()
process = psutil.Process()
embedder.embed(["warm up"] * 4)
before = process.memory_info().rss
rnd = random.Random(7)
words = ["".join(rnd.choice(string.ascii_lowercase) for _ in range(6)) for _ in range(2000)]
for _ in range(2):
    embedder.embed([" ".join(rnd.choice(words) for _ in range(160))[:1000] for _ in range(32)])
gc.collect()
print(json.dumps({"kept_mb": (process.memory_info().rss - before) / 2**20}))
"""


PEAK = """
import json, random, resource, string
from engines.ranking.embeddings import Embedder
embedder = Embedder()
embedder.embed(["warm up"] * 4)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rnd = random.Random(7)
words = ["".join(rnd.choice(string.ascii_lowercase) for _ in range(6)) for _ in range(2000)]
embedder.embed([" ".join(rnd.choice(words) for _ in range(160))[:1000] for _ in range(32)])
print(json.dumps({"peak_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024}))
"""


def test_the_peak_of_embedding_long_texts_is_bounded() -> None:
    """32 random 1,000-character summaries peaked at +503 MB as one batch (attention over the
    padded batch); cut by ``BATCH_CHARS`` (4 at a time) they peak at ~+47 MB."""
    done = subprocess.run([sys.executable, "-c", PEAK], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    peak = json.loads(done.stdout.strip().splitlines()[-1])["peak_mb"]
    assert peak < 120, f"the peak rose {peak:.0f} MB"


def test_memory_returns_after_embedding_long_texts() -> None:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    kept = json.loads(done.stdout.strip().splitlines()[-1])["kept_mb"]
    assert kept < 150, f"{kept:.0f} MB kept after the runs"


def test_batches_keep_order_and_bound_size_times_longest() -> None:
    from engines.ranking.embeddings import BATCH, BATCH_CHARS, batches

    texts = ["a" * n for n in (10, 900, 20, 1000, 30, 5000, 40)] + ["b" * 50] * 100
    cut = batches(texts)
    assert [t for batch in cut for t in batch] == texts
    for batch in cut:
        assert len(batch) <= BATCH
        assert len(batch) == 1 or len(batch) * max(map(len, batch)) <= BATCH_CHARS
    assert max(len(batch) for batch in cut) == BATCH  # short texts still share a run
