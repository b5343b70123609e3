"""A stand-in accounting connector, declared the way Xero and QuickBooks are, for
``test_declarations.py``: one declaration and a client class, nothing written anywhere else."""

from __future__ import annotations

from dataclasses import dataclass

from engines.connectors.base import OAuthApp, OAuthConnector
from engines.connectors.declaration import CallbackParameter, ConnectorDeclaration, Setting


@dataclass(frozen=True)
class LedgerlyApp(OAuthApp):
    region: str


class LedgerlyConnector(OAuthConnector[LedgerlyApp]):
    """Only what building it takes: the services factory makes one, nothing calls it."""

    settings_type = LedgerlyApp
    id = "ledgerly"
    name = "Ledgerly Books"
    scope = "bills"


LEDGERLY = ConnectorDeclaration(
    id="ledgerly",
    title="Ledgerly Books",
    kind="accounting",
    settings=(
        Setting("client_id", None, "Ledgerly app's client id; unset: Ledgerly cannot connect"),
        Setting("client_secret", None, "Ledgerly app's client secret", secret=True),
        Setting("authorize_url", "https://ledgerly.example/authorize", "Ledgerly's consent page"),
        Setting("token_url", "https://ledgerly.example/token", "Ledgerly's tokens", outbound=True),
        Setting("api_url", "https://api.ledgerly.example", "Ledgerly's API root", outbound=True),
        Setting("region", "eu", "Ledgerly's data region"),
    ),
    aliases=("ledgerly books", "the ledger"),
    account_codes={"Meals": "6100", "Travel": "6200"},
    default_account="6999",
    payment_account="Bank 1",
    callback_parameters=(CallbackParameter("ledgerRegion", "Ledgerly: the region chosen"),),
    connector_class=lambda: LedgerlyConnector,
)
