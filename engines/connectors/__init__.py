"""Connectors to outside systems, one module each: accounting (Xero, QuickBooks Online) behind
one interface (``base``), and the inbound sources (IMAP mailboxes, WhatsApp Graph) behind theirs
(``sources``). Every one of them reports failures as ``errors.ConnectorError``."""
