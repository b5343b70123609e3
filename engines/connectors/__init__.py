"""Connectors to outside systems: accounting (Xero, QuickBooks Online), one package each that
declares the connector once (``declaration``; listed in ``registry.CONNECTORS``) with its HTTP
client behind one interface (``base``), and the inbound sources (IMAP mailboxes, WhatsApp
Graph) behind theirs (``sources``). Every one of them reports failures as
``errors.ConnectorError``."""
