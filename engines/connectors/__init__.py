"""Accounting connectors (Xero, QuickBooks Online) behind one interface (``base``)."""
