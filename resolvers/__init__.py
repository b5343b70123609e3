"""What each capability does, and the registry that collects them.

``RESOURCES`` is the one visible list of resource modules; ``build_registry()`` is called by the
app factory (and by tests), never at import time.
"""

from __future__ import annotations

from resolvers import currency, documents, files, workspaces
from resolvers.registry import Registry

RESOURCES = (currency, documents, files, workspaces)


def build_registry() -> Registry:
    """Collect every capability of ``RESOURCES`` and freeze the registry."""
    return Registry.from_modules(RESOURCES).freeze()
