"""The embedded server is an optional extra: without it (and without MONGODB_URI) `fincap serve`
and the admin commands stop at once with the install line; with MONGODB_URI nothing asks for it;
the base requirements and the MongoDB image do not carry it."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from app import cli
from persistence import embedded

ROOT = Path(__file__).resolve().parent.parent
INSTALL_LINE = "pip install 'fincap[embedded]'"


@pytest.fixture
def without_the_extra(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """SecantusDB not installed; uvicorn records instead of serving."""
    monkeypatch.setattr(embedded, "SERVER_INSTALLED", False)
    served: list[Any] = []
    monkeypatch.setattr(
        "app.host.serving.Server.run", lambda self, **kw: served.append(self.config.app)
    )
    return served


def test_serve_without_the_extra_fails_at_start_with_the_install_line(
    without_the_extra: list[Any], tmp_path: Path
) -> None:
    env = {"FINCAP_DATA_DIR": str(tmp_path), "MONGODB_URI": ""}
    result = CliRunner().invoke(cli.main, ["serve", "--port", "1"], env=env)
    assert result.exit_code == 1
    assert INSTALL_LINE in result.output and "MONGODB_URI" in result.output
    assert without_the_extra == []  # nothing was served


def test_admin_commands_without_the_extra_name_the_install_line(
    without_the_extra: list[Any], tmp_path: Path
) -> None:
    env = {"FINCAP_DATA_DIR": str(tmp_path), "MONGODB_URI": ""}
    args = ["admin", "bootstrap", "--email", "ops@example.com", "--workspace", "Ops"]
    result = CliRunner().invoke(cli.main, args, env=env)
    assert result.exit_code == 1, result.output
    assert INSTALL_LINE in result.output
    assert not (tmp_path / "db").exists()  # no server was started


def test_serve_on_mongodb_does_not_need_the_extra(
    without_the_extra: list[Any], tmp_path: Path
) -> None:
    env = {"FINCAP_DATA_DIR": str(tmp_path), "MONGODB_URI": "mongodb://127.0.0.1:9/fincap"}
    result = CliRunner().invoke(cli.main, ["serve", "--port", "1"], env=env)
    assert result.exit_code == 0, result.output
    assert len(without_the_extra) == 1  # the app was handed to uvicorn


def test_the_extra_is_installed_here() -> None:
    """`make test` installs it: the wire tests must never skip for want of it."""
    assert embedded.SERVER_INSTALLED


def test_the_gpl_server_is_only_an_extra_and_the_image_leaves_it_out() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not [r for r in project["dependencies"] if r.startswith("secantusdb")]
    assert [r for r in project["optional-dependencies"]["embedded"] if r.startswith("secantusdb")]
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install --no-cache-dir ." in dockerfile and "[embedded]" not in dockerfile
    assert "embedded" in (ROOT / "Makefile").read_text()
