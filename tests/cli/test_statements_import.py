"""``fincap statements import FILE`` against the fake server: the body sent, the summary."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from app.cli import main
from tests.cli.fake_server import FakeServer, running_fake

STATEMENT = Path(__file__).parent.parent / "fixtures" / "statements" / "csv-lloyds.csv"
ANSWER = {
    "format": "csv",
    "added": 4,
    "alreadyThere": 1,
    "notBooked": 0,
    "account": "12345678",
    "periodStart": "2026-11-13",
    "periodEnd": "2026-11-28",
    "closingBalance": {"amount": 1204.1, "currency": "GBP", "date": "2026-11-28"},
    "mapping": {"bookingDate": "Transaction Date"},
    "mappingSource": "given",
}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServer]:
    with running_fake() as server:
        server.answers["statements.import"] = (200, ANSWER)
        yield server


def run(fake: FakeServer, tmp_path: Path, *args: str) -> Result:
    fake.bodies.clear()
    environment = {"FINCAP_HOST": fake.url, "FINCAP_API_KEY": "sk_test", "HOME": str(tmp_path)}
    return CliRunner().invoke(main, list(args), env=environment, prog_name="fincap")


def test_the_file_and_options_become_the_body(fake: FakeServer, tmp_path: Path) -> None:
    mapping = tmp_path / "lloyds.json"
    mapping.write_text(json.dumps({"bookingDate": "Transaction Date", "debit": "Debit Amount"}))
    outcome = run(
        fake,
        tmp_path,
        "statements",
        "import",
        str(STATEMENT),
        "--format",
        "csv",
        "--mapping",
        f"@{mapping}",
        "--currency",
        "GBP",
        "--no-save-mapping",
    )
    assert outcome.exit_code == 0, outcome.output
    slug, body, _ = fake.bodies[0]
    assert slug == "statements.import"
    assert base64.b64decode(body.pop("base64Data")) == STATEMENT.read_bytes()
    assert body == {
        "fileName": "csv-lloyds.csv",
        "format": "csv",
        "mapping": {"bookingDate": "Transaction Date", "debit": "Debit Amount"},
        "currency": "GBP",
        "saveMapping": False,
    }


def test_the_summary_and_json(
    fake: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("app.cli.statements.wants_json", lambda flag: flag)
    shown = run(fake, tmp_path, "statements", "import", str(STATEMENT))
    assert shown.exit_code == 0, shown.output
    assert "4 added, 1 already there (csv)" in shown.output
    assert "closing  1204.10 GBP on 2026-11-28" in shown.output
    as_json = run(fake, tmp_path, "statements", "import", str(STATEMENT), "--json")
    assert json.loads(as_json.output) == ANSWER


def test_a_bad_mapping_is_a_usage_error_and_sends_nothing(fake: FakeServer, tmp_path: Path) -> None:
    outcome = run(fake, tmp_path, "statements", "import", str(STATEMENT), "--mapping", "{nope")
    assert outcome.exit_code == 2 and "not JSON" in outcome.output
    assert fake.bodies == []


def test_a_refused_file_prints_the_servers_reason(fake: FakeServer, tmp_path: Path) -> None:
    fake.answers["statements.import"] = (400, "Invalid request: base64Data: csv file, line 5: x")
    try:
        outcome = run(fake, tmp_path, "statements", "import", str(STATEMENT))
    finally:
        fake.answers["statements.import"] = (200, ANSWER)
    assert outcome.exit_code != 0 and "csv file, line 5" in outcome.output
