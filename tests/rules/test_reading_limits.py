"""Reading sentences costs up to a second of CPU each, so it is limited: one reading at a time
per key (a second is a 429 at once), a budget of readings per key and minute (a 429 whose
Retry-After says when), never on the event loop, and one at a time in the process. The gated
rules.execute, which reads the sentence for its reviewer, is held to the same limits."""

from __future__ import annotations

import asyncio
import dataclasses
import multiprocessing
import threading
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ProcessPoolExecutor

import httpx
import psutil
import pytest

from engines.rules.parser import RuleDraft, read_rule
from persistence.store import Store
from resolvers.framework.registry import Registry
from resolvers.framework.throttle import BURST, PER_MINUTE, ExpensiveCallGate
from resolvers.services.rules import rule_reading
from resolvers.services.rules.rule_reading import RuleReader
from tests.conftest import Tenant, app_on, make_tenant
from tests.documents.conftest import call

SENTENCE = "Categorize all Uber and Bolt receipts as Travel"
PREPARE_QUERY = f'{{ rulesPrepare(input: {{naturalLanguageRule: "{SENTENCE}"}}) {{ parsedBy }} }}'


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def http(store: Store, registry: Registry, clock: Clock) -> AsyncIterator[httpx.AsyncClient]:
    app = app_on(store, registry)
    app.state.services = dataclasses.replace(
        app.state.services, expensive_calls=ExpensiveCallGate(clock=clock)
    )
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://fincap.test"
    ) as client:
        yield client


@dataclasses.dataclass
class Readings:
    """Every sentence the grammar read, and the thread that read it."""

    threads: list[str] = dataclasses.field(default_factory=list)
    release: threading.Event = dataclasses.field(default_factory=threading.Event)
    hold: bool = False


@pytest.fixture
def readings(monkeypatch: pytest.MonkeyPatch) -> Iterator[Readings]:
    seen = Readings()

    def recorded(sentence: str) -> RuleDraft:
        seen.threads.append(threading.current_thread().name)
        if seen.hold:
            seen.release.wait(timeout=30)
        return read_rule(sentence)

    monkeypatch.setattr(rule_reading, "read_rule", recorded)
    yield seen
    seen.release.set()


async def test_a_second_reading_with_the_same_key_is_refused_at_once(
    http: httpx.AsyncClient, alice: Tenant, bob: Tenant, readings: Readings
) -> None:
    readings.hold = True
    first = asyncio.create_task(
        call(http, alice, "rules.prepare", {"naturalLanguageRule": SENTENCE})
    )
    while not readings.threads:
        await asyncio.sleep(0.005)
    refused = await asyncio.gather(
        *(call(http, alice, "rules.prepare", {"naturalLanguageRule": SENTENCE}) for _ in range(4))
    )
    assert [r.status_code for r in refused] == [429] * 4
    assert refused[0].headers["retry-after"] == "1"
    assert refused[0].json()["error"]["errorMessage"] == (
        "rules.prepare is already running for this API key; retry when it has finished"
    )
    # Another workspace's key waits its turn in the process's one reading thread: not refused.
    other = asyncio.create_task(call(http, bob, "rules.prepare", {"naturalLanguageRule": SENTENCE}))
    # Once Bob's reading waits in the reading thread's queue, it has not started: one sentence
    # at a time in the process.
    queued = rule_reading._reader._thread._work_queue
    for _ in range(12_000):  # a hang guard of a minute
        if not queued.empty() or other.done() or len(readings.threads) > 1:
            break
        await asyncio.sleep(0.005)
    assert not other.done() and queued.qsize() == 1
    assert len(readings.threads) == 1
    readings.release.set()
    assert (await first).status_code == 200 and (await other).status_code == 200
    assert readings.threads == ["rule-reading_0", "rule-reading_0"]  # never the event loop


async def test_a_key_that_spent_its_budget_is_told_when_to_come_back(
    http: httpx.AsyncClient, alice: Tenant, bob: Tenant, clock: Clock, readings: Readings
) -> None:
    for n in range(BURST):
        sentence = f"{SENTENCE} {n}"  # a new sentence each time, as a flood would send
        answer = await call(http, alice, "rules.prepare", {"naturalLanguageRule": sentence})
        assert answer.status_code == 200, answer.text
    spent = await call(http, alice, "rules.prepare", {"naturalLanguageRule": SENTENCE})
    assert spent.status_code == 429
    wait = int(spent.headers["retry-after"])
    assert wait == 60 // PER_MINUTE
    assert f"retry in {wait} seconds" in spent.json()["error"]["errorMessage"]
    assert len(readings.threads) == BURST  # the refused call read nothing
    # GraphQL says the same, with the wait in the error's extensions.
    graph = await http.post(
        "/v1/graphql",
        json={"query": PREPARE_QUERY},
        headers=alice.headers(),
    )
    [error] = graph.json()["errors"]
    assert error["extensions"] == {
        "code": "TOO_MANY_REQUESTS",
        "status": 429,
        "reason": "too_many_requests",
        "retryAfter": wait,
    }
    # Another key is not held back; the first is served again once a reading is earned back.
    assert (await call(http, bob, "rules.prepare", {"naturalLanguageRule": SENTENCE})).is_success
    clock.now += wait
    again = await call(http, alice, "rules.prepare", {"naturalLanguageRule": SENTENCE})
    assert again.status_code == 200


async def test_a_gated_rules_execute_reads_off_the_loop_and_spends_the_same_budget(
    http: httpx.AsyncClient, store: Store, readings: Readings
) -> None:
    carol = await make_tenant(store, "carol@example.com", "Carol GmbH")  # the gate stays on
    for n in range(BURST):
        body = {"naturalLanguageRule": f"{SENTENCE} {n}", "confirm": True}
        waiting = await call(http, carol, "rules.execute", body)
        assert waiting.json()["data"]["result"]["status"] == "approval_required", waiting.text
    assert set(readings.threads) == {"rule-reading_0"}  # the reviewer's reading, off the loop
    refused = await call(
        http, carol, "rules.execute", {"naturalLanguageRule": SENTENCE, "confirm": True}
    )
    assert refused.status_code == 429
    assert await store.db["approval_requests"].count_documents({}) == BURST  # none for it


async def test_sentences_are_read_in_a_child_process_replaced_when_it_dies() -> None:
    """As ``fincap serve`` reads them: in a process of its own, made again if it dies."""
    reader = RuleReader()
    made: list[ProcessPoolExecutor] = []

    def new_process() -> ProcessPoolExecutor:
        made.append(ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")))
        return made[-1]

    reader.use_process(new_process)
    before = {child.pid for child in psutil.Process().children()}
    try:
        first = await reader.read(SENTENCE)
        assert first.rule is not None and first.rule["actions"] == [
            {"type": "set-category", "category": "Travel"}
        ]
        (child,) = [  # the worker, not multiprocessing's resource tracker
            c
            for c in psutil.Process().children()
            if c.pid not in before and "spawn_main" in " ".join(c.cmdline())
        ]
        child.kill()
        child.wait(10)
        again = await reader.read("Archive every receipt from Uber")
        assert again.rule is not None and len(made) == 2  # a new process read it
    finally:
        reader.shutdown()
