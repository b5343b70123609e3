"""Capability commands against a fake server on a real socket: options, bodies, output, exits.

The fake lists ``gadgets.frobnicate``, a capability the CLI does not ship, so every test here
also goes through discovery fallback; tests/cli/test_live.py runs the real server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from app.cli import commands as cli_commands
from app.cli import main
from tests.cli.fake_server import FakeServer, running_fake


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeServer]:
    with running_fake() as server:
        yield server


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test has its own ``~`` (config file) and no FINCAP_* variables of the machine."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("FINCAP_HOST", "FINCAP_API_KEY", "FINCAP_ORG_ID"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(fake: FakeServer, *args: str, input: str | None = None, **env: str) -> Result:
    fake.bodies.clear()
    environment = {"FINCAP_HOST": fake.url, "FINCAP_API_KEY": "sk_test", **env}
    return CliRunner().invoke(main, list(args), input=input, env=environment, prog_name="fincap")


def sent(fake: FakeServer) -> Any:
    assert len(fake.bodies) == 1, fake.bodies
    slug, body, _ = fake.bodies[0]
    assert slug == "gadgets.frobnicate"
    return body


def test_typed_options_become_the_json_body(fake: FakeServer) -> None:
    result = run(
        fake, "gadgets", "frobnicate",
        "--name", "widget", "--size", "4", "--ratio", "0.5", "--price", "12.50",
        "--colour", "green", "--order", "1", "--no-enabled",
        "--tags", "a", "--tags", "b", "--kinds", '["a","b"]', "--spec", '{"x": 2}',
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert sent(fake) == {
        "name": "widget",
        "size": 4,
        "ratio": 0.5,
        "price": "12.50",  # money stays the exact string typed
        "colour": "green",
        "order": 1,  # a numeric enum is sent as the number
        "enabled": False,
        "tags": ["a", "b"],
        "kinds": ["a", "b"],
        "spec": {"x": 2},
    }
    # Piped output is data.result as JSON (the fake echoes the body).
    assert json.loads(result.stdout) == {"echo": sent(fake)}


def test_options_left_out_are_not_sent(fake: FakeServer) -> None:
    result = run(fake, "gadgets", "frobnicate", "--name", "x", "--enabled")
    assert result.exit_code == 0, result.output
    assert sent(fake) == {"name": "x", "enabled": True}  # server defaults stay the server's


def test_json_option_from_a_file(fake: FakeServer, tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text('{"x": 7}')
    result = run(fake, "gadgets", "frobnicate", "--name", "x", "--spec", f"@{tmp_path}/spec.json")
    assert result.exit_code == 0, result.output
    assert sent(fake)["spec"] == {"x": 7}


def test_body_from_argument_stdin_and_file(fake: FakeServer, tmp_path: Path) -> None:
    assert run(fake, "gadgets", "frobnicate", '{"name": "arg", "size": 2}').exit_code == 0
    assert sent(fake) == {"name": "arg", "size": 2}

    assert run(fake, "gadgets", "frobnicate", input='{"name": "piped"}').exit_code == 0
    assert sent(fake) == {"name": "piped"}

    assert run(fake, "gadgets", "frobnicate", "-", input='{"name": "dash"}').exit_code == 0
    assert sent(fake) == {"name": "dash"}

    (tmp_path / "body.json").write_text('{"name": "file", "size": 9}')
    # Options override the body's keys.
    result = run(fake, "gadgets", "frobnicate", f"@{tmp_path}/body.json", "--size", "1")
    assert result.exit_code == 0, result.output
    assert sent(fake) == {"name": "file", "size": 1}


def test_a_command_taking_one_id_takes_it_without_its_flag(fake: FakeServer) -> None:
    result = run(fake, "gadgets", "get", "gad_1", "--fields", "name")
    assert result.exit_code == 0, result.output
    assert [(slug, body) for slug, body, _ in fake.bodies] == [
        ("gadgets.get", {"id": "gad_1", "fields": "name"})
    ]
    # A body is still a body, and the flag still works.
    assert run(fake, "gadgets", "get", '{"id": "gad_2"}').exit_code == 0
    assert fake.bodies[0][1] == {"id": "gad_2"}
    assert run(fake, "gadgets", "get", "--id", "gad_3").exit_code == 0
    assert fake.bodies[0][1] == {"id": "gad_3"}
    # The same id twice is fine; two different ones are a usage error and send nothing.
    clash = run(fake, "gadgets", "get", "gad_4", "--id", "gad_5")
    assert clash.exit_code == 2 and fake.bodies == []
    assert "two --id given" in clash.stderr
    # A command whose required input is not one id keeps its positional argument for the body.
    assert "BODY: not valid JSON" in run(fake, "gadgets", "frobnicate", "gad_1").stderr


def test_shipped_commands_taking_one_id_say_so() -> None:
    result = CliRunner().invoke(main, ["documents", "get", "--help"], prog_name="fincap")
    assert result.exit_code == 0, result.output
    assert "[ID|BODY]" in result.output and "fincap documents get ID" in result.output
    search = CliRunner().invoke(main, ["documents", "search", "--help"], prog_name="fincap")
    assert "[BODY]" in search.output and "[ID|BODY]" not in search.output


def test_a_refused_key_is_named_and_a_missing_one_says_how_to_set_it(fake: FakeServer) -> None:
    fake.answers["gadgets.frobnicate"] = (401, "API key authentication required")
    try:
        refused = run(fake, "gadgets", "frobnicate", "--name", "x", FINCAP_API_KEY="sk_abcd_1234")
        missing = run(fake, "gadgets", "frobnicate", "--name", "x", FINCAP_API_KEY="")
    finally:
        fake.answers.clear()
    assert refused.exit_code == missing.exit_code == 3
    assert "sk_abcd…1234" in refused.stderr and "not accepted" in refused.stderr
    assert "FINCAP_API_KEY" in refused.stderr  # where the refused key came from
    assert "no API key was sent" in missing.stderr and "fincap auth login" in missing.stderr


def test_version() -> None:
    from importlib.metadata import version

    result = CliRunner().invoke(main, ["--version"], prog_name="fincap")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == f"fincap {version('fincap')}"


@pytest.mark.parametrize(
    ("args", "input", "message"),
    [
        (["--size", "4"], None, "missing required option(s): --name"),
        (["--name", "x", "--size", "four"], None, "'four' is not a valid integer"),
        (["--name", "x", "--colour", "blue"], None, "'blue' is not one of 'red', 'green'"),
        (["--name", "x", "--spec", "{x"], None, "--spec: not valid JSON"),
        (["--name", "x", "--spec", "@missing.json"], None, "--spec: cannot read missing.json"),
        ([], "[1, 2]", "the request body must be a JSON object"),
        (["{nope"], None, "BODY: not valid JSON"),
    ],
)
def test_usage_errors_exit_2_and_send_nothing(
    fake: FakeServer, args: list[str], input: str | None, message: str
) -> None:
    result = run(fake, "gadgets", "frobnicate", *args, input=input)
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.stderr.split())
    assert fake.bodies == []


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, 2), (422, 2), (401, 3), (403, 3), (404, 4), (429, 5), (500, 5), (503, 5), (507, 5)],
)
def test_exit_code_of_each_server_answer(fake: FakeServer, status: int, code: int) -> None:
    fake.answers["gadgets.frobnicate"] = (status, f"the server said {status}")
    try:
        result = run(fake, "gadgets", "frobnicate", "--name", "x")
    finally:
        fake.answers.clear()
    assert result.exit_code == code
    # The server's own message (a 401's followed by which key was refused).
    assert result.stderr.startswith(f"error: the server said {status}")
    assert result.stderr.endswith("\n") and (status == 401) == ("sk_test" in result.stderr)
    assert result.stdout == ""


def test_a_server_whose_database_is_away_says_when_to_retry(fake: FakeServer) -> None:
    message = "The service's database is unavailable right now; try the same call again shortly"
    fake.answers["gadgets.frobnicate"] = (503, message, "service_unavailable")
    fake.retry_after["gadgets.frobnicate"] = 5
    try:
        result = run(fake, "gadgets", "frobnicate", "--name", "x")
    finally:
        fake.answers.clear()
        fake.retry_after.clear()
    assert result.exit_code == 5
    assert result.stderr == f"error: {message} (the server says: retry in 5 s)\n"


def test_raw_prints_the_error_envelope_too(fake: FakeServer) -> None:
    fake.answers["gadgets.frobnicate"] = (404, "Document not found")
    try:
        result = run(fake, "gadgets", "frobnicate", "--name", "x", "--raw")
    finally:
        fake.answers.clear()
    assert result.exit_code == 4
    assert json.loads(result.stdout)["error"] == {
        "errorCode": 404,
        "errorMessage": "Document not found",
        "reason": "not_found",
    }


def test_the_workspace_hint_follows_the_reason_not_the_message(fake: FakeServer) -> None:
    """The CLI branches on ``error.reason``: the hint comes with ``workspace_required``
    whatever the message says, and not with the same message under another reason."""
    hint = "(choose one: --org org_…, FINCAP_ORG_ID, or `fincap workspace use org_…`)"
    cases = {
        "workspace_required": ("Choose a workspace first", True),
        "invalid_request": ("Organization context required", False),
    }
    for reason, (message, hinted) in cases.items():
        fake.answers["gadgets.frobnicate"] = (400, message, reason)
        try:
            result = run(fake, "gadgets", "frobnicate", "--name", "x")
        finally:
            fake.answers.clear()
        assert result.exit_code == 2
        assert (hint in result.stderr) is hinted, reason
        assert result.stderr.startswith(f"error: {message}")


def test_the_workspace_hint_replaces_the_servers_header_advice(fake: FakeServer) -> None:
    """The server tells REST callers to send a header; the CLI tells its own ways instead."""
    from resolvers.framework.errors import ORG_REQUIRED_HOW

    fake.answers["gadgets.frobnicate"] = (400, ORG_REQUIRED_HOW, "workspace_required")
    try:
        result = run(fake, "gadgets", "frobnicate", "--name", "x")
    finally:
        fake.answers.clear()
    assert result.stderr.startswith("error: Organization context required (choose one: --org")
    assert "X-Service-Org-Id" not in result.stderr


def test_unreachable_server_exits_5(fake: FakeServer) -> None:
    from persistence.embedded import free_port

    result = run(fake, "currency", "convert", "--amount", "1", "--from-currency", "EUR",
                 "--to-currency", "USD", FINCAP_HOST=f"127.0.0.1:{free_port()}")  # fmt: skip
    assert result.exit_code == 5
    assert "cannot reach http://127.0.0.1:" in result.stderr
    assert "FINCAP_HOST" in result.stderr  # and how to fix it


def test_unknown_command_is_a_usage_error(fake: FakeServer) -> None:
    result = run(fake, "gadgets", "explode")
    assert result.exit_code == 2
    assert "No such command 'explode'" in result.stderr


def test_output_modes(fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = {
        "total": 2,
        "documents": [
            {"id": "doc_1", "merchant": "Cafe Uno", "amount": "4.20", "extra": {"k": 1}},
            {"id": "doc_2", "merchant": "Bäckerei", "amount": "2.10", "extra": {"k": 2}},
        ],
    }
    fake.answers["gadgets.frobnicate"] = (200, answer)
    try:
        as_json = run(fake, "gadgets", "frobnicate", "--name", "x", "--json")
        raw = run(fake, "gadgets", "frobnicate", "--name", "x", "--raw")
        # On a terminal (no --json): key/value lines and a table.
        monkeypatch.setattr(cli_commands, "wants_json", lambda flag: flag)
        view = run(fake, "gadgets", "frobnicate", "--name", "x")
    finally:
        fake.answers.clear()
    assert json.loads(as_json.stdout) == answer
    assert json.loads(raw.stdout) == {"success": True, "code": 200, "data": {"result": answer}}
    assert view.exit_code == 0, view.output
    lines = view.stdout.splitlines()
    assert lines[0].split() == ["total", "2"]
    header = next(line for line in lines if "merchant" in line)
    assert [cell.strip() for cell in header.split("┃")[1:-1]] == [
        "id",
        "merchant",
        "amount",
        "extra.k",
    ], view.stdout
    assert any("Bäckerei" in line and "2.10" in line for line in lines)


def test_config_precedence_flag_env_file_default(fake: FakeServer, home: Path) -> None:
    config = home / ".fincap" / "config.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"host": fake.url, "apiKey": "sk_file", "orgId": "org_file"}))
    runner = CliRunner()

    def headers(*args: str, **env: str) -> dict[str, str]:
        fake.bodies.clear()
        result = runner.invoke(main, ["gadgets", "frobnicate", "--name", "x", *args], env=env)
        assert result.exit_code == 0, result.output
        return fake.bodies[0][2]

    from_file = headers()
    assert from_file["authorization"] == "Bearer sk_file"
    assert from_file["x-service-org-id"] == "org_file"
    from_env = headers(FINCAP_API_KEY="sk_env", FINCAP_ORG_ID="org_env")
    assert from_env["authorization"] == "Bearer sk_env"
    assert from_env["x-service-org-id"] == "org_env"
    from_flag = headers("--org", "org_flag", FINCAP_ORG_ID="org_env")
    assert from_flag["x-service-org-id"] == "org_flag"
    # --host beats FINCAP_HOST and the file: a wrong env host is never called.
    wrong = "http://127.0.0.1:9"
    assert headers("--host", fake.url, FINCAP_HOST=wrong)["authorization"] == "Bearer sk_file"


def test_shell_completion_lists_resources_actions_and_options(fake: FakeServer) -> None:
    def complete(words: str) -> list[str]:
        current = len(words.split()) - (0 if words.endswith(" ") else 1)
        env = {"_FINCAP_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(current)}
        result = CliRunner().invoke(main, [], env=env, prog_name="fincap")
        return [line.split(",", 1)[1] for line in result.stdout.splitlines()]

    assert {"documents", "currency", "auth", "workspace", "doctor"} <= set(complete("fincap "))
    assert complete("fincap documents bu") == ["bulk-edit"]
    assert "--from-currency" in complete("fincap currency convert --fr")
    assert set(complete("fincap documents search --sort-order ")) == {"1", "-1"}
