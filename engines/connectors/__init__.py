"""Connectors to outside systems: accounting (Xero, QuickBooks Online), one package each that
declares the connector once (``declaration``; listed in ``registry.CONNECTORS``) with its HTTP
client behind one interface (``base``), and the inbound sources (IMAP mailboxes, WhatsApp
Graph) behind theirs (``sources``). Every one of them reports failures as a subclass of
``errors.ConnectorError`` whose class ``reason`` names the kind; those errors are this
package's public surface, importable from here."""

from engines.connectors import errors
from engines.connectors.errors import *  # noqa: F403  # the errors' public names are the package's

__all__ = errors.__all__
