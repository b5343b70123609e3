"""Settings: one field per environment variable, read once by the entry points and handed down.

A field made with ``variable()`` names its environment variable and is read from it; its
``description`` is what the README's configuration table says about it (a test keeps the two
in step). Fields without a variable (``host``, ``port``, ``max_body_bytes``) are set by the
command line or by tests, never by the environment: ``FINCAP_HOST``, for one, is reserved for
the CLI client's server address.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from engines.connectors.quickbooks import QuickBooksSettings
from engines.connectors.xero import XeroSettings
from engines.mail_limits import MailLimits
from engines.outbound import OutboundPolicy

if TYPE_CHECKING:
    from engines.billing.plans import PlanCatalog
    from resolvers.services.search_indexes import SearchConfig
    from resolvers.services.sources_config import SourceConfig

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024  # a 10 MB file is ~13.4 MB in base64, plus JSON


class ConfigError(Exception):
    """An environment variable holds a value its setting does not accept."""


class _NamedVariablesOnly(EnvSettingsSource):
    """The environment, for fields that name their variable; other fields are left alone."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        if not isinstance(field.validation_alias, str):
            return None, field_name, False
        return super().get_field_value(field, field_name)


def variable(name: str, default: Any, *, description: str, **constraints: Any) -> Any:
    """A field read from the environment variable ``name``; ``description`` is its row in the
    README's configuration table; ``constraints`` are pydantic's (``ge``, ``pattern``…)."""
    return Field(default=default, validation_alias=name, description=description, **constraints)


class _FromNamedVariables(BaseSettings):
    """Settings read from their arguments, then from the variables their fields name."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # No .env files, no secret directories: the process environment alone.
        return init_settings, _NamedVariablesOnly(settings_cls)


class Settings(_FromNamedVariables):
    """Everything configurable. ``Settings.from_env()`` is what the entry points call."""

    model_config = SettingsConfigDict(
        frozen=True,
        populate_by_name=True,  # tests and the CLI pass field names: Settings(workers=2)
        env_ignore_empty=True,  # MONGODB_URI= (empty) means unset, as in a shell
        case_sensitive=True,
        extra="forbid",
    )

    mongodb_uri: str | None = variable(
        "MONGODB_URI",
        None,
        description="MongoDB to use (database from the URI path, else `fincap`); "
        "unset: the embedded store",
    )
    data_dir: Path = variable(
        "FINCAP_DATA_DIR",
        Path(".fincap"),
        description="the embedded store's data, its log and `server.json`; the help center's "
        "article vectors (`help_center/`)",
    )
    public_url: str | None = variable(
        "FINCAP_PUBLIC_URL",
        None,
        description="the service's public root, named in `/openapi.json` and in document links; "
        "unset: `http://HOST:PORT`",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = variable(
        "FINCAP_LOG_LEVEL", "INFO", description="level of the JSON logs"
    )
    workers: int = variable(
        "FINCAP_WORKERS",
        1,
        ge=0,
        description="job workers inside `fincap serve` (0: this process runs none; "
        "`fincap worker` processes do)",
    )
    extraction_executor: Literal["process", "thread"] = variable(
        "FINCAP_EXTRACTION_EXECUTOR",
        "process",
        description="where OCR and field parsing run, and rule sentences are read: `spawn` "
        "processes, or one thread (no memory limit)",
    )
    job_lease_s: float = variable(
        "FINCAP_JOB_LEASE_SECONDS",
        60.0,
        gt=0,
        description="seconds a worker holds a job before another may take it over "
        "(renewed while it works)",
    )
    jobs_per_workspace: int = variable(
        "FINCAP_JOBS_PER_WORKSPACE",
        4,
        ge=0,
        description="jobs of one workspace run at the same time, over all workers (workspaces "
        "take turns; the rest wait); 0: no limit (raise it when one workspace has many "
        "workers to itself)",
    )
    secret_key: SecretStr | None = variable(
        "FINCAP_SECRET_KEY",
        None,
        description="server secret that signs cursors: base64 of at least 32 random bytes, "
        "several comma-separated to rotate (the first signs); unset: "
        "`<FINCAP_DATA_DIR>/secret.key`, generated once (set it when several processes share "
        "`MONGODB_URI`)",
    )
    analysis_memory_mb: int = variable(
        "FINCAP_ANALYSIS_MEMORY_MB",
        1536,
        ge=0,
        description="memory limit (`RLIMIT_DATA`, MB) of each analysis process; 0: none",
    )
    auth_cache_seconds: float = variable(
        "FINCAP_AUTH_CACHE_SECONDS",
        30.0,
        ge=0,
        le=3600,
        description="how long a process reuses a credential's lookup and a membership for reads "
        "(a call that changes something always looks both up, so a revoked key, a removed "
        "member or a lowered role is refused for every change at once on every process; "
        "revocations and membership changes reach this process's cache at once; other "
        "processes' reads follow within this time); 0: look up on every call",
    )
    rules_llm_url: str | None = variable(
        "FINCAP_RULES_LLM_URL",
        None,
        pattern=r"^https?://",
        description="base URL of an OpenAI-compatible chat-completions API (…/v1) that reads "
        "the rule sentences the grammar cannot; unset: the grammar alone (offline)",
    )
    rules_llm_model: str | None = variable(
        "FINCAP_RULES_LLM_MODEL",
        None,
        description="the model name sent to that API (required with `FINCAP_RULES_LLM_URL`)",
    )
    rules_llm_api_key: SecretStr | None = variable(
        "FINCAP_RULES_LLM_API_KEY", None, description="bearer token for that API, if it needs one"
    )
    rules_llm_timeout_s: float = variable(
        "FINCAP_RULES_LLM_TIMEOUT_SECONDS",
        20.0,
        gt=0,
        le=300,
        description="seconds rules.prepare waits for the language model before using the "
        "grammar's reading",
    )
    smtp_host: str | None = variable(
        "FINCAP_SMTP_HOST",
        None,
        description="SMTP relay for the rules' e-mail notifications; unset: e-mail actions "
        "fail with that reason in the rule's stats",
    )
    smtp_port: int = variable(
        "FINCAP_SMTP_PORT", 587, ge=1, le=65535, description="the relay's port"
    )
    smtp_from: str = variable(
        "FINCAP_SMTP_FROM", "fincap@localhost", description="sender address of notification e-mails"
    )
    smtp_username: str | None = variable(
        "FINCAP_SMTP_USERNAME", None, description="login at the relay (unset: no login)"
    )
    smtp_password: SecretStr | None = variable(
        "FINCAP_SMTP_PASSWORD", None, description="password of that login"
    )
    smtp_starttls: bool = variable(
        "FINCAP_SMTP_STARTTLS",
        True,
        description="upgrade the relay connection with STARTTLS (false: plain, for a relay "
        "on localhost)",
    )
    outbound_allow: str | None = variable(
        "FINCAP_OUTBOUND_ALLOW",
        None,
        description="networks (`10.0.0.0/8`, `127.0.0.1`, `fd00::/8`) and host names "
        "(`mail.internal`, `localhost`), separated by commas, that outbound connections may "
        "reach although they are not public (see Outbound connections); unset: public "
        "addresses only",
    )
    webhook_timeout_s: float = variable(
        "FINCAP_WEBHOOK_TIMEOUT_SECONDS",
        10.0,
        gt=0,
        le=120,
        description="seconds a rule's webhook call may take",
    )
    inbound_domain: str = variable(
        "FINCAP_INBOUND_DOMAIN",
        "inbound.localhost",
        max_length=200,
        pattern=r"^[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$",
        description="domain of the workspaces' receiving addresses (`<alias>@<domain>`); its MX "
        "must point at the SMTP receiver or at a relay that posts to `/v1/inbound/email`",
    )
    inbound_secret: SecretStr | None = variable(
        "FINCAP_INBOUND_SECRET",
        None,
        description="shared secret a mail relay sends as `Authorization: Bearer …` to "
        "`POST /v1/inbound/email`; unset: that endpoint answers 404",
    )
    inbound_max_mb: int = variable(
        "FINCAP_INBOUND_MAX_MB",
        15,
        ge=1,
        le=100,
        description="largest inbound message accepted (MB, whole message; each attachment "
        "stays within files.upload's 10 MB; HTTP posts also within the 16 MB request limit)",
    )
    inbound_max_header_kb: int = variable(
        "FINCAP_INBOUND_MAX_HEADER_KB",
        64,
        ge=4,
        le=1024,
        description="largest header section of an inbound message, or of one of its parts (KB); "
        "larger: refused (`552` / 413) before it is parsed",
    )
    inbound_max_recipients: int = variable(
        "FINCAP_INBOUND_MAX_RECIPIENTS",
        500,
        ge=1,
        le=10000,
        description="most addresses an inbound message may name in its address headers (From, "
        "To, Cc, …) and its envelope; more: refused (`550 5.5.3` / 400) before it is parsed",
    )
    inbound_max_attachments: int = variable(
        "FINCAP_INBOUND_MAX_ATTACHMENTS",
        20,
        ge=1,
        le=1000,
        description="documents taken from one inbound message (e-mail or mailbox); further "
        "attachments are listed on its activity item as not read",
    )
    inbound_smtp_port: int | None = variable(
        "FINCAP_INBOUND_SMTP_PORT",
        None,
        ge=0,
        le=65535,
        description="port of the SMTP receiver inside `fincap serve`; unset: no receiver",
    )
    inbound_smtp_host: str = variable(
        "FINCAP_INBOUND_SMTP_HOST",
        "127.0.0.1",
        description="address the SMTP receiver listens on (`0.0.0.0` for every interface)",
    )
    whatsapp_verify_token: SecretStr | None = variable(
        "FINCAP_WHATSAPP_VERIFY_TOKEN",
        None,
        description="token Meta echoes in the webhook verification (`hub.verify_token`); "
        "unset with the app secret: the WhatsApp webhook answers 404",
    )
    whatsapp_app_secret: SecretStr | None = variable(
        "FINCAP_WHATSAPP_APP_SECRET",
        None,
        description="the Meta app secret that signs every webhook POST (`X-Hub-Signature-256`)",
    )
    whatsapp_access_token: SecretStr | None = variable(
        "FINCAP_WHATSAPP_ACCESS_TOKEN",
        None,
        description="Graph access token used to download media and send replies",
    )
    whatsapp_graph_url: str = variable(
        "FINCAP_WHATSAPP_GRAPH_URL",
        "https://graph.facebook.com/v21.0",
        pattern=r"^https?://\S+$",
        description="base URL of the Graph API, version included",
    )
    whatsapp_reply: bool = variable(
        "FINCAP_WHATSAPP_REPLY",
        False,
        description="reply to each WhatsApp receipt with what was read (merchant and total)",
    )
    mailbox_poll_seconds: float = variable(
        "FINCAP_MAILBOX_POLL_SECONDS",
        300.0,
        ge=5,
        le=86400,
        description="how often each connected mailbox is read for new messages",
    )
    embeddings: bool = variable(
        "FINCAP_EMBEDDINGS",
        True,
        description="embed documents as they are written and rank searches by meaning as well "
        "as words (the model ships in a package; see Search); false: words only",
    )
    vector_search: Literal["memory", "mongodb"] = variable(
        "FINCAP_VECTOR_SEARCH",
        "memory",
        description="where the vector part of ranked search runs: `memory` (each process's "
        "per-workspace index) or `mongodb` (`$vectorSearch`, for deployments that have it)",
    )
    vector_index: str = variable(
        "FINCAP_VECTOR_INDEX",
        "documents_embedding",
        min_length=1,
        description="name of the `$vectorSearch` index on `documents.embedding` "
        "(with `FINCAP_VECTOR_SEARCH=mongodb`)",
    )
    search_index_documents: int = variable(
        "FINCAP_SEARCH_INDEX_DOCUMENTS",
        250_000,
        ge=1000,
        description="documents a process keeps in its in-memory search indexes, over all "
        "workspaces (about 3 kB each); the least recently searched workspaces go first",
    )
    graphql_document_cache: int = variable(
        "FINCAP_GRAPHQL_DOCUMENT_CACHE",
        512,
        ge=0,
        description="GraphQL documents a process keeps parsed and validated, by their text, "
        "least recently used dropped first (a repeated query skips parsing, validation and the "
        "limit checks); 0: none",
    )
    billing_plans: Path | None = variable(
        "FINCAP_BILLING_PLANS",
        None,
        description="a TOML file of billing plans (format: see Billing) replacing the default "
        "free / pro / business catalog; validated at start-up",
    )
    usage_flush_s: float = variable(
        "FINCAP_USAGE_FLUSH_SECONDS",
        5.0,
        gt=0,
        le=300,
        description="how often an API process writes its buffered API-call counts (billing "
        "usage); a crash loses at most this long of counts",
    )
    xero_client_id: str | None = variable(
        "FINCAP_XERO_CLIENT_ID",
        None,
        description="Xero app's OAuth 2.0 client id; unset: Xero cannot be connected",
    )
    xero_client_secret: SecretStr | None = variable(
        "FINCAP_XERO_CLIENT_SECRET", None, description="Xero app's OAuth 2.0 client secret"
    )
    xero_authorize_url: str = variable(
        "FINCAP_XERO_AUTHORIZE_URL",
        XeroSettings.authorize_url,
        description="Xero's authorization endpoint (the user's browser goes there)",
    )
    xero_token_url: str = variable(
        "FINCAP_XERO_TOKEN_URL",
        XeroSettings.token_url,
        description="Xero's token endpoint",
    )
    xero_api_url: str = variable(
        "FINCAP_XERO_API_URL",
        XeroSettings.api_url,
        description="Xero's API root (`/connections`, `/api.xro/2.0/…`)",
    )
    quickbooks_client_id: str | None = variable(
        "FINCAP_QUICKBOOKS_CLIENT_ID",
        None,
        description="Intuit app's OAuth 2.0 client id; unset: QuickBooks cannot be connected",
    )
    quickbooks_client_secret: SecretStr | None = variable(
        "FINCAP_QUICKBOOKS_CLIENT_SECRET", None, description="Intuit app's OAuth 2.0 client secret"
    )
    quickbooks_authorize_url: str = variable(
        "FINCAP_QUICKBOOKS_AUTHORIZE_URL",
        QuickBooksSettings.authorize_url,
        description="Intuit's authorization endpoint",
    )
    quickbooks_token_url: str = variable(
        "FINCAP_QUICKBOOKS_TOKEN_URL",
        QuickBooksSettings.token_url,
        description="Intuit's token endpoint",
    )
    quickbooks_revoke_url: str = variable(
        "FINCAP_QUICKBOOKS_REVOKE_URL",
        QuickBooksSettings.revoke_url,
        description="Intuit's token revocation endpoint (disconnect)",
    )
    quickbooks_api_url: str = variable(
        "FINCAP_QUICKBOOKS_API_URL",
        QuickBooksSettings.api_url,
        description="QuickBooks Online API root (`/v3/company/<realm>/…`; the sandbox has its own)",
    )
    # Set by `fincap serve --host/--port` (and tests), not by the environment.
    host: str = "127.0.0.1"
    port: int = 8000
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    @model_validator(mode="after")
    def _model_with_url(self) -> Settings:
        if self.rules_llm_url and not self.rules_llm_model:
            raise ValueError("FINCAP_RULES_LLM_MODEL is required with FINCAP_RULES_LLM_URL")
        return self

    @field_validator("outbound_allow")
    @classmethod
    def _allow_list_valid(cls, value: str | None) -> str | None:
        OutboundPolicy.from_setting(value)  # a ValueError names the entry that does not fit
        return value

    def outbound_policy(self) -> OutboundPolicy:
        """The policy every outbound connection goes through (``FINCAP_OUTBOUND_ALLOW``)."""
        return OutboundPolicy.from_setting(self.outbound_allow)

    def refused_endpoints(self) -> list[str]:
        """The operator's configured endpoints the outbound policy can never reach (a private
        address or ``localhost`` not in ``FINCAP_OUTBOUND_ALLOW``), as warnings to log."""
        policy = self.outbound_policy()
        endpoints = {
            "FINCAP_SMTP_HOST": self.smtp_host,
            "FINCAP_RULES_LLM_URL": self.rules_llm_url,
            "FINCAP_WHATSAPP_GRAPH_URL": self.whatsapp_graph_url,
            "FINCAP_XERO_TOKEN_URL": self.xero_token_url,
            "FINCAP_XERO_API_URL": self.xero_api_url,
            "FINCAP_QUICKBOOKS_TOKEN_URL": self.quickbooks_token_url,
            "FINCAP_QUICKBOOKS_REVOKE_URL": self.quickbooks_revoke_url,
            "FINCAP_QUICKBOOKS_API_URL": self.quickbooks_api_url,
        }
        warnings = []
        for name, value in endpoints.items():
            host = (urlsplit(value).hostname or "") if value and "://" in value else value
            if host and (why := policy.literal_refusal(host)) is not None:
                warnings.append(
                    f"{name} names {host} ({why}), which outbound connections may not reach: "
                    "add it to FINCAP_OUTBOUND_ALLOW"
                )
        return warnings

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

    def search_config(self) -> SearchConfig:
        """How ranked search finds meaning, from these settings."""
        from resolvers.services.search_indexes import SearchConfig

        return SearchConfig(
            semantic=self.embeddings,
            vector_backend=self.vector_search,
            vector_index=self.vector_index,
            max_documents=self.search_index_documents,
        )

    @property
    def sources(self) -> SourceConfig:
        """What the inbound sources need, as the resolvers see it."""
        # Imported here, as search_config's: importing the resolvers package would make every
        # importer of the settings (the CLI, the analysis and rule-reading processes, which
        # start by importing the entry point) load the whole server.
        from resolvers.services.sources_config import SourceConfig

        return SourceConfig(
            inbound_domain=self.inbound_domain.lower(),
            inbound_max_bytes=self.inbound_max_mb * 1024 * 1024,
            mail_limits=MailLimits(
                header_bytes=self.inbound_max_header_kb * 1024,
                recipients=self.inbound_max_recipients,
                attachments=self.inbound_max_attachments,
            ),
            whatsapp_graph_url=self.whatsapp_graph_url,
            whatsapp_access_token=(
                self.whatsapp_access_token.get_secret_value() if self.whatsapp_access_token else ""
            ),
            whatsapp_reply=self.whatsapp_reply,
            mailbox_poll_s=self.mailbox_poll_seconds,
        )

    @property
    def base_url(self) -> str:
        """The service's public root (no trailing slash), for OpenAPI and file links."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")


class ClientSettings(_FromNamedVariables):
    """What the ``fincap`` client commands read from the environment; each overrides the
    config file (``~/.fincap/config.json``) and is overridden by ``--host``/``--org``."""

    model_config = SettingsConfigDict(
        frozen=True, env_ignore_empty=True, case_sensitive=True, extra="forbid"
    )

    api_key: str | None = variable(
        "FINCAP_API_KEY",
        None,
        description="CLI: the API key to call the server with (overrides `fincap auth login`)",
    )
    org_id: str | None = variable(
        "FINCAP_ORG_ID",
        None,
        description="CLI: the workspace (`org_…`) to act in (overrides `fincap workspace use`)",
    )
    host: str | None = variable(
        "FINCAP_HOST",
        None,
        description="CLI: the server's address (default `http://127.0.0.1:8000`)",
    )


def _describe(error: Any) -> str:
    where = ".".join(str(part) for part in error.get("loc", ())) or "settings"
    return f"{where}: {error.get('msg', 'invalid value')} (got {error.get('input')!r})"
