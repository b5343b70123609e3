"""Settings: one field per environment variable, read once by the entry points and handed down.

A field that names its variable (``validation_alias``) is read from the environment; its
``description`` is what the README's configuration table says about it (a test keeps the two
in step). Fields without a variable (``host``, ``port``, ``max_body_bytes``) are set by the
command line or by tests, never by the environment: ``FINCAP_HOST``, for one, is reserved for
the CLI client's server address.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

if TYPE_CHECKING:
    from engines.billing.plans import PlanCatalog

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # a 10 MB file is ~13.4 MB in base64, plus JSON


class ConfigError(Exception):
    """An environment variable holds a value its setting does not accept."""


class _NamedVariablesOnly(EnvSettingsSource):
    """The environment, for fields that name their variable; other fields are left alone."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        if not isinstance(field.validation_alias, str):
            return None, field_name, False
        return super().get_field_value(field, field_name)


class Settings(BaseSettings):
    """Everything configurable. ``Settings.from_env()`` is what the entry points call."""

    model_config = SettingsConfigDict(
        frozen=True,
        populate_by_name=True,  # tests and the CLI pass field names: Settings(workers=2)
        env_ignore_empty=True,  # MONGODB_URI= (empty) means unset, as in a shell
        case_sensitive=True,
        extra="forbid",
    )

    mongodb_uri: str | None = Field(
        default=None,
        validation_alias="MONGODB_URI",
        description="MongoDB to use (database from the URI path, else `fincap`); "
        "unset: the embedded store",
    )
    data_dir: Path = Field(
        default=Path(".fincap"),
        validation_alias="FINCAP_DATA_DIR",
        description="the embedded store's data, its log and `server.json`",
    )
    public_url: str | None = Field(
        default=None,
        validation_alias="FINCAP_PUBLIC_URL",
        description="the service's public root, named in `/openapi.json` and in document links; "
        "unset: `http://HOST:PORT`",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="INFO",
        validation_alias="FINCAP_LOG_LEVEL",
        description="level of the JSON logs",
    )
    workers: int = Field(
        default=1,
        ge=0,
        validation_alias="FINCAP_WORKERS",
        description="job workers inside `fincap serve` (0: this process runs none; "
        "`fincap worker` processes do)",
    )
    extraction_executor: Literal["process", "thread"] = Field(
        default="process",
        validation_alias="FINCAP_EXTRACTION_EXECUTOR",
        description="where OCR and field parsing run: a `spawn` process pool, or one thread "
        "(no memory limit)",
    )
    job_lease_s: float = Field(
        default=60.0,
        gt=0,
        validation_alias="FINCAP_JOB_LEASE_SECONDS",
        description="seconds a worker holds a job before another may take it over "
        "(renewed while it works)",
    )
    secret_key: SecretStr | None = Field(
        default=None,
        validation_alias="FINCAP_SECRET_KEY",
        description="server secret that signs cursors: base64 of at least 32 random bytes, "
        "several comma-separated to rotate (the first signs); unset: "
        "`<FINCAP_DATA_DIR>/secret.key`, generated once (set it when several processes share "
        "`MONGODB_URI`)",
    )
    analysis_memory_mb: int = Field(
        default=1536,
        ge=0,
        validation_alias="FINCAP_ANALYSIS_MEMORY_MB",
        description="memory limit (`RLIMIT_DATA`, MB) of each analysis process; 0: none",
    )
    auth_cache_seconds: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        validation_alias="FINCAP_AUTH_CACHE_SECONDS",
        description="how long a process reuses a credential's lookup and a membership "
        "(revocation in the same process is immediate; other processes follow within this "
        "time); 0: look up on every call",
    )
    billing_plans: Path | None = Field(
        default=None,
        validation_alias="FINCAP_BILLING_PLANS",
        description="a TOML file of billing plans (format: see Billing) replacing the default "
        "free / pro / business catalog; validated at start-up",
    )
    usage_flush_s: float = Field(
        default=5.0,
        gt=0,
        le=300,
        validation_alias="FINCAP_USAGE_FLUSH_SECONDS",
        description="how often an API process writes its buffered API-call counts (billing "
        "usage); a crash loses at most this long of counts",
    )
    xero_client_id: str | None = Field(
        default=None,
        validation_alias="FINCAP_XERO_CLIENT_ID",
        description="Xero app's OAuth 2.0 client id; unset: Xero cannot be connected",
    )
    xero_client_secret: SecretStr | None = Field(
        default=None,
        validation_alias="FINCAP_XERO_CLIENT_SECRET",
        description="Xero app's OAuth 2.0 client secret",
    )
    xero_authorize_url: str = Field(
        default="https://login.xero.com/identity/connect/authorize",
        validation_alias="FINCAP_XERO_AUTHORIZE_URL",
        description="Xero's authorization endpoint (the user's browser goes there)",
    )
    xero_token_url: str = Field(
        default="https://identity.xero.com/connect/token",
        validation_alias="FINCAP_XERO_TOKEN_URL",
        description="Xero's token endpoint",
    )
    xero_api_url: str = Field(
        default="https://api.xero.com",
        validation_alias="FINCAP_XERO_API_URL",
        description="Xero's API root (`/connections`, `/api.xro/2.0/…`)",
    )
    quickbooks_client_id: str | None = Field(
        default=None,
        validation_alias="FINCAP_QUICKBOOKS_CLIENT_ID",
        description="Intuit app's OAuth 2.0 client id; unset: QuickBooks cannot be connected",
    )
    quickbooks_client_secret: SecretStr | None = Field(
        default=None,
        validation_alias="FINCAP_QUICKBOOKS_CLIENT_SECRET",
        description="Intuit app's OAuth 2.0 client secret",
    )
    quickbooks_authorize_url: str = Field(
        default="https://appcenter.intuit.com/connect/oauth2",
        validation_alias="FINCAP_QUICKBOOKS_AUTHORIZE_URL",
        description="Intuit's authorization endpoint",
    )
    quickbooks_token_url: str = Field(
        default="https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer",
        validation_alias="FINCAP_QUICKBOOKS_TOKEN_URL",
        description="Intuit's token endpoint",
    )
    quickbooks_revoke_url: str = Field(
        default="https://developer.api.intuit.com/v2/oauth2/tokens/revoke",
        validation_alias="FINCAP_QUICKBOOKS_REVOKE_URL",
        description="Intuit's token revocation endpoint (disconnect)",
    )
    quickbooks_api_url: str = Field(
        default="https://quickbooks.api.intuit.com",
        validation_alias="FINCAP_QUICKBOOKS_API_URL",
        description="QuickBooks Online API root (`/v3/company/<realm>/…`; the sandbox has its own)",
    )
    # Set by `fincap serve --host/--port` (and tests), not by the environment.
    host: str = "127.0.0.1"
    port: int = 8000
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    @field_validator("billing_plans")
    @classmethod
    def _plans_file_valid(cls, value: Path | None) -> Path | None:
        # Read and validated here, so a bad file stops every entry point at start-up.
        if value is not None:
            from engines.billing.plans import PlanCatalogError, load_catalog

            try:
                load_catalog(value)
            except PlanCatalogError as exc:
                raise ValueError(str(exc)) from None
        return value

    def plan_catalog(self) -> PlanCatalog:
        """The billing plans: the file of ``FINCAP_BILLING_PLANS``, else the shipped ones."""
        from engines.billing.plans import default_catalog, load_catalog

        return load_catalog(self.billing_plans) if self.billing_plans else default_catalog()

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # Arguments first, then the named variables; no .env files, no secret directories.
        return init_settings, _NamedVariablesOnly(settings_cls)

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """The environment's settings; ``overrides`` that are not None win (CLI options).

        Raises ``ConfigError`` naming the variable and the reason for a value that does not fit.
        """
        try:
            return cls(**{name: value for name, value in overrides.items() if value is not None})
        except ValidationError as exc:
            raise ConfigError("; ".join(_describe(error) for error in exc.errors())) from None

    @classmethod
    def environment_variables(cls) -> dict[str, FieldInfo]:
        """Every environment variable the service reads, with its field."""
        return {
            field.validation_alias: field
            for field in cls.model_fields.values()
            if isinstance(field.validation_alias, str)
        }

    @property
    def base_url(self) -> str:
        """The service's public root (no trailing slash), for OpenAPI and file links."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")


class ClientSettings(BaseSettings):
    """What the ``fincap`` client commands read from the environment; each overrides the
    config file (``~/.fincap/config.json``) and is overridden by ``--host``/``--org``."""

    model_config = SettingsConfigDict(
        frozen=True, env_ignore_empty=True, case_sensitive=True, extra="forbid"
    )

    api_key: str | None = Field(
        default=None,
        validation_alias="FINCAP_API_KEY",
        description="CLI: the API key to call the server with (overrides `fincap auth login`)",
    )
    org_id: str | None = Field(
        default=None,
        validation_alias="FINCAP_ORG_ID",
        description="CLI: the workspace (`org_…`) to act in (overrides `fincap workspace use`)",
    )
    host: str | None = Field(
        default=None,
        validation_alias="FINCAP_HOST",
        description="CLI: the server's address (default `http://127.0.0.1:8000`)",
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, _NamedVariablesOnly(settings_cls)


def _describe(error: Any) -> str:
    where = ".".join(str(part) for part in error.get("loc", ())) or "settings"
    return f"{where}: {error.get('msg', 'invalid value')} (got {error.get('input')!r})"
