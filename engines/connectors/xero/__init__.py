"""Xero: everything fincap knows about it, declared once (``engines.connectors.declaration``).

The HTTP client is ``client.py`` beside this module, loaded only when the services are built:
importing this declaration costs no ``httpx`` (the rule grammar's child process reads it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engines.connectors.declaration import ConnectorDeclaration, Setting

if TYPE_CHECKING:
    from engines.connectors.xero.client import XeroConnector


def _connector_class() -> type[XeroConnector]:
    from engines.connectors.xero.client import XeroConnector

    return XeroConnector


XERO = ConnectorDeclaration(
    id="xero",
    title="Xero",
    kind="accounting",
    settings=(
        Setting(
            "client_id",
            None,
            "Xero app's OAuth 2.0 client id; unset: Xero cannot be connected",
        ),
        Setting("client_secret", None, "Xero app's OAuth 2.0 client secret", secret=True),
        Setting(
            "authorize_url",
            "https://login.xero.com/identity/connect/authorize",
            "Xero's authorization endpoint (the user's browser goes there)",
        ),
        Setting(
            "token_url",
            "https://identity.xero.com/connect/token",
            "Xero's token endpoint",
            outbound=True,
        ),
        Setting(
            "api_url",
            "https://api.xero.com",
            "Xero's API root (`/connections`, `/api.xro/2.0/…`)",
            outbound=True,
        ),
    ),
    aliases=(),
    # Xero's demo/default chart of accounts: 429 General Expenses, 420 Entertainment, 493
    # Travel - National, 449 Motor Vehicle Expenses, 453 Office Expenses, 485 Subscriptions,
    # 445 Light, Power, Heating, 489 Telephone & Internet, 412 Consulting & Accounting.
    account_codes={
        "Meals": "420",
        "Entertainment": "420",
        "Travel": "493",
        "Lodging": "493",
        "Transport": "493",
        "Fuel": "449",
        "Office Supplies": "453",
        "Software": "485",
        "Utilities": "445",
        "Telecom": "489",
        "Professional Services": "412",
    },
    default_account="429",
    connector_class=_connector_class,
)

__all__ = ["XERO"]
