"""The ``fincap`` executable against a live ``fincap serve``, as a user runs it in a shell.

One server (subprocess, embedded store) for the module; each CLI call is a real subprocess
of the installed ``fincap`` script with its own ``HOME``, so the config file is real too.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.live import discard, refused_address, start_serve
from tests.test_cli_serve import admin, admin_like

pytestmark = pytest.mark.wire

FINCAP = str(Path(sys.executable).with_name("fincap"))
FIXTURES = Path(__file__).parents[1] / "fixtures" / "extraction"
# Bounds on a loaded machine, not expectations: a CLI call (a new Python process) and the wait
# for OCR may take minutes there; a hung call still fails.
CALL_TIMEOUT_S = 600
PROCESSING_TIMEOUT_S = "300"


@dataclass
class Live:
    base: str
    key: str
    org: str
    other_org: str
    home: Path


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    root = tmp_path_factory.mktemp("cli-live")
    data_dir = root / "data"
    env = {**os.environ, "FINCAP_DATA_DIR": str(data_dir), "MONGODB_URI": ""}
    server = start_serve([FINCAP, "serve"], env, root / "serve.log")
    try:
        # Both commands join the server's store (without it, each would start a private one).
        boot = admin(data_dir, "bootstrap", "--email", "me@example.com", "--workspace", "Home")
        other = admin_like(
            data_dir, "admin", "create-workspace", "--email", "me@example.com", "--name", "Side"
        )
        yield Live(server.base, boot["apiKey"], boot["orgId"], other["orgId"], root / "home")
    finally:
        discard(server.process)  # nothing here checks a clean stop


@pytest.fixture
def home(live: Live, tmp_path: Path) -> Path:
    """A fresh ``~`` for each test."""
    live.home = tmp_path / "home"
    live.home.mkdir()
    return live.home


def fincap(
    live: Live, *args: str, input: str | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FINCAP_")}
    return subprocess.run(
        [FINCAP, *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT_S,
        env={**clean, "HOME": str(live.home), "FINCAP_HOST": live.base, **env},
    )


def result_of(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_login_workspace_and_logout_keep_a_private_config(live: Live, home: Path) -> None:
    refused = fincap(live, "auth", "login", input="sk_not_a_real_key\n")
    assert refused.returncode == 3, refused.stderr
    assert not (home / ".fincap" / "config.json").exists()  # a bad key is never saved

    logged_in = fincap(live, "auth", "login", input=live.key + "\n")
    assert logged_in.returncode == 0, logged_in.stderr
    config = home / ".fincap" / "config.json"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert json.loads(config.read_text())["apiKey"] == live.key

    status = result_of(fincap(live, "auth", "status", "--json"))
    assert status["keyValid"] is True and status["workspaces"] == 2
    assert status["apiKeyFrom"] == str(config) and status["hostFrom"] == "environment"
    assert live.key not in json.dumps(status)  # shown masked

    listed = result_of(fincap(live, "workspace", "list", "--json"))
    assert {w["id"] for w in listed["workspaces"]} == {live.org, live.other_org}

    # Two workspaces: a capability needs one chosen, and says how.
    unchosen = fincap(live, "documents", "search", "--limit", "1")
    assert unchosen.returncode == 2
    assert "fincap workspace use" in unchosen.stderr

    assert fincap(live, "workspace", "use", live.other_org).returncode == 0
    assert json.loads(config.read_text())["orgId"] == live.other_org
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert result_of(fincap(live, "documents", "search", "--limit", "1"))["documents"] == []
    wrong = fincap(live, "workspace", "use", "org_nobody")
    assert wrong.returncode == 3 and "org_nobody" in wrong.stderr

    assert fincap(live, "workspace", "clear").returncode == 0
    assert "orgId" not in json.loads(config.read_text())
    assert fincap(live, "auth", "logout").returncode == 0
    assert "apiKey" not in json.loads(config.read_text())
    no_key = fincap(live, "currency", "convert", "--amount", "1", "--from-currency", "EUR",
                    "--to-currency", "USD")  # fmt: skip
    assert no_key.returncode == 3, no_key.stderr


def test_capability_commands_over_the_rest_route(live: Live, home: Path) -> None:
    keyed = {"FINCAP_API_KEY": live.key, "FINCAP_ORG_ID": live.org}
    converted = result_of(
        fincap(
            live,
            "currency",
            "convert",
            "--amount",
            "12.50",
            "--from-currency",
            "EUR",
            "--to-currency",
            "USD",
            **keyed,
        )
    )
    assert converted["fromCurrency"] == "EUR" and converted["toCurrency"] == "USD"
    assert float(converted["amount"]) > 0

    piped = fincap(live, "currency", "convert", input='{"amount": 1, "fromCurrency": "EUR", '
                   '"toCurrency": "GBP"}', **keyed)  # fmt: skip
    assert result_of(piped)["toCurrency"] == "GBP"

    invalid = fincap(live, "currency", "convert", "--amount", "1", "--from-currency", "EURO",
                     "--to-currency", "USD", **keyed)  # fmt: skip
    assert invalid.returncode == 2
    assert invalid.stderr.startswith("error: Invalid request: fromCurrency")  # the server says

    missing = fincap(live, "documents", "get", "--id", "doc_missing", **keyed)
    assert missing.returncode == 4 and "not found" in missing.stderr.lower()

    bad_key = fincap(live, "documents", "search", **{**keyed, "FINCAP_API_KEY": "sk_wrong"})
    assert bad_key.returncode == 3

    raw = json.loads(fincap(live, "documents", "count", "--raw", **keyed).stdout)
    assert raw["success"] is True and "result" in raw["data"]

    with refused_address() as nowhere:
        down = fincap(live, "documents", "search", **keyed, FINCAP_HOST=nowhere)
    assert down.returncode == 5 and "cannot reach" in down.stderr


def test_upload_folder_and_wait_for_the_fields(live: Live, home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "receipts"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(FIXTURES / "text-layer.pdf", folder / "invoice.pdf")
    shutil.copy(FIXTURES / "receipt.png", folder / "nested" / "receipt.png")
    (folder / "broken.pdf").write_bytes(b"%PDF-1.4\nnot really a PDF\n%%EOF\n")
    (folder / "notes.txt").write_text("not a receipt")
    (folder / ".hidden.png").write_bytes((FIXTURES / "receipt.png").read_bytes())
    keyed = {"FINCAP_API_KEY": live.key, "FINCAP_ORG_ID": live.org}

    done = fincap(live, "files", "upload", str(folder), "--wait", "--json",
                  "--timeout", PROCESSING_TIMEOUT_S, **keyed)  # fmt: skip
    assert done.returncode == 1, done.stderr  # one file failed
    report = json.loads(done.stdout)
    by_name = {Path(row["file"]).name: row for row in report["files"]}
    assert set(by_name) == {"invoice.pdf", "receipt.png", "broken.pdf", "notes.txt"}
    assert by_name["invoice.pdf"]["status"] == "processed"
    assert by_name["invoice.pdf"]["merchant"] == "Northwind Consulting GmbH"
    assert by_name["invoice.pdf"]["docType"] == "invoice"
    assert by_name["receipt.png"]["status"] == "processed"
    assert by_name["receipt.png"]["currency"] == "GBP"
    assert by_name["broken.pdf"]["status"] == "failed"
    assert "could not be read" in by_name["broken.pdf"]["reason"]
    assert by_name["notes.txt"]["status"] == "skipped"
    assert by_name["notes.txt"]["documentId"] is None  # never sent
    assert report["summary"] == {"processed": 2, "failed": 1, "skipped": 1}

    # The same files again: stored, flagged as duplicates, and the exit code is 0.
    again = fincap(live, "files", "upload", str(folder / "invoice.pdf"), "--wait",
                   "--timeout", PROCESSING_TIMEOUT_S, **keyed)  # fmt: skip
    assert again.returncode == 0, again.stderr
    repeated = json.loads(again.stdout)  # piped: JSON without --json
    assert repeated["summary"] == {"warning": 1}
    assert (
        "Possible duplicate of " + by_name["invoice.pdf"]["documentId"]
        in (repeated["files"][0]["reason"])
    )

    stored = result_of(fincap(live, "documents", "search", "--query", "Northwind", **keyed))
    assert len(stored["documents"]) == 2


def test_doctor_checks_every_step(live: Live, home: Path) -> None:
    healthy = fincap(live, "doctor", FINCAP_API_KEY=live.key, FINCAP_ORG_ID=live.org)
    assert healthy.returncode == 0, healthy.stdout
    lines = healthy.stdout.splitlines()
    checks = [line.split(":", 1)[0].split(None, 1)[1] for line in lines]
    assert checks == [
        "server reachable", "server version", "store ready", "OCR engine", "API key", "workspace"
    ]  # fmt: skip
    assert all(line.startswith("ok") for line in lines)

    broken = fincap(live, "doctor", FINCAP_API_KEY="sk_wrong")
    assert broken.returncode == 1
    assert any(line.startswith("FAIL API key") for line in broken.stdout.splitlines())
    assert "fincap auth login" in broken.stdout

    with refused_address() as nowhere:
        away = fincap(live, "doctor", FINCAP_HOST=nowhere)
    assert away.returncode == 1
    assert away.stdout.startswith("FAIL server reachable: cannot reach")


@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete "), ("zsh", "compdef"),
                                                ("fish", "complete ")])  # fmt: skip
def test_completion_scripts(live: Live, home: Path, shell: str, marker: str) -> None:
    script = fincap(live, **{"_FINCAP_COMPLETE": f"{shell}_source"})
    assert script.returncode == 0 and marker in script.stdout
    words = fincap(live, **{"_FINCAP_COMPLETE": "bash_complete", "COMP_WORDS": "fincap docu",
                            "COMP_CWORD": "1"})  # fmt: skip
    assert words.stdout.split() == ["plain,documents"]
