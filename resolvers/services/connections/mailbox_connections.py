"""A connected mailbox's IMAP connection: its password sealed at rest with the server keyring
and opened only for the connection that uses it.

The mailboxes resource connects and polls mailboxes; activity.search asks the same mailboxes
for the messages a query names. Both reach the mailbox through here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engines.connectors.errors import SecretUnreadable
from engines.connectors.imap import ImapMailbox
from engines.keyring import InvalidToken, Keyring

if TYPE_CHECKING:
    from resolvers.framework.services import Services

PASSWORD_PURPOSE = "mailbox-password"


def seal_password(keyring: Keyring, password: str, mailbox_id: str) -> str:
    """The mailbox password as stored (encrypted, bound to the mailbox's id)."""
    return keyring.encrypt(PASSWORD_PURPOSE, password.encode(), mailbox_id.encode())


def connector_for(services: Services, row: dict[str, Any]) -> ImapMailbox:
    """The IMAP connector of a stored mailbox (its password decrypted for this use only)."""
    try:
        password = services.keyring.decrypt(
            PASSWORD_PURPOSE, row["passwordEncrypted"], row["_id"].encode()
        ).decode()
    except InvalidToken:
        raise SecretUnreadable(
            "the stored password cannot be decrypted (was FINCAP_SECRET_KEY replaced without "
            "keeping the old secret?); connect the mailbox again"
        ) from None
    return ImapMailbox(
        host=row["host"],
        port=row["port"],
        security=row["security"],
        username=row["username"],
        password=password,
        folder=row["folder"],
        outbound=services.outbound,
    )
