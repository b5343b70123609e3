"""The integrations fincap offers, and the connectors of those it can export to, both derived
from the declarations (``engines.connectors.registry``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.connectors.base import AccountingConnector, SharedClient
from engines.connectors.registry import CONNECTORS
from engines.outbound import OutboundPolicy


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    category: str  # email, accounting, storage, social


# Only what is built: email, storage and social sources join when they exist. Listed by id, so
# integrations.list answers in an order that does not depend on where a connector is declared.
CATALOG: tuple[CatalogEntry, ...] = tuple(
    CatalogEntry(connector.id, connector.title, connector.kind)
    for connector in sorted(CONNECTORS, key=lambda connector: connector.id)
)


@dataclass(frozen=True)
class Connectors:
    """The accounting connectors by integration id."""

    by_id: dict[str, AccountingConnector]
    client: SharedClient

    def get(self, integration_id: str) -> AccountingConnector | None:
        return self.by_id.get(integration_id)

    async def aclose(self) -> None:
        await self.client.aclose()


def build_connectors(
    settings: Mapping[str, Mapping[str, Any]], policy: OutboundPolicy
) -> Connectors:
    """Every declared connector, with its app settings from ``settings`` (by integration id:
    the declaration's setting names → values; a connector not named gets its defaults, so
    cannot connect). Their HTTP goes through ``policy``."""
    client = SharedClient(policy)
    by_id: dict[str, AccountingConnector] = {}
    for declaration in CONNECTORS:
        values = {**declaration.defaults(), **settings.get(declaration.id, {})}
        connector_class = declaration.connector_class()
        by_id[declaration.id] = connector_class(connector_class.settings_type(**values), client)
    return Connectors(by_id, client)


def unconfigured() -> Connectors:
    """Connectors with no client ids (tests and servers that export nowhere)."""
    return build_connectors({}, OutboundPolicy())
