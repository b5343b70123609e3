"""Set-up of each analysis process (the extraction pool): a memory limit, and death with its
parent.

OCR and PDF rendering of one hostile file can ask for gigabytes; under ``RLIMIT_DATA`` the
allocation fails inside that process (a ``MemoryError`` or a failed render, reported as this
file's failure) or, at worst, the process dies and the pool is replaced
(``resolvers.services.processing.analyzer.Analyzer``) — the server and the other files are not
touched. ``RLIMIT_DATA`` counts the heap and private mappings (what decoding and rendering
allocate), not the shared libraries and model files mapped in, so the limit means memory, not
address space.
"""

from __future__ import annotations

import resource
import signal

from engines.parent_death import die_with_parent


def prepare_analysis_process(parent_pid: int, memory_limit_bytes: int | None) -> None:
    """``ProcessPoolExecutor`` initializer: runs first in every analysis process."""
    die_with_parent(signal.SIGKILL, parent_pid)  # stateless: nothing to flush
    if memory_limit_bytes:
        resource.setrlimit(resource.RLIMIT_DATA, (memory_limit_bytes, memory_limit_bytes))
