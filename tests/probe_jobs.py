"""Job kinds that exist only in tests, to exercise the worker pool without real processing."""

from __future__ import annotations

from datetime import timedelta

from app.host.observability import current_request_id
from persistence.jobs import JobRecord
from resolvers.framework.job_kinds import RunAgain, job_kind
from resolvers.framework.services import Services

# What the probe kinds saw, in order; tests clear it first.
SEEN: list[tuple[str, str]] = []
POLL_EVERY = timedelta(minutes=5)


@job_kind("probe")
async def probe(services: Services, job: JobRecord) -> None:
    """Records the request id it ran under."""
    SEEN.append(("probe", current_request_id()))


async def note_give_up(services: Services, job: JobRecord, error: str) -> None:
    SEEN.append(("gave-up", error))


@job_kind("always-fails", on_give_up=note_give_up)
async def always_fails(services: Services, job: JobRecord) -> None:
    """Fails every attempt."""
    raise RuntimeError("no luck")


@job_kind("poll")
async def poll(services: Services, job: JobRecord) -> RunAgain:
    """Periodic work: runs, then asks to run again a while later."""
    SEEN.append(("poll", job["_id"]))
    return RunAgain(at=job["runAfter"] + POLL_EVERY)


@job_kind("fragile", on_give_up=note_give_up)
async def fragile(services: Services, job: JobRecord) -> None:
    """Records that it ran (its workers may die before it does)."""
    SEEN.append(("fragile", job["_id"]))
