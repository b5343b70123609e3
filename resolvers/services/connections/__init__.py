"""Connections a workspace makes to outside systems: accounting connections and their tokens
(``integration_connections``), export delivery to them (``export_delivery``), and connected
mailboxes (``mailbox_connections``). The connectors themselves are ``engines.connectors``.
"""
