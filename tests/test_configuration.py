"""Every environment variable the service reads is a settings field, documented in the
configuration reference generated from the declaration (docs/operating/configuration.md)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re
from pathlib import Path

import pytest
from pydantic_settings import BaseSettings

from app.host import config_reference
from app.host.config import ConfigError, Settings

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("app", "schema", "resolvers", "persistence", "engines")
SETTINGS_MODULE = ROOT / "app" / "config.py"
# Environment reads outside the settings, each with the reason it is not configuration.
NOT_CONFIGURATION = {
    # Sets OpenMP's own variable for the tesseract subprocess (one thread per OCR call), unless
    # the operator set it: a library's knob, not a fincap setting.
    ("engines/extraction/ocr_tesseract.py", "setdefault"),
}
ROW = re.compile(r"^\| `(?P<name>[A-Z][A-Z0-9_]*)` \| (?P<default>[^|]*) \| (?P<meaning>.*) \|$")


def documented_configuration() -> dict[str, str]:
    """Variable → meaning, from the table of the docs' configuration page."""
    rows = (ROW.match(line) for line in config_reference.PAGE.read_text().splitlines())
    return {row["name"]: row["meaning"].strip() for row in rows if row}


def settings_classes() -> list[type[BaseSettings]]:
    """Every settings class of the service's packages (all their modules imported)."""
    for package in PACKAGES:
        for module in pkgutil.walk_packages([str(ROOT / package)], prefix=f"{package}."):
            importlib.import_module(module.name)
    found: list[type[BaseSettings]] = []
    pending = list(BaseSettings.__subclasses__())
    while pending:
        cls = pending.pop()
        pending += cls.__subclasses__()
        if cls.__module__.split(".")[0] in PACKAGES:
            found.append(cls)
    return found


def variables_of(cls: type[BaseSettings]) -> dict[str, str]:
    """Variable → description of the fields ``cls`` reads from the environment."""
    # Settings reads only the variables its fields name; so does the class it is built on
    # (app.host.config adds the connectors' fields to that one).
    if issubclass(Settings, cls):
        return {
            name: field.description or ""
            for name, field in Settings.environment_variables().items()
        }
    prefix = cls.model_config.get("env_prefix", "")
    return {
        (
            field.validation_alias if isinstance(field.validation_alias, str) else prefix + name
        ).upper(): (field.description or "")
        for name, field in cls.model_fields.items()
    }


def test_every_variable_read_is_documented_and_every_documented_one_is_read() -> None:
    read: dict[str, str] = {}
    for cls in settings_classes():
        read |= variables_of(cls)
    documented = documented_configuration()
    assert {"MONGODB_URI", "FINCAP_WORKERS", "FINCAP_JOB_LEASE_SECONDS"} <= set(read)
    assert sorted(set(read) - set(documented)) == [], "read but missing from the configuration page"
    assert sorted(set(documented) - set(read)) == [], "on the configuration page but never read"
    for name, description in read.items():
        # The field's description is the page's text (one source, told the same way).
        assert documented[name] == description, name


def test_the_configuration_page_is_generated_from_the_declaration() -> None:
    """Names, defaults and meanings as the code declares them; regenerate with
    `python -m app.host.config_reference` after changing a setting."""
    page = config_reference.PAGE.read_text()
    assert config_reference.with_table(page) == page, "run: python -m app.host.config_reference"
    assert "| `FINCAP_JOB_LEASE_SECONDS` | `10` |" in page


def environment_reads(path: Path) -> list[tuple[int, str]]:
    """(line, what) for every use of ``os.environ`` / ``os.getenv`` in a module."""
    tree = ast.parse(path.read_text(), str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv"):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom) and node.module == "os":
            found += [(node.lineno, a.name) for a in node.names if a.name in ("environ", "getenv")]
    return found


def test_no_module_reads_the_environment_outside_the_settings() -> None:
    offenders = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == SETTINGS_MODULE:
                continue
            relative = path.relative_to(ROOT).as_posix()
            source_lines = path.read_text().splitlines()
            for line, what in environment_reads(path):
                text = source_lines[line - 1]
                allowed = any(
                    relative == module and f".{call}(" in text for module, call in NOT_CONFIGURATION
                )
                if not allowed:
                    offenders.append(f"{relative}:{line}: {what}: {text.strip()}")
    assert offenders == [], "read the environment through a settings field instead"


def test_a_bad_value_names_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINCAP_WORKERS", "many")
    with pytest.raises(ConfigError, match="FINCAP_WORKERS"):
        Settings.from_env()
    monkeypatch.setenv("FINCAP_WORKERS", "3")
    monkeypatch.setenv("FINCAP_EXTRACTION_EXECUTOR", "gpu")
    with pytest.raises(ConfigError, match="FINCAP_EXTRACTION_EXECUTOR"):
        Settings.from_env()


def test_variables_are_read_and_options_win(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FINCAP_WORKERS", "3")
    monkeypatch.setenv("FINCAP_LOG_LEVEL", "debug")
    monkeypatch.setenv("MONGODB_URI", "")  # empty is unset, as in a shell
    monkeypatch.setenv("FINCAP_JOB_LEASE_SECONDS", "2.5")
    settings = Settings.from_env(port=9000, host=None)
    assert (settings.workers, settings.log_level, settings.job_lease_s) == (3, "DEBUG", 2.5)
    assert settings.mongodb_uri is None
    assert (settings.host, settings.port) == ("127.0.0.1", 9000)
    assert Settings.from_env(workers=0).workers == 0


def test_fields_without_a_variable_ignore_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # FINCAP_HOST belongs to the CLI client (the server it talks to), not to `fincap serve`.
    for name in ("HOST", "host", "FINCAP_HOST", "PORT", "port", "max_body_bytes"):
        monkeypatch.setenv(name, "1")
    settings = Settings.from_env()
    assert (settings.host, settings.port, settings.max_body_bytes) == (
        "127.0.0.1",
        8000,
        Settings.model_fields["max_body_bytes"].default,
    )


def test_the_cli_names_a_bad_variable_without_a_traceback(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from app.cli import main

    env = {"FINCAP_DATA_DIR": str(tmp_path), "MONGODB_URI": "", "FINCAP_WORKERS": "many"}
    result = CliRunner().invoke(main, ["admin", "create-key", "--email", "x@example.com"], env=env)
    assert result.exit_code == 1
    assert "configuration: FINCAP_WORKERS" in result.output and "Traceback" not in result.output
