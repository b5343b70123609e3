"""Reading sentences with the rule grammar without holding anyone else up.

The grammar is pure Python and costs up to a second of CPU per sentence
(``engines.rules.parser.PARSE_BUDGET_S`` bounds it). Sentences are read one at a time per
process, never on the event loop: in ``fincap serve`` and ``fincap worker`` in a child process
of their own (``use_reading_process``, set up with the analysis processes), so however many
callers ask at once, parsing never holds the interpreter lock the API serves other workspaces
with; elsewhere (tests, scripts) in one thread. Callers queue here. Per key, the capabilities
that read sentences (rules.prepare, rules.execute) declare a cost, so each key gets one reading
at a time and a budget a minute (``resolvers.framework.throttle``).

Measured (``bench/attacks.py``, six keys reading back to back for 10 s, load 2–3 on two
cores): another workspace's search p50/p95 went 7/12 → 12/29 ms with the child process (about
70 MB), against 8/12 → 40/195 ms with a thread.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import BrokenExecutor, Executor, ThreadPoolExecutor

from engines.rules.parser import RuleDraft, read_rule
from resolvers.framework.errors import Unprocessable

log = logging.getLogger("fincap.rules")


class RuleReader:
    """One executor of one worker that every sentence of this process is read in."""

    def __init__(self) -> None:
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="rule-reading")
        self._new_process: Callable[[], Executor] | None = None
        self._process: Executor | None = None

    def use_process(self, new_executor: Callable[[], Executor] | None) -> None:
        """Read in the (single-worker) executor ``new_executor`` makes, made on first use and
        again when it breaks; None: back to the thread."""
        self.shutdown()
        self._new_process = new_executor

    def _executor(self) -> Executor:
        if self._new_process is None:
            return self._thread
        if self._process is None:
            self._process = self._new_process()
        return self._process

    async def read(self, sentence: str) -> RuleDraft:
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            executor = self._executor()
            try:
                return await loop.run_in_executor(executor, read_rule, sentence)
            except BrokenExecutor:
                # The child died (memory limit, killed): a new one reads the next sentence.
                log.warning("the rule reading process died", extra={"attempt": attempt})
                if self._process is executor:
                    self._process = None
        raise Unprocessable("naturalLanguageRule: this sentence could not be read; shorten it")

    def shutdown(self) -> None:
        if self._process is not None:
            self._process.shutdown(wait=True, cancel_futures=True)
            self._process = None


_reader = RuleReader()


def use_reading_process(new_executor: Callable[[], Executor] | None) -> None:
    """Called at start-up by the processes that serve requests and run jobs: read sentences in
    the executor ``new_executor`` makes (one worker); None: in a thread."""
    _reader.use_process(new_executor)


def stop_reading_process() -> None:
    """Stop the child and read in the thread again: a process that served (a test's server, a
    CLI command) leaves no child and no process executor behind for what runs after it."""
    _reader.use_process(None)


async def read_sentence_off_loop(sentence: str) -> RuleDraft:
    """The grammar's reading of ``sentence``, read in this process's one reader."""
    return await _reader.read(sentence)
