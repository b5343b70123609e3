"""What an accounting connector declares about itself, in one place.

Each accounting connector is a package, ``engines/connectors/<id>/``: its ``__init__.py``
holds one ``ConnectorDeclaration`` (the provider id, the title people read, its settings with
their environment variables' defaults and descriptions, the words the rule language reads as
this product, the default account mapping, the extra parameters its OAuth redirect carries)
and the HTTP client sits beside it in ``client.py``. ``engines.connectors.registry`` lists the
declarations in one tuple, and everything that used to repeat a connector derives from it: the
catalog (``integrations.list``), the mapping defaults, the rule lexicon's words, the rules
schema's provider ``Literal``, the ``Settings`` fields and the configuration reference, the
callback route's documented parameters, and the services' wiring.

Why a package (a light ``__init__`` beside ``client.py``) rather than one module holding both:
the rule grammar runs in a deliberately small child process that must not load ``httpx`` or
the server (``resolvers.services.rules.rule_reading``), yet its lexicon reads every connector's
words, and the wire contract (``schema``) reads the provider ids. In one module, every function
of the client would have to import ``httpx`` and ``base`` inside itself, and one top-level
import added later would load them into every reader. Split, the declaration imports only this
module, and one small loader (``connector_class``, called by the services factory alone)
imports the client when the services are built. ``tests/rules/test_reader_imports.py`` fails
if reading a rule loads ``httpx``, the server or a connector's client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from engines.connectors.base import AccountingConnectorClass

ConnectorKind = Literal["accounting"]


@dataclass(frozen=True)
class Setting:
    """One setting of a connector's app registration: a field of the connector's app settings
    (``OAuthApp``) and an environment variable, ``FINCAP_<ID>_<NAME>``."""

    name: str  # the app settings' field: client_id, token_url …
    default: str | None
    description: str  # the row of the configuration reference
    secret: bool = False  # kept as a SecretStr, never logged
    # The server itself connects there, so the outbound policy must admit it (start-up warns
    # otherwise); the authorization URL is only where the user's browser goes.
    outbound: bool = False


@dataclass(frozen=True)
class CallbackParameter:
    """A query parameter the provider adds to its OAuth redirect, beside ``code`` and
    ``state`` (documented on the callback route)."""

    name: str
    description: str


@dataclass(frozen=True)
class ConnectorDeclaration:
    """Everything fincap needs to know about one accounting connector."""

    id: str  # the integration id: integrationId, the rule language's provider, env prefix
    title: str  # what people read: "QuickBooks Online"
    kind: ConnectorKind
    settings: tuple[Setting, ...]
    # Words the rule language reads as this product, besides the id itself.
    aliases: tuple[str, ...]
    # Document category → the product's account (a code, or a name resolved per company).
    account_codes: Mapping[str, str]
    default_account: str  # for categories not mapped
    # Loads the HTTP client's class (``client.py``) when called: the services factory alone does.
    connector_class: Callable[[], AccountingConnectorClass] = field(repr=False)
    payment_account: str | None = None  # where receipts (already paid) are paid from
    callback_parameters: tuple[CallbackParameter, ...] = ()

    @property
    def words(self) -> tuple[str, ...]:
        """The id and the aliases: every phrase the rule language reads as this product."""
        return (self.id, *self.aliases)

    def env_name(self, setting: Setting) -> str:
        return f"FINCAP_{self.id.upper()}_{setting.name.upper()}"

    def field_name(self, setting: Setting) -> str:
        """The ``Settings`` field of ``setting``: ``xero_client_id``."""
        return f"{self.id}_{setting.name}"

    def defaults(self) -> dict[str, str | None]:
        """The app settings with nothing configured (no client id: not connectable)."""
        return {setting.name: setting.default for setting in self.settings}


__all__ = ["CallbackParameter", "ConnectorDeclaration", "ConnectorKind", "Setting"]
