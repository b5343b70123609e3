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

import pytest

from engines.ranking import embeddings

pytestmark = pytest.mark.skipif(not embeddings.available(), reason="model package not installed")

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


def test_memory_returns_after_embedding_long_texts() -> None:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    kept = json.loads(done.stdout.strip().splitlines()[-1])["kept_mb"]
    assert kept < 150, f"{kept:.0f} MB kept after the runs"
