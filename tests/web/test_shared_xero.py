"""The shared dashboard's fake Xero (``XeroPerWorkspace``): each workspace's grants, calls,
bills and injected failures are its own, whichever workspace's traffic the worker's server
sends in between. In process, no server nor browser."""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlsplit

import httpx

from engines.keyring import Keyring
from resolvers.services.connections.integration_connections import STATE_PURPOSE
from tests.integrations.fakes import CLIENT_ID, CLIENT_SECRET, Failure
from tests.web.shared_dashboard import XeroPerWorkspace, workspace_in

KEYRING = Keyring.generate()
BASIC = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
BILL = {
    "Type": "ACCPAY",
    "Contact": {"Name": "Corner Café"},
    "Date": "2026-11-01",
    "DueDate": "2026-12-01",
    "CurrencyCode": "GBP",
    "LineAmountTypes": "Inclusive",
    "LineItems": [{"Description": "Coffee", "Quantity": 1, "UnitAmount": 3.5, "AccountCode": "4"}],
    "Status": "DRAFT",
}


def state_for(workspace_id: str) -> str:
    """A connect flow's state as fincap signs it (its payload names the workspace)."""
    return KEYRING.sign(STATE_PURPOSE, json.dumps({"w": workspace_id, "n": "x"}).encode())


async def connect(client: httpx.AsyncClient, workspace_id: str) -> dict[str, str]:
    """The consent for ``workspace_id`` and the code exchanged: the tokens."""
    consent = await client.get(
        "/authorize",
        params={
            "client_id": CLIENT_ID,
            "response_type": "code",
            "redirect_uri": "http://fincap.test/callback",
            "scope": "accounting.transactions",
            "state": state_for(workspace_id),
        },
    )
    assert consent.status_code == 302, consent.text
    code = parse_qs(urlsplit(consent.headers["location"]).query)["code"][0]
    tokens = await client.post(
        "/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": "http://fincap.test/callback",
        },
        headers={"Authorization": f"Basic {BASIC}"},
    )
    assert tokens.status_code == 200, tokens.text
    return dict(tokens.json())


async def send_bill(client: httpx.AsyncClient, token: str) -> httpx.Response:
    return await client.put(
        "/api.xro/2.0/Invoices",
        json={"Invoices": [BILL]},
        headers={"Authorization": f"Bearer {token}", "xero-tenant-id": "tenant-acme"},
    )


def test_the_workspace_is_read_from_the_state() -> None:
    assert workspace_in(state_for("org_a")) == "org_a"
    assert workspace_in("not a state") == ""
    assert workspace_in("bm90IGpzb24.tag") == ""  # base64, not JSON


async def test_each_workspace_sees_its_own_traffic_and_failures() -> None:
    xero = XeroPerWorkspace()
    mine, theirs = xero.of("org_mine"), xero.of("org_theirs")
    transport = httpx.ASGITransport(app=xero.app())
    async with httpx.AsyncClient(transport=transport, base_url="http://xero.test") as client:
        my_grant = await connect(client, "org_mine")
        their_grant = await connect(client, "org_theirs")
        my_token, their_token = my_grant["access_token"], their_grant["access_token"]
        # A failure injected in mine is not spent on theirs: their bill goes through.
        mine.fail = [Failure("PUT", "/Invoices", 400)]
        assert (await send_bill(client, their_token)).status_code == 200
        assert (await send_bill(client, my_token)).status_code == 400
        assert (await send_bill(client, my_token)).status_code == 200
        # Each records its own calls and holds its own bills.
        assert mine.calls.count(("PUT", "/api.xro/2.0/Invoices")) == 2
        assert theirs.calls.count(("PUT", "/api.xro/2.0/Invoices")) == 1
        assert len(mine.bills) == len(theirs.bills) == 1
        assert not set(mine.bills) & set(theirs.bills)
        # A refresh token is exchanged by the fake that issued it.
        refreshed = await client.post(
            "/token",
            data={"grant_type": "refresh_token", "refresh_token": their_grant["refresh_token"]},
            headers={"Authorization": f"Basic {BASIC}"},
        )
        assert refreshed.status_code == 200, refreshed.text
        assert (theirs.refreshes, mine.refreshes) == (1, 0)
        assert refreshed.json()["access_token"] in theirs.access
        # What belongs to no workspace is refused and recorded by the shared fake.
        assert (await send_bill(client, "at-unknown")).status_code == 401
        consent = await client.get("/authorize", params={"state": state_for("org_nobody")})
        assert consent.status_code == 400
    assert xero.calls == [("PUT", "/api.xro/2.0/Invoices"), ("GET", "/authorize")]
    assert not mine.codes and not theirs.codes  # each code went to the fake that issued it
