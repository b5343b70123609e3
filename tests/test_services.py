"""One services factory (``app.host.services.build_services``): the API process, the worker
processes and the tests get their ``Services`` from it, so a test runs against services wired the
way a server wires them."""

from __future__ import annotations

import ast
from pathlib import Path

from app.host.config import Settings
from app.host.main import create_app
from app.host.processing import running_workers
from app.host.services import build_services
from engines.keyring import Keyring
from persistence.store import Store
from resolvers import build_registry
from tests.conftest import app_on

ROOT = Path(__file__).resolve().parents[1]
FACTORY = ROOT / "app/host/services.py"


def constructions(path: Path) -> list[str]:
    """Where ``path`` calls ``Services(...)`` itself."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name == "Services":
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_nothing_but_the_factory_builds_services() -> None:
    packages = ("app", "resolvers", "schema", "persistence", "engines", "tests", "bench")
    found = [
        where
        for package in packages
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != FACTORY
        for where in constructions(path)
    ]
    assert found == []
    assert constructions(FACTORY)  # the scan sees a construction where there is one


SETTINGS = Settings(
    public_url="https://books.example.com",
    auth_cache_seconds=7,
    outbound_allow="10.1.2.3",
    xero_client_id="xero-app",
    xero_client_secret="xero-secret",
    secret_key="s" * 43,
)


def wired_from_settings(services: object) -> None:
    """What a server's services take from its settings, checked on ``services``."""
    assert services.base_url == "https://books.example.com"  # type: ignore[attr-defined]
    assert services.auth_cache.ttl == 7  # type: ignore[attr-defined]
    assert services.outbound == SETTINGS.outbound_policy()  # type: ignore[attr-defined]
    xero = services.connectors.get("xero")  # type: ignore[attr-defined]
    assert xero is not None and xero.configured()
    token = services.keyring.sign("probe", b"x")  # type: ignore[attr-defined]
    assert Keyring.from_text("s" * 43).verify("probe", token) == b"x"


async def test_the_app_given_services_serves_with_them(store: Store) -> None:
    services = build_services(SETTINGS, store, registry=build_registry())
    app = create_app(SETTINGS, services=services)
    assert app.state.services is services
    assert create_app(SETTINGS).state.services is None  # its lifespan builds them when it starts
    wired_from_settings(app_on(store, settings=SETTINGS).state.services)


async def test_workers_get_the_same_wiring(store: Store) -> None:
    async with running_workers(
        store, SETTINGS, count=0, keyring=Keyring.from_text("s" * 43)
    ) as pool:
        wired_from_settings(pool.services)
        assert pool.services.analyzer is not None  # the worker pool's own analysis processes
