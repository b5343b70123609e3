"""Job kinds: background work declared next to its code, collected like capabilities.

``@job_kind`` only marks a handler; ``JobKinds.from_modules`` collects the marked handlers of an
explicit tuple of modules (``resolvers.JOB_MODULES``) and ``freeze()`` forbids later additions.
The worker pool runs a claimed job with its kind's handler and, when the job has used up its
attempts, calls the kind's ``on_give_up`` so the work it stood for is marked as failed.

A handler returns None when the job is done, or ``RunAgain`` to have the same job queued again
later (periodic work: a mailbox poller, a billing period close).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from persistence.jobs import JobRecord

if TYPE_CHECKING:
    from resolvers.framework.services import Services

F = TypeVar("F", bound=Callable[..., Any])
JOB_KIND_ATTR = "__fincap_job_kind__"


@dataclass(frozen=True)
class RunAgain:
    """A handler's answer: done for now, run the same job again at ``at``."""

    at: datetime


JobHandler = Callable[["Services", JobRecord], Awaitable[RunAgain | None]]
GiveUp = Callable[["Services", JobRecord, str], Awaitable[None]]


@dataclass(frozen=True)
class JobKindSpec:
    """Everything the worker pool needs to know about one kind of job."""

    name: str
    handler: JobHandler
    on_give_up: GiveUp | None = None
    # Older names of this kind: jobs queued under them before a rename still run.
    aliases: tuple[str, ...] = ()
    # Whether a job stopped at the time limit is tried again later (False: given up at once,
    # as work that would take as long again: reading a document).
    retry_after_time_limit: bool = True


def job_kind(
    name: str,
    *,
    on_give_up: GiveUp | None = None,
    aliases: Iterable[str] = (),
    retry_after_time_limit: bool = True,
) -> Callable[[F], F]:
    """Mark ``fn`` as the handler of job kind ``name``; no import-time registration.

    ``on_give_up(services, job, error)`` runs once after the last failed attempt (or at once
    for a job stopped at the time limit, unless ``retry_after_time_limit``).
    """

    def mark(fn: F) -> F:
        spec = JobKindSpec(
            name=name,
            handler=fn,
            on_give_up=on_give_up,
            aliases=tuple(aliases),
            retry_after_time_limit=retry_after_time_limit,
        )
        setattr(fn, JOB_KIND_ATTR, spec)
        return fn

    return mark


class JobKindError(Exception):
    """The job kinds were assembled wrongly (a duplicate name, a late addition)."""


class JobKinds:
    """Job kinds by name (aliases resolve to the same spec), frozen before workers start."""

    def __init__(self) -> None:
        self._by_name: dict[str, JobKindSpec] = {}
        self._frozen = False

    @classmethod
    def from_modules(cls, modules: Iterable[ModuleType]) -> JobKinds:
        kinds = cls()
        for module in modules:
            for _, member in inspect.getmembers(module):
                spec = getattr(member, JOB_KIND_ATTR, None)
                if isinstance(spec, JobKindSpec):
                    kinds.add(spec)
        return kinds

    def add(self, spec: JobKindSpec) -> None:
        if self._frozen:
            raise JobKindError(f"job kinds are frozen; cannot add {spec.name}")
        for name in (spec.name, *spec.aliases):
            if name in self._by_name:
                raise JobKindError(f"duplicate job kind {name!r}")
            self._by_name[name] = spec

    def freeze(self) -> JobKinds:
        self._frozen = True
        return self

    def get(self, name: str) -> JobKindSpec | None:
        return self._by_name.get(name)

    def __iter__(self) -> Iterator[JobKindSpec]:
        """Each kind once (aliases are not listed twice), by name."""
        unique = {spec.name: spec for spec in self._by_name.values()}
        return iter(sorted(unique.values(), key=lambda spec: spec.name))
