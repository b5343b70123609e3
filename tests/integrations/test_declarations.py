"""A connector is one declaration in one tuple (``engines.connectors.registry``): a stand-in
added to the tuple shows up in everything that used to repeat a connector by hand.

The derived lists are computed when their modules are imported, as the service does it, so the
stand-in is added in a fresh interpreter before anything reads the tuple; the probe reports
what each place made of it and the assertions here read the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engines.connectors.catalog import CATALOG
from engines.connectors.registry import CONNECTORS
from engines.rules.lexicon import INTEGRATIONS

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import json
import engines.connectors.registry as registry
from tests.integrations.stand_in_connector import LEDGERLY, LedgerlyConnector
registry.CONNECTORS = (*registry.CONNECTORS, LEDGERLY)

from pydantic import ValidationError
from app.host import config_reference
from app.host.config import Settings
from app.graphql.face import service_schema
from app.mcp.tools import Catalog
from app.rest.integrations import integration_routes
from app.rest.openapi import build_openapi
from app.host.services import connectors_from
from engines.connectors.catalog import CATALOG
from engines.connectors.mapping import effective_mapping
from engines.rules.lexicon import INTEGRATIONS
from engines.rules.parser import read_rule
from resolvers import build_registry
from schema.rules import RuleAction

report = {}
report["catalog"] = [[e.id, e.name, e.category] for e in CATALOG]
mapping = effective_mapping("ledgerly", None)
report["mapping"] = [mapping.account_codes, mapping.default_account, mapping.payment_account]
report["lexicon"] = {word: p for word, p in INTEGRATIONS.items() if p == "ledgerly"}
report["read"] = read_rule("When an invoice from Google arrives, send it to the ledger").rule
RuleAction(type="send-to-integration", integration="ledgerly")
try:
    RuleAction(type="send-to-integration", integration="nobody")
    report["undeclared_refused"] = False
except ValidationError:
    report["undeclared_refused"] = True

settings = Settings.from_env()
report["settings"] = settings.connector_settings(LEDGERLY)
report["secret_hidden"] = "ledgerly-secret" not in repr(settings)
report["warnings"] = settings.refused_endpoints()
report["docs"] = [line for line in config_reference.table().splitlines() if "LEDGERLY" in line]
connector = connectors_from(settings).get("ledgerly")
report["wired"] = [type(connector).__name__, vars(connector.settings)]

registry_ = build_registry()
(callback,) = [r for r in integration_routes(registry_) if r.path.endswith("/callback")]
report["callback"] = [name for name, _ in callback.query]
openapi = build_openapi(registry_, "http://x")
operation = openapi["paths"]["/integrations/{integration_id}/callback"]["get"]
report["openapi_callback"] = [p["name"] for p in operation["parameters"]]
report["openapi_enum"] = "ledgerly" in json.dumps(openapi["components"]["schemas"])
report["graphql"] = [
    line.strip() for line in service_schema(registry_).as_str().splitlines() if "ledgerly" in line
]
tools = json.dumps([e.tool.model_dump(mode="json") for e in Catalog(registry_, [])])
report["mcp"] = tools.count("ledgerly")
print(json.dumps(report, default=str))
"""


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    env = {
        **os.environ,
        "FINCAP_LEDGERLY_CLIENT_ID": "ledgerly-app",
        "FINCAP_LEDGERLY_CLIENT_SECRET": "ledgerly-secret",
        "FINCAP_LEDGERLY_API_URL": "http://localhost:9/",
        "FINCAP_LEDGERLY_REGION": "us",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_the_real_tuple_is_xero_and_quickbooks() -> None:
    assert [c.id for c in CONNECTORS] == ["xero", "quickbooks"]
    assert [e.id for e in CATALOG] == ["quickbooks", "xero"]
    assert INTEGRATIONS["qbo"] == "quickbooks" and "ledgerly" not in INTEGRATIONS


def test_the_catalog_lists_it(report: dict[str, Any]) -> None:
    # Listed by id, wherever the tuple declares it.
    assert report["catalog"] == [
        ["ledgerly", "Ledgerly Books", "accounting"],
        ["quickbooks", "QuickBooks Online", "accounting"],
        ["xero", "Xero", "accounting"],
    ]


def test_its_default_mapping_applies(report: dict[str, Any]) -> None:
    assert report["mapping"] == [{"Meals": "6100", "Travel": "6200"}, "6999", "Bank 1"]


def test_the_rule_language_reads_its_words(report: dict[str, Any]) -> None:
    assert report["lexicon"] == {
        "ledgerly": "ledgerly",
        "ledgerly books": "ledgerly",
        "the ledger": "ledgerly",
    }
    assert report["read"]["actions"] == [{"type": "send-to-integration", "integration": "ledgerly"}]


def test_the_rules_schema_accepts_it_and_still_refuses_others(report: dict[str, Any]) -> None:
    assert report["undeclared_refused"] is True
    assert report["openapi_enum"] is True
    assert "ledgerly" in report["graphql"]  # the provider enum's value
    assert '"""From integrations.list (xero, quickbooks, ledgerly)"""' in report["graphql"]
    assert report["mcp"] >= 1


def test_its_settings_are_read_documented_and_wired(report: dict[str, Any]) -> None:
    assert report["settings"] == {
        "client_id": "ledgerly-app",
        "client_secret": "ledgerly-secret",
        "authorize_url": "https://ledgerly.example/authorize",
        "token_url": "https://ledgerly.example/token",
        "api_url": "http://localhost:9/",
        "region": "us",
    }
    assert report["secret_hidden"] is True
    assert report["docs"][0] == (
        "| `FINCAP_LEDGERLY_CLIENT_ID` | unset | "
        "Ledgerly app's client id; unset: Ledgerly cannot connect |"
    )
    names = ("CLIENT_ID", "CLIENT_SECRET", "AUTHORIZE_URL", "TOKEN_URL", "API_URL", "REGION")
    assert [row.split("`")[1] for row in report["docs"]] == [
        f"FINCAP_LEDGERLY_{name}" for name in names
    ]
    name, app_settings = report["wired"]
    assert name == "LedgerlyConnector"
    assert app_settings["region"] == "us" and app_settings["client_id"] == "ledgerly-app"
    assert app_settings["api_url"] == "http://localhost:9"  # the API root without its slash
    # Its outbound endpoints are checked against the outbound policy like the others.
    assert any(w.startswith("FINCAP_LEDGERLY_API_URL names localhost") for w in report["warnings"])
    assert not any("FINCAP_LEDGERLY_AUTHORIZE_URL" in w for w in report["warnings"])


def test_the_callback_documents_its_redirect_parameters(report: dict[str, Any]) -> None:
    assert report["callback"] == ["code", "state", "error", "realmId", "ledgerRegion"]
    assert "ledgerRegion" in report["openapi_callback"]
