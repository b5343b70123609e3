"""The integrations fincap offers, and the connectors of those it can export to."""

from __future__ import annotations

from dataclasses import dataclass

from engines.connectors.base import AccountingConnector, SharedClient
from engines.connectors.quickbooks import QuickBooksConnector, QuickBooksSettings
from engines.connectors.xero import XeroConnector, XeroSettings
from engines.outbound import OutboundPolicy


@dataclass(frozen=True)
class CatalogEntry:
    id: str
    name: str
    category: str  # email, accounting, storage, social


# Only what is built: email, storage and social sources join this tuple when they exist.
CATALOG: tuple[CatalogEntry, ...] = (
    CatalogEntry("quickbooks", "QuickBooks Online", "accounting"),
    CatalogEntry("xero", "Xero", "accounting"),
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
    xero: XeroSettings, quickbooks: QuickBooksSettings, policy: OutboundPolicy
) -> Connectors:
    """The connectors with these app settings; their HTTP goes through ``policy``."""
    client = SharedClient(policy)
    return Connectors(
        {
            "xero": XeroConnector(xero, client),
            "quickbooks": QuickBooksConnector(quickbooks, client),
        },
        client,
    )


def unconfigured() -> Connectors:
    """Connectors with no client ids (tests and servers that export nowhere)."""
    return build_connectors(
        XeroSettings(None, None), QuickBooksSettings(None, None), OutboundPolicy()
    )
