"""The accounting connectors of a server, built from its settings."""

from __future__ import annotations

from app.config import Settings
from engines.connectors.catalog import Connectors, build_connectors
from engines.connectors.quickbooks import QuickBooksSettings
from engines.connectors.xero import XeroSettings


def _secret(value: object) -> str | None:
    getter = getattr(value, "get_secret_value", None)
    return getter() if getter is not None else None


def connectors_from(settings: Settings) -> Connectors:
    """Xero and QuickBooks Online with the configured app credentials and URLs."""
    return build_connectors(
        XeroSettings(
            client_id=settings.xero_client_id,
            client_secret=_secret(settings.xero_client_secret),
            authorize_url=settings.xero_authorize_url,
            token_url=settings.xero_token_url,
            api_url=settings.xero_api_url.rstrip("/"),
        ),
        QuickBooksSettings(
            client_id=settings.quickbooks_client_id,
            client_secret=_secret(settings.quickbooks_client_secret),
            authorize_url=settings.quickbooks_authorize_url,
            token_url=settings.quickbooks_token_url,
            revoke_url=settings.quickbooks_revoke_url,
            api_url=settings.quickbooks_api_url.rstrip("/"),
        ),
        # The configured URLs pass the policy like any other (README, Outbound connections).
        settings.outbound_policy(),
    )
