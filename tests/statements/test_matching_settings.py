"""matches.settings / matches.configure: the workspace's automatic matching (issue 42 item 2):
on or off, its threshold and margin, bounded, changed by owners and admins, read by members,
and what transactions.candidates decides with."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import httpx
import pytest

from domain.transactions import THRESHOLD_MAX, THRESHOLD_MIN
from engines.reconciliation import WEIGHTS, MatchSettings
from persistence.store import Store
from tests.conftest import Tenant, member_of
from tests.documents.conftest import doc
from tests.statements.helpers import call, result
from tests.statements.test_candidates import imported


def test_the_bounds_follow_the_weights() -> None:
    """The lowest threshold needs a second agreeing signal beyond amount, date and currency;
    the highest is every signal agreeing in full; the default lies between."""
    assert sum(WEIGHTS[name] for name in ("amount", "date", "currency")) < THRESHOLD_MIN
    assert sum(WEIGHTS.values()) == THRESHOLD_MAX
    assert THRESHOLD_MIN <= MatchSettings().threshold <= THRESHOLD_MAX


async def test_defaults_are_the_engines(client: httpx.AsyncClient, alice: Tenant) -> None:
    shown = result(await call(client, alice, "matches.settings", {}))
    default = MatchSettings()
    assert shown == {
        "autoMatch": True, "threshold": default.threshold, "margin": default.margin
    }  # fmt: skip


async def test_an_admin_changes_it_and_a_member_reads_it(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    dave = await member_of(store, alice, "dave@example.com", "admin")
    carol = await member_of(store, alice, "carol@example.com")
    changed = result(await call(client, dave, "matches.configure", {"threshold": 90}))
    assert changed == {"autoMatch": True, "threshold": 90.0, "margin": MatchSettings().margin}
    # Only what was sent changes.
    off = result(await call(client, alice, "matches.configure", {"autoMatch": False}))
    assert off == {"autoMatch": False, "threshold": 90.0, "margin": MatchSettings().margin}
    assert result(await call(client, carol, "matches.settings", {})) == off
    refused = await call(client, carol, "matches.configure", {"autoMatch": True})
    assert refused.status_code == 403, refused.text
    assert result(await call(client, carol, "matches.settings", {}))["autoMatch"] is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"threshold": THRESHOLD_MIN - 1}, "threshold"),
        ({"threshold": THRESHOLD_MAX + 1}, "threshold"),
        ({"threshold": True}, "threshold"),
        ({"margin": -1}, "margin"),
        ({"margin": 51}, "margin"),
        ({"autoMatch": "yes"}, "autoMatch"),
    ],
)
async def test_out_of_bounds_is_refused_naming_the_field(
    client: httpx.AsyncClient, alice: Tenant, body: dict[str, object], field: str
) -> None:
    refused = await call(client, alice, "matches.configure", body)
    assert refused.status_code == 400, refused.text
    assert field in refused.json()["error"]["errorMessage"]
    # Nothing was written.
    assert result(await call(client, alice, "matches.settings", {}))["threshold"] == 70.0


async def test_nothing_to_change_is_refused(client: httpx.AsyncClient, alice: Tenant) -> None:
    refused = await call(client, alice, "matches.configure", {})
    assert refused.status_code == 400 and "autoMatch, threshold or margin" in refused.text


async def test_other_workspaces_are_untouched(
    client: httpx.AsyncClient, alice: Tenant, bob: Tenant
) -> None:
    result(await call(client, alice, "matches.configure", {"threshold": 100, "margin": 20}))
    assert result(await call(client, bob, "matches.settings", {}))["threshold"] == 70.0


async def test_candidates_decide_with_the_workspace_settings(
    client: httpx.AsyncClient, alice: Tenant, store: Store
) -> None:
    result(await call(client, alice, "matches.configure", {"autoMatch": False}))
    await store.documents.writes.insert_many(
        alice.org_id,
        [doc("doc_pret", merchant="Pret A Manger", amount=Decimal("6.45"), currency="GBP",
             docDate=date(2026, 11, 27))],
    )  # fmt: skip
    ids = await imported(client, alice)
    pret = next(i for text, i in ids.items() if "PRET" in text)
    found = result(await call(client, alice, "transactions.candidates", {"id": pret}))
    assert found["candidates"][0]["documentIds"] == ["doc_pret"]
    assert found["outcome"] == "needs_review" and "off" in found["why"]
    result(await call(client, alice, "matches.configure", {"autoMatch": True, "threshold": 125}))
    found = result(await call(client, alice, "transactions.candidates", {"id": pret}))
    assert found["threshold"] == 125.0 and found["outcome"] == "needs_review"
    assert "below the threshold 125" in found["why"]
    result(await call(client, alice, "matches.configure", {"threshold": 70}))
    found = result(await call(client, alice, "transactions.candidates", {"id": pret}))
    assert found["outcome"] == "auto_match", found["why"]
