"""QuickBooks Online: everything fincap knows about it, declared once
(``engines.connectors.declaration``).

The HTTP client is ``client.py`` beside this module, loaded only when the services are built:
importing this declaration costs no ``httpx`` (the rule grammar's child process reads it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engines.connectors.declaration import CallbackParameter, ConnectorDeclaration, Setting

if TYPE_CHECKING:
    from engines.connectors.quickbooks.client import QuickBooksConnector


def _connector_class() -> type[QuickBooksConnector]:
    from engines.connectors.quickbooks.client import QuickBooksConnector

    return QuickBooksConnector


QUICKBOOKS = ConnectorDeclaration(
    id="quickbooks",
    title="QuickBooks Online",
    kind="accounting",
    settings=(
        Setting(
            "client_id",
            None,
            "Intuit app's OAuth 2.0 client id; unset: QuickBooks cannot be connected",
        ),
        Setting("client_secret", None, "Intuit app's OAuth 2.0 client secret", secret=True),
        Setting(
            "authorize_url",
            "https://appcenter.intuit.com/connect/oauth2",
            "Intuit's authorization endpoint",
        ),
        Setting(
            "token_url",
            "https://oauth.platform.intuit.com/oauth2/v1/tokens/bearer",
            "Intuit's token endpoint",
            outbound=True,
        ),
        Setting(
            "revoke_url",
            "https://developer.api.intuit.com/v2/oauth2/tokens/revoke",
            "Intuit's token revocation endpoint (disconnect)",
            outbound=True,
        ),
        Setting(
            "api_url",
            "https://quickbooks.api.intuit.com",
            "QuickBooks Online API root (`/v3/company/<realm>/…`; the sandbox has its own)",
            outbound=True,
        ),
    ),
    aliases=("quickbooks online", "quick books", "qbo", "qb", "intuit quickbooks"),
    # QuickBooks' standard expense account names, resolved to the company's account ids when
    # a request is planned.
    account_codes={
        "Meals": "Meals and Entertainment",
        "Entertainment": "Meals and Entertainment",
        "Travel": "Travel",
        "Lodging": "Travel",
        "Transport": "Travel",
        "Fuel": "Automobile",
        "Office Supplies": "Office Expenses",
        "Software": "Dues & Subscriptions",
        "Utilities": "Utilities",
        "Telecom": "Utilities",
        "Professional Services": "Legal & Professional Fees",
    },
    default_account="Other Business Expenses",
    payment_account="Checking",
    # The company the user chose comes back on the redirect, not from an API call.
    callback_parameters=(CallbackParameter("realmId", "QuickBooks: the company chosen"),),
    connector_class=_connector_class,
)

__all__ = ["QUICKBOOKS"]
