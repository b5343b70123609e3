"""The accounting connectors fincap has: one tuple, the one list everything derives from.

A new connector is a package ``engines/connectors/<id>/`` (its declaration in ``__init__.py``,
its HTTP client in ``client.py``) and one line here. The catalog, the mapping defaults, the
rule language's words, the rules schema's provider ``Literal``, the settings and their
reference page, the callback's parameters and the services' wiring all read ``CONNECTORS``
(``tests/integrations/test_declarations.py`` adds a stand-in and finds it in each).

Light on purpose: the declarations import nothing but ``engines.connectors.declaration``, so
the rule grammar's child process and the wire contract read this module without ``httpx``.
"""

from __future__ import annotations

from engines.connectors.declaration import ConnectorDeclaration
from engines.connectors.quickbooks import QUICKBOOKS
from engines.connectors.xero import XERO

CONNECTORS: tuple[ConnectorDeclaration, ...] = (XERO, QUICKBOOKS)


def provider_ids() -> tuple[str, ...]:
    """The integration ids, in the tuple's order (the rules schema's provider ``Literal``)."""
    return tuple(connector.id for connector in CONNECTORS)


def declaration_of(integration_id: str) -> ConnectorDeclaration | None:
    return next((c for c in CONNECTORS if c.id == integration_id), None)
