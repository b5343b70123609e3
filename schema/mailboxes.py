"""Contract models of the mailboxes resource: connected IMAP mailboxes (the ``email`` source)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Literal

from pydantic import Field

from schema.base import (
    CONNECTOR_ERROR_REASON,
    CapabilityInput,
    CapabilityOutput,
    Integer,
    OneLine,
)
from schema.secrets import SECRET

MailboxSecurity = Literal["tls", "starttls", "none"]
MailboxStatus = Literal["active", "error"]


class ConnectMailbox(CapabilityInput):
    """An IMAP mailbox to read receipts from; the service signs in once before saving it."""

    # "server", not "host": the CLI's --host names the fincap server to call.
    server: OneLine = Field(
        min_length=1,
        max_length=253,
        # DNS labels of 1 to 63 letters, digits and inner hyphens (or an IPv4 address).
        pattern=r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
        r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$",
        description="IMAP server name, e.g. imap.example.com",
    )
    port: Integer = Field(default=993, ge=1, le=65535, description="IMAP port (993 with tls)")
    security: MailboxSecurity = Field(
        default="tls",
        description="tls (port 993), starttls (port 143) or none (unencrypted: test servers only)",
    )
    username: OneLine = Field(min_length=1, max_length=320, description="Sign-in name")
    password: Annotated[OneLine, SECRET] = Field(
        min_length=1,
        max_length=1024,
        description="App password; stored encrypted, never returned",
    )
    folder: OneLine = Field(default="INBOX", min_length=1, max_length=200, description="Folder")
    importSince: date | None = Field(
        default=None,
        description="The first read imports messages from this date (YYYY-MM-DD; default: 7 "
        "days ago)",
    )


class MailboxRef(CapabilityInput):
    """One connected mailbox."""

    id: str = Field(min_length=1, description="Mailbox id (mbx_…)")


class ListMailboxes(CapabilityInput):
    """mailboxes.list takes no parameters; send ``{}``."""


class Mailbox(CapabilityOutput):
    """A connected mailbox; its password is never shown."""

    id: str = Field(description="Mailbox id")
    server: str = Field(description="The IMAP server's host name")
    port: int = Field(description="The IMAP server's port")
    security: MailboxSecurity = Field(description="How the connection is encrypted")
    username: str = Field(description="The account name it signs in with")
    folder: str = Field(description="The folder read")
    importSince: date = Field(description="Mail received before this day is not imported")
    status: MailboxStatus = Field(description="error: the last read failed (see lastError)")
    lastError: str | None = Field(default=None, description="The last failure, in words")
    lastErrorReason: str | None = Field(default=None, description=CONNECTOR_ERROR_REASON)
    lastErrorAt: datetime | None = Field(default=None, description="When it failed last")
    lastPolledAt: datetime | None = Field(default=None, description="When it was last read")
    imported: int = Field(description="Messages taken in so far (receipts and skipped mail)")
    createdAt: datetime = Field(description="When it was connected")


class MailboxList(CapabilityOutput):
    """The workspace's connected mailboxes."""

    mailboxes: list[Mailbox] = Field(description="The mailboxes")


class MailboxPollResult(CapabilityOutput):
    """What one read of the mailbox did."""

    mailbox: Mailbox = Field(description="The mailbox after the read")
    imported: int = Field(description="New messages taken in by this read")
    activityIds: list[str] = Field(description="Activity items made from the messages read")


class DisconnectedMailbox(CapabilityOutput):
    """The mailbox is forgotten (its password with it); what was imported stays."""

    id: str = Field(description="The mailbox disconnected")
    disconnected: bool = Field(description="True once it is forgotten")
