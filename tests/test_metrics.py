"""/metrics: Prometheus text with bounded labels (route templates, known slugs only)."""

from __future__ import annotations

import httpx

from persistence.store import Store
from resolvers.framework.job_kinds import JobKinds
from tests import probe_jobs
from tests.conftest import Tenant, worker_pool


async def test_requests_and_capability_calls_are_counted(
    client: httpx.AsyncClient, alice: Tenant
) -> None:
    await client.post("/v1/capabilities/workspaces.list", json={}, headers=alice.headers())
    await client.post("/v1/capabilities/workspaces.list", json={"x": 1}, headers=alice.headers())
    await client.post("/v1/capabilities/no.such-thing", json={})
    await client.get("/v1/nowhere/at/all")
    text = (await client.get("/metrics")).text
    assert (
        'fincap_http_requests_total{method="POST",route="/v1/capabilities/{slug}",status="200"} 1.0'
        in text
    )
    assert 'fincap_capability_calls_total{capability="workspaces.list",status="400"} 1.0' in text
    assert "no.such-thing" not in text and "/v1/nowhere" not in text  # unbounded values stay out
    assert 'fincap_http_requests_total{method="GET",route="unmatched",status="404"} 1.0' in text
    assert 'fincap_http_request_duration_seconds_bucket{le="0.005",method="POST"' in text


async def test_job_outcomes_reach_the_callback(store: Store) -> None:
    outcomes: list[tuple[str, str]] = []

    kinds = JobKinds.from_modules([probe_jobs]).freeze()
    pool = worker_pool(store, kinds, on_job=lambda k, o: outcomes.append((k, o)))
    await store.jobs.enqueue("org_a", "probe", {})
    await store.jobs.enqueue("org_a", "unknown-kind", {}, max_attempts=1)
    assert await pool.run_until_idle() == 2
    # Both are due at once: their order is not defined.
    assert sorted(outcomes) == [("probe", "done"), ("unknown-kind", "dead")]
