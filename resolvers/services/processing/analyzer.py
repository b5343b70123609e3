"""Analysis of an original off the event loop, and its result as document fields.

``Analyzer`` runs the extraction engine in an executor (a process pool in production);
``document_fields`` is the one mapping of parsed fields to the document's (API) fields, used by
the pipeline (``resolvers/services/processing/pipeline.py``) and by documents.inspect.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from engines.analysis import Analysis, analyze
from engines.extraction import OverBudget, ParsedFields, UnreadableDocument, UnsupportedDocument
from engines.thumbnail import Preview, make_preview

log = logging.getLogger("fincap.processing")

# How long the analysis processes get to exit when the process stops (part of its 10 s).
SHUTDOWN_GRACE_S = 1.5
T = TypeVar("T")


class PermanentFailure(Exception):
    """Retrying cannot help (the file is unreadable or over a budget); the document is marked
    failed at once, with this message as the reason."""


class _BrokenBeforeSubmit(BrokenProcessPool):
    """The pool refused a call at submission: it was broken before the call began."""


ExecutorFactory = Callable[[int], Executor]
"""Builds an executor of the given size (the app's process pool, set up for analysis)."""


class Analyzer:
    """Runs ``analyze`` in an executor (a process pool in production) off the event loop.

    A process pool whose child died (the OOM killer, a crash in native code) is broken for good:
    every later call would fail. The analyzer replaces it, and runs each call the death
    interrupted once more, alone, in a fresh process of its own: which call killed the pool is
    unknown, and in isolation only the file that kills its process fails (permanently).
    """

    def __init__(
        self,
        executor: Executor | None = None,
        *,
        new_executor: ExecutorFactory | None = None,
        size: int = 1,
        function: Callable[..., Analysis] = analyze,
    ) -> None:
        self._function = function  # a picklable top-level function (tests pass their own)
        self._new_executor = new_executor
        self._size = size
        self._executor = executor
        if executor is None and new_executor is not None:
            self._executor = new_executor(size)
        self._isolated = asyncio.Lock()
        self._replacement_error: Exception | None = None
        # The last pool asked to run something: a pool never asked has started no process yet
        # (a pool starts them with its first call), and readiness does not start one for it.
        self._asked: Executor | None = None

    async def __call__(self, data: bytes, mime: str, **hints: Any) -> Analysis:
        return await self._call(functools.partial(self._function, data, mime, **hints))

    async def preview(self, data: bytes, mime: str) -> Preview:
        """The original's preview (a small JPEG), made in the analysis process: decoding an
        image must not cost the API process or its event loop anything."""
        return await self._call(functools.partial(make_preview, data, mime))

    async def _call(self, call: Callable[[], T]) -> T:
        executor = self._executor
        try:
            return await self._run(executor, call)
        except _BrokenBeforeSubmit:
            if self._new_executor is None:
                raise
            # The pool was dead before this call: it cannot be the culprit.
            self._replace(executor)
            return await self._run(self._executor, call)
        except BrokenProcessPool:
            if self._new_executor is None:
                raise
            self._replace(executor)
            log.warning("the analysis process died; running the call again in isolation")
        # One at a time: several calls interrupted together must not kill each other again.
        async with self._isolated:
            alone = self._new_executor(1)
            try:
                return await self._run(alone, call)
            except BrokenProcessPool:
                raise PermanentFailure(
                    "the analysis process died while reading this file (it may need more "
                    "memory than FINCAP_ANALYSIS_MEMORY_MB allows)"
                ) from None
            finally:
                alone.shutdown(wait=False, cancel_futures=True)

    async def _run(self, executor: Executor | None, call: Callable[[], T]) -> T:
        loop = asyncio.get_running_loop()
        submitted: Future[T] | None = None
        try:
            # A broken pool refuses the submission itself, before anything runs.
            if executor is None:
                future = loop.run_in_executor(None, call)
            else:
                self._asked = executor
                submitted = executor.submit(call)
                future = asyncio.wrap_future(submitted)
        except BrokenProcessPool as exc:
            raise _BrokenBeforeSubmit(str(exc)) from exc
        try:
            return await future
        except asyncio.CancelledError:
            # The job waiting for it was stopped (its time limit): a call already running in an
            # analysis process would go on using a core for nobody, so that process is stopped.
            if submitted is not None and not submitted.cancel():
                self._stop_processes(executor)
            raise
        except (UnreadableDocument, UnsupportedDocument, OverBudget) as exc:
            raise PermanentFailure(str(exc)) from exc
        except MemoryError as exc:
            raise PermanentFailure(
                "reading this file needs more memory than FINCAP_ANALYSIS_MEMORY_MB allows"
            ) from exc

    def _stop_processes(self, executor: Executor | None) -> None:
        """Kill the processes of ``executor`` (a pool whose work nobody waits for any more) and
        put a new pool in its place; calls of other jobs it was running are run again, each
        alone (as after a process death). A thread cannot be stopped: it finishes on its own."""
        if not isinstance(executor, ProcessPoolExecutor):
            return
        # The pool keeps its processes by pid (a private attribute, stable since Python 3.2).
        processes = list((getattr(executor, "_processes", None) or {}).values())
        self._replace(executor)
        for process in processes:
            with contextlib.suppress(ProcessLookupError, ValueError, AttributeError):
                process.kill()
        log.warning("an analysis was stopped (its job ran past the time limit)")

    def _replace(self, broken: Executor | None) -> None:
        """A new pool instead of ``broken`` (unless another call replaced it already)."""
        if self._new_executor is None:
            return
        if broken is not self._executor and self._usable():
            return
        previous = self._executor
        try:
            self._executor = self._new_executor(self._size)
        except Exception as exc:  # e.g. no process can be started: readiness says so
            log.exception("cannot start a new analysis pool")
            self._replacement_error = exc
            return
        self._replacement_error = None
        for dead in {id(pool): pool for pool in (broken, previous) if pool is not None}.values():
            dead.shutdown(wait=False, cancel_futures=True)

    def _usable(self) -> bool:
        if self._replacement_error is not None:
            return False
        if not isinstance(self._executor, ProcessPoolExecutor):
            return True
        if self._executor is not self._asked:
            # Not started: asking it would start an analysis process (the engines' import, a
            # CPU-second) in a server that may never read a file (an API-only replica). Its
            # first call starts it, and a pool that then breaks is found here.
            return True
        try:
            # A broken pool refuses work at once (the public way to ask); a sound one runs a
            # no-op.
            self._executor.submit(int)
        except (BrokenProcessPool, OSError):  # OSError: no process could be started
            return False
        return True

    def ready(self) -> bool:
        """Whether analysis can run: a pool found broken is replaced here, so readiness turns
        false only when no working pool can be made. A pool that has run nothing yet is not
        asked (that would start its process)."""
        if not self._usable():
            self._replace(self._executor)
        return self._usable()

    def shutdown(self, grace_s: float = SHUTDOWN_GRACE_S) -> None:
        """Stop the pool (at exit); work in progress is cancelled. The analysis processes get
        ``grace_s`` to exit (one still starting, or reading a large file, would hold the
        process's stop for as long as it takes), then are killed: they hold no state, and the
        job they ran is taken back and run again."""
        executor = self._executor
        if executor is None:
            return
        # The standard library offers no way to end a pool's processes before 3.14
        # (``terminate_workers``): its ``_processes`` map is the only handle on them (taken
        # before ``shutdown``, which drops it).
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        if not isinstance(executor, ProcessPoolExecutor):
            return
        deadline = time.monotonic() + grace_s
        for process in processes:
            process.join(max(0.0, deadline - time.monotonic()))
        for process in processes:
            if process.is_alive():
                log.warning("analysis process killed at shutdown", extra={"pid": process.pid})
                process.kill()
                process.join(1.0)


# Engine field names → the document's (API) field names.
API_FIELD = {
    "doc_date": "docDate",
    "invoice_id": "invoiceId",
    "tax_amount": "taxAmount",
    "tip_amount": "tipAmount",
    "merchant_legal_name": "merchantLegalName",
    "merchant_tax_id": "merchantTaxId",
    "line_items": "lineItems",
}


def evidence_entries(parsed: ParsedFields) -> list[dict[str, Any]]:
    """Per extracted field: its confidence and where it was read (``Document.evidence``)."""
    return [
        {
            "field": API_FIELD.get(name, name),
            "confidence": found.confidence,
            "page": found.page,
            "box": list(found.box) if found.box is not None else None,
            "text": found.text[:300] if found.text else None,
            "source": found.source,
            "warning": found.warning,
        }
        for name, found in parsed.evidence.items()
    ]


def document_fields(analysis: Analysis) -> dict[str, Any]:
    """Parsed fields → document fields (API-level values)."""
    parsed = analysis.fields
    location = parsed.expense_location
    primary = {
        "countryCode": location.country_code,
        "country": location.country,
        "city": location.city,
        "stateOrProvince": location.state_or_province,
    }
    return {
        "merchant": parsed.merchant,
        "merchantLegalName": parsed.merchant_legal_name,
        "merchantTaxId": parsed.merchant_tax_id,
        "docDate": parsed.doc_date,
        "amount": parsed.amount,
        "subtotal": parsed.subtotal,
        "taxAmount": parsed.tax_amount,
        "tipAmount": parsed.tip_amount,
        "taxLines": [
            {"rate": line.rate, "net": line.net, "tax": line.tax} for line in parsed.tax_lines
        ]
        or None,
        "currency": parsed.currency,
        "invoiceId": parsed.invoice_id,
        "receiptId": parsed.receipt_id,
        "paymentMethod": parsed.payment_method,
        "paymentMethodEnding": parsed.payment_method_ending,
        "docType": parsed.doc_type,
        "summary": parsed.summary or None,
        "category": analysis.category,
        "lineItems": [
            {
                "description": item.description[:500],
                "quantity": item.quantity,
                "unitPrice": item.unit_price,
                "amount": item.amount,
                "taxAmount": item.tax_amount,
            }
            for item in parsed.line_items
        ],
        "expenseLocation": {"primary": primary} if any(primary.values()) else None,
        "evidence": evidence_entries(parsed),
    }


__all__ = ["Analyzer", "PermanentFailure", "document_fields", "evidence_entries"]
