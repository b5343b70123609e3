"""Settings, read from the environment once by the entry points and handed down."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # a 10 MB file is ~13.4 MB in base64, plus JSON


@dataclass(frozen=True)
class Settings:
    """Everything configurable; ``from_env`` documents the variable of each field."""

    mongodb_uri: str | None = None
    data_dir: Path = Path(".fincap")
    host: str = "127.0.0.1"
    port: int = 8000
    public_url: str | None = None
    log_level: str = "INFO"
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    workers: int = 1
    extraction_executor: str = "process"
    job_lease_s: float = 60.0
    # Base64 server secret(s), current first (see engines/keyring.py); unset: the data
    # directory's generated key.
    secret_key: str | None = None
    # RLIMIT_DATA of each analysis process; 0: none. A scanned page peaks near 0.5 GB.
    analysis_memory_mb: int = 1536

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        env = os.environ
        values: dict[str, object] = {
            "mongodb_uri": env.get("MONGODB_URI") or None,
            "data_dir": Path(env.get("FINCAP_DATA_DIR", ".fincap")),
            "public_url": env.get("FINCAP_PUBLIC_URL") or None,
            "log_level": env.get("FINCAP_LOG_LEVEL", "INFO").upper(),
            "workers": int(env.get("FINCAP_WORKERS", "1")),
            "extraction_executor": env.get("FINCAP_EXTRACTION_EXECUTOR", "process"),
            "job_lease_s": float(env.get("FINCAP_JOB_LEASE_SECONDS", "60")),
            "secret_key": env.get("FINCAP_SECRET_KEY") or None,
            "analysis_memory_mb": int(env.get("FINCAP_ANALYSIS_MEMORY_MB", "1536")),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)  # type: ignore[arg-type]

    @property
    def base_url(self) -> str:
        """The service's public root (no trailing slash), for OpenAPI and file links."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")
