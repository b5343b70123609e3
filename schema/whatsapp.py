"""Contract models of the whatsapp resource: which phone numbers send receipts for whom."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from schema.base import CapabilityInput, CapabilityOutput
from schema.secrets import SecretText

# 7 to 15 digits (E.164), with the separators people type between them.
PHONE_PATTERN = r"^\+?(?:[ ().-]*[0-9]){7,15}[ ().-]*$"


class RegisterWhatsAppSender(CapabilityInput):
    """A phone number whose WhatsApp photos and PDFs become this workspace's documents."""

    phoneNumber: str = Field(
        pattern=PHONE_PATTERN,
        description="International form, e.g. +49 151 2345678",
    )
    userId: str | None = Field(
        default=None,
        min_length=1,
        max_length=100,
        description="The member the number belongs to; default the caller",
    )


class RemoveWhatsAppSender(CapabilityInput):
    """A registered number to forget."""

    phoneNumber: str = Field(pattern=PHONE_PATTERN, description="The registered number")


class ListWhatsAppSenders(CapabilityInput):
    """whatsapp.list-senders takes no parameters; send ``{}``."""


class WhatsAppSender(CapabilityOutput):
    """A number mapped to a workspace member: registered, or pending until the number sends
    its verification code to the business number."""

    phoneNumber: str = Field(description="Digits only, with the country code (the wa_id)")
    userId: str = Field(description="The member the number belongs to")
    status: Literal["active", "pending"] = Field(
        description="active: its messages become documents here; pending: waiting for the "
        "number to send its verification code to the business number"
    )
    updatedAt: datetime = Field(description="When the mapping last changed")
    expiresAt: datetime | None = Field(
        default=None, description="pending: when the verification code stops working"
    )
    verificationCode: SecretText | None = Field(
        default=None,
        description="whatsapp.register-sender only (shown this once): the code the number must "
        "send, as a WhatsApp message, to the business number to prove it is the member's",
    )


class WhatsAppSenderList(CapabilityOutput):
    """The workspace's registered numbers."""

    senders: list[WhatsAppSender] = Field(description="The numbers")


class RemovedWhatsAppSender(CapabilityOutput):
    """Whether the number was registered here and is now forgotten."""

    phoneNumber: str = Field(description="The number (E.164)")
    removed: bool = Field(description="True when it was registered here and is now forgotten")
