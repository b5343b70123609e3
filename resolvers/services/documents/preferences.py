"""A workspace's preferences that several capabilities read."""

from __future__ import annotations

from engines.reconciliation import MatchSettings
from persistence.store import Store

DEFAULT_CURRENCY = "USD"


async def preferred_currency(store: Store, workspace_id: str, user_id: str | None) -> str:
    """The workspace's preferred currency, else the user's, else USD (documents are converted
    to it at ingest, and ``documents.count`` totals in it)."""
    workspace = await store.workspaces.get_unscoped(workspace_id)
    if workspace and workspace.get("preferredCurrency"):
        return str(workspace["preferredCurrency"])
    user = await store.users.get(user_id) if user_id else None
    if user and user.get("preferredCurrency"):
        return str(user["preferredCurrency"])
    return DEFAULT_CURRENCY


async def matching_settings(store: Store, workspace_id: str, currency: str) -> MatchSettings:
    """The workspace's automatic matching (matches.configure), the engine's defaults
    (``engines.reconciliation.policy``) where it chose nothing."""
    chosen = await store.workspaces.matching(workspace_id)
    default = MatchSettings()
    return MatchSettings(
        auto=bool(chosen.get("autoMatch", default.auto)),
        threshold=float(chosen.get("threshold", default.threshold)),
        margin=float(chosen.get("margin", default.margin)),
        currency=currency,
    )
