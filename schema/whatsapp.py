"""Contract models of the whatsapp resource: which phone numbers send receipts for whom."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from schema.base import CapabilityInput, CapabilityOutput

# 7 to 15 digits (E.164), with the separators people type between them.
PHONE_PATTERN = r"^\+?(?:[ ().-]*[0-9]){7,15}[ ().-]*$"


class RegisterWhatsAppSender(CapabilityInput):
    """A phone number whose WhatsApp photos and PDFs become this workspace's documents."""

    phoneNumber: str = Field(
        pattern=PHONE_PATTERN,
        description="The member's WhatsApp number in international form, e.g. +49 151 2345678 "
        "(7 to 15 digits; spaces, dots, dashes and brackets are ignored)",
    )
    userId: str | None = Field(
        default=None,
        min_length=1,
        description="The member the number belongs to; default the caller. Owners and admins "
        "may name another member of the workspace",
    )


class RemoveWhatsAppSender(CapabilityInput):
    """A registered number to forget."""

    phoneNumber: str = Field(pattern=PHONE_PATTERN, description="The registered number")


class ListWhatsAppSenders(CapabilityInput):
    """whatsapp.list-senders takes no parameters; send ``{}``."""


class WhatsAppSender(CapabilityOutput):
    """A number mapped to a workspace member."""

    phoneNumber: str = Field(description="Digits only, with the country code (the wa_id)")
    userId: str
    updatedAt: datetime


class WhatsAppSenderList(CapabilityOutput):
    """The workspace's registered numbers."""

    senders: list[WhatsAppSender]


class RemovedWhatsAppSender(CapabilityOutput):
    """Whether the number was registered here and is now forgotten."""

    phoneNumber: str
    removed: bool
