"""How the MCP server introduces itself: ``serverInfo`` and the ``instructions`` a client hands
its model at the start of a conversation."""

from __future__ import annotations

from app.host.operations import package_version

NAME = "fincap"
TITLE = "fincap"
DESCRIPTION = "Receipts and invoices: extracted fields, search, totals, corrections, accounting"

INSTRUCTIONS = """\
fincap holds a workspace's receipts and invoices: the fields read from each (merchant, \
docDate, amount, tax, currency, category), with search, totals, corrections, rules and \
sending to accounting (Xero, QuickBooks Online).

This connection acts in one workspace: with OAuth, the one chosen at sign-in; with an API key, \
the key's workspace, the one the X-Service-Org-Id header names, or the person's only one. Start \
with workspace_get_context to see which workspace, your role and scopes.

Then: documents_count for totals (groupBy category, merchant or month), documents_search to \
find documents, documents_get (or the resource fincap://documents/{id}) for one.

Dates are YYYY-MM-DD. Amounts are decimals in the document's currency, an ISO 4217 code such \
as EUR; totals come per currency and converted to the workspace's preferred currency. Tools \
with dryRun preview by default, and some calls wait for an owner's or admin's approval.\
"""


def server_version() -> str:
    """The installed fincap version, the one ``/healthz`` shows."""
    return package_version()


__all__ = ["DESCRIPTION", "INSTRUCTIONS", "NAME", "TITLE", "server_version"]
