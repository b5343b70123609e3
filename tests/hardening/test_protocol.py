"""Items 5, 16, 17, 18: bounded method labels, Allow on every 405, inputs as the OpenAPI
document describes them, and a generated Python client that works."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route, WebSocketRoute

from persistence.store import Store
from resolvers.framework.registry import Registry
from tests.conftest import Tenant, app_on
from tests.documents.conftest import call, result


async def test_invented_methods_share_one_label_and_get_405(client: httpx.AsyncClient) -> None:
    sizes = []
    for n in range(300):
        response = await client.request(f"X{n}METHOD", "/v1/capabilities/documents.get")
        assert response.status_code == 405 and response.headers["allow"] == "POST"
        if n in (9, 19, 299):  # the first read adds /metrics' own series
            sizes.append(len((await client.get("/metrics")).text))
    text = (await client.get("/metrics")).text
    assert "X1METHOD" not in text
    assert 'method="other",route="/v1/capabilities/{slug}",status="405"} 300.0' in text
    # Counts change, series do not: 290 more invented methods add no lines.
    assert sizes[2] - sizes[1] < 50


async def test_every_route_names_its_methods_on_405(
    client: httpx.AsyncClient, store: Store, registry: Registry
) -> None:
    app = app_on(store, registry)
    checked = 0
    for route in app.routes:
        if isinstance(route, WebSocketRoute):
            continue  # the GraphQL subscriptions' socket, beside the HTTP route of its path
        assert isinstance(route, Route)
        path = route.path.replace("{slug}", "documents.get").replace("{path:path}", "x.js")
        path = path.replace("{document_id}", "doc_x")
        # The GraphQL view (methods None) is an ASGI app with its own 405.
        expected = {"GET", "POST"} if route.methods is None else set(route.methods)
        for method in {"GET", "POST", "PUT", "DELETE", "PATCH"} - expected:
            response = await client.request(method, path)
            assert response.status_code == 405, (method, path)
            assert {m.strip() for m in response.headers["allow"].split(",")} == expected
            checked += 1
    assert checked > 20


@pytest.mark.parametrize(
    ("slug", "body", "field"),
    [
        ("documents.search", {"limit": True}, "limit"),
        ("documents.search", {"limit": "5"}, "limit"),
        ("documents.search", {"useSearch": 1}, "useSearch"),
        ("documents.search", {"sortOrder": True}, "sortOrder"),
        (
            "documents.bulk-edit",
            {"merchant": "x", "changes": {"category": "y"}, "dryRun": "false"},
            "dryRun",
        ),
        ("documents.inspect", {"id": "doc_a", "maxPages": True}, "maxPages"),
        ("documents.update", {"id": "doc_a", "isRecurring": 0}, "isRecurring"),
        ("documents.update", {"id": "doc_a", "amount": "12.345"}, "amount"),
        ("documents.update", {"id": "doc_a", "amount": "1e3"}, "amount"),
        ("documents.update", {"id": "doc_a", "amount": " 12"}, "amount"),
        ("documents.update", {"id": "doc_a", "amount": True}, "amount"),
        ("documents.update", {"id": "doc_a", "taxAmount": 0.001}, "taxAmount"),
    ],
)
async def test_json_types_are_not_coerced(
    client: httpx.AsyncClient, seeded: Tenant, slug: str, body: dict[str, Any], field: str
) -> None:
    response = await call(client, seeded, slug, body)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["errorMessage"].startswith(f"Invalid request: {field}")


async def test_money_as_documented_is_accepted(client: httpx.AsyncClient, seeded: Tenant) -> None:
    openapi = (await client.get("/openapi.json")).json()
    amount = openapi["components"]["schemas"]["UpdateDocument"]["properties"]["amount"]
    number, string, null = amount["anyOf"]
    assert null == {"type": "null"}
    assert number["type"] == "number" and number["maximum"] == 9999999999999.99
    assert string == {"type": "string", "pattern": r"^-?[0-9]{1,13}(\.[0-9]{1,2})?$"}
    for value, stored in (("12.30", 12.3), (-7, -7.0), (0.07, 0.07), ("9999999999999.99", None)):
        updated = result(
            await call(client, seeded, "documents.update", {"id": "doc_a", "amount": value})
        )
        assert updated["document"]["amount"] == (stored if stored is not None else 9999999999999.99)


def test_one_schema_name_per_model(client: httpx.AsyncClient) -> None:
    from app.rest.openapi import build_openapi
    from resolvers import build_registry

    text = json.dumps(build_openapi(build_registry(), "http://x"))
    assert "-Input" not in text and "-Output" not in text
    schemas = json.loads(text)["components"]["schemas"]
    titles = [schema.get("title") for schema in schemas.values() if schema.get("title")]
    assert len(titles) == len(set(titles))
    assert schemas["LineItemInput"]["title"] == "LineItemInput"


async def test_a_generated_python_client_calls_a_capability(
    client: httpx.AsyncClient, alice: Tenant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = tmp_path / "openapi.json"
    document = (await client.get("/openapi.json")).json()
    spec.write_text(json.dumps(document))
    # The generator reads JSON, text and application/octet-stream bodies; the file routes send
    # images and PDF in their own types, which its configuration maps to bytes.
    binary = sorted(
        {
            mime
            for item in document["paths"].values()
            for operation in item.values()
            for answer in operation["responses"].values()
            for mime, body in answer.get("content", {}).items()
            if body.get("schema") == {"type": "string", "format": "binary"}
        }
    )
    assert {"image/jpeg", "application/pdf"} <= set(binary)
    overrides = "".join(f'  "{mime}": application/octet-stream\n' for mime in binary)
    config = tmp_path / "config.yaml"
    config.write_text(
        "post_hooks: []\nproject_name_override: fincap_client\n"
        f"content_type_overrides:\n{overrides}"
    )
    generated = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(spec),
            "--config",
            str(config),
            "--meta",
            "none",
            "--output-path",
            str(tmp_path / "fincap_client"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    output = generated.stdout + generated.stderr
    assert generated.returncode == 0, output
    assert "warning" not in output.lower() and "error" not in output.lower(), output
    generated_models = {p.stem for p in (tmp_path / "fincap_client" / "models").iterdir()}
    assert {"document", "line_item", "line_item_input", "update_document"} <= generated_models

    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("fincap_client")
    convert = importlib.import_module("fincap_client.api.currency.currency_convert")
    models = importlib.import_module("fincap_client.models")
    api = package.AuthenticatedClient(
        base_url="http://fincap.test/v1",
        token=alice.api_key,
        httpx_args={"transport": client._transport},
    )
    body = models.ConvertCurrency(amount=100, from_currency="EUR", to_currency="USD")
    answer = await convert.asyncio(client=api, body=body)
    assert answer.success is True and answer.code == 200
    conversion = answer.data.result
    assert conversion.from_currency == "EUR" and conversion.converted_amount > 0


def test_every_status_the_faces_answer_is_documented() -> None:
    from app.rest.openapi import build_openapi
    from resolvers import build_registry

    registry = build_registry()
    paths = build_openapi(registry, "http://x")["paths"]
    expensive_paths = {f"/capabilities/{spec.slug}" for spec in registry if spec.cost}
    assert expensive_paths == {
        "/capabilities/documents.inspect",
        "/capabilities/documents.reprocess",  # queues OCR of up to 50 originals
        "/capabilities/rules.prepare",
        "/capabilities/rules.execute",
        # Reading a statement file; the matcher over a transaction's candidates.
        "/capabilities/statements.import",
        "/capabilities/transactions.candidates",
        "/capabilities/matches.confirm",
    }
    for path, item in paths.items():
        if not path.startswith("/capabilities/"):
            continue
        statuses = set(item["post"]["responses"])
        assert {"200", "400", "401", "403", "404", "413", "500"} <= statuses, path
        assert ({"422", "429"} <= statuses) == (path in expensive_paths), path
