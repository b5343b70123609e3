"""What each value of the contract's closed vocabularies means (its Literal types).

A ``Field(description=…)`` says what a field is; the meaning of each value it may take is
declared once per vocabulary, keyed by the Literal's values, so every field sharing a
vocabulary (a document's ``source`` and an activity item's ``sourceType``) says the same. A
vocabulary of ``domain/`` is declared there with its meanings (``DECLARED`` gathers them);
the table below holds the meanings of the contract's other Literals, not yet declared there.
The GraphQL face describes each enum value from them (the explorer's Docs pane). Vocabularies
of document field names (``requiredFields``, ``sortBy``, ``fields``) take each field's own
description from ``Document``. ``meaning_of`` fails loudly in the schema's tests when a
Literal gains a value nobody described.
"""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any

from domain.doc_types import DOC_TYPES
from domain.documents import (
    ARCHIVE_FILTERS,
    COUNT_GROUPS,
    EXPORT_FILTERS,
    EXPORT_STATUSES,
    LOCATION_KINDS,
    PAYMENT_STATUSES,
    RECURRING_TYPES,
    SOURCES,
    STATUSES,
)
from domain.review import REVIEW_REASON_MEANINGS
from domain.roles import ROLES
from domain.rules import WEEKDAYS
from domain.transactions import (
    CSV_DELIMITERS,
    MATCH_KINDS,
    MATCH_OUTCOMES,
    STATEMENT_FORMAT_CHOICES,
    STATEMENT_FORMATS,
    TRANSACTION_SORT_FIELDS,
)
from domain.uploads import UPLOAD_TYPES
from domain.vocabulary import Vocabulary, vocabulary
from domain.where import WHERE_LOGIC, WHERE_OPS
from engines.connectors.registry import CONNECTORS
from schema.api_keys import KeyOrigin
from schema.approvals import APPROVAL_REQUIRED, ApprovalStatus, ApprovalStatusFilter
from schema.documents import Document, EvidenceField, InspectableField, RequiredField, SortField
from schema.events import DocumentEventKind
from schema.integrations import ExportRecordStatus, IntegrationCategory, IntegrationStatus
from schema.mailboxes import MailboxSecurity, MailboxStatus
from schema.rules import ActionType, ParsedBy, RuleStatus, ScheduleFrequency, TriggerType
from schema.transactions import MappingSource
from schema.views import ViewColumn

Meanings = Mapping[str, str]
# The vocabularies declared in domain/, each with its meanings.
DECLARED: tuple[Vocabulary, ...] = (
    ROLES,
    SOURCES,
    STATUSES,
    WEEKDAYS,
    DOC_TYPES,
    PAYMENT_STATUSES,
    RECURRING_TYPES,
    EXPORT_STATUSES,
    EXPORT_FILTERS,
    LOCATION_KINDS,
    ARCHIVE_FILTERS,
    COUNT_GROUPS,
    REVIEW_REASON_MEANINGS,
    MATCH_KINDS,
    MATCH_OUTCOMES,
    STATEMENT_FORMATS,
    STATEMENT_FORMAT_CHOICES,
    CSV_DELIMITERS,
    TRANSACTION_SORT_FIELDS,
    UPLOAD_TYPES,
    WHERE_LOGIC,
    WHERE_OPS,
)


def _declared(declared: Vocabulary) -> tuple[frozenset[str], Meanings]:
    return frozenset(declared.values), declared.meanings


def _vocabulary(literal: Any, meanings: Meanings) -> tuple[frozenset[str], Meanings]:
    """One vocabulary, checked now: every value of ``literal`` described, nothing else."""
    return _declared(vocabulary(literal, meanings))


def _document_fields(literal: Any) -> tuple[frozenset[str], Meanings]:
    """A vocabulary of document field names: each means what the field's description says."""
    fields = Document.model_fields
    return _vocabulary(
        literal, {name: str(fields[name].description) for name in typing.get_args(literal)}
    )


_VOCABULARIES: tuple[tuple[frozenset[str], Meanings], ...] = (
    _vocabulary(
        KeyOrigin,
        {
            "dashboard": "Made in the dashboard; lasts until revoked",
            "bootstrap": "Made by fincap admin bootstrap",
            "operator": "Made by an operator command (create-user, create-key)",
            "oauth": "Made through an OAuth client; ends with its grant",
            "api_key": "Made with another API key",
        },
    ),
    *(_declared(declared) for declared in DECLARED),
    _vocabulary(
        DocumentEventKind,
        {
            "document.created": "A document was stored (upload, mail, message); not read yet",
            "document.processed": "Reading finished: processed, warning, skipped or failed",
            "document.updated": "Corrected, edited in bulk, started processing or exported",
            "document.archived": "Archived",
            "document.unarchived": "Restored from the archive",
            "lagged": "This subscriber fell behind: skipped events were missed",
        },
    ),
    _vocabulary(
        ApprovalStatus,
        {
            "pending": "Waiting for an owner or admin (or being executed)",
            "executed": "Approved; the call ran once, as its requester",
            "rejected": "Rejected; the call will never run",
        },
    ),
    _vocabulary(
        ApprovalStatusFilter,
        {
            "pending": "Requests still waiting for a decision (or being executed)",
            "executed": "Requests approved, whose call ran",
            "rejected": "Requests rejected (or withdrawn by their requester)",
            "all": "Every request, whatever its status",
        },
    ),
    _vocabulary(typing.Literal["executed"], {"executed": "The approved call ran"}),
    _vocabulary(typing.Literal["rejected"], {"rejected": "The call will never run"}),
    _vocabulary(
        typing.Literal["approval_required"],
        {APPROVAL_REQUIRED: "Nothing ran yet: the call waits for approval (approvals.get)"},
    ),
    _vocabulary(RuleStatus, {"enabled": "The rule runs", "disabled": "The rule does not run"}),
    _vocabulary(
        TriggerType,
        {
            "document-processed": "When a document finishes processing",
            "document-updated": "When a document is corrected",
            "schedule": "On a schedule (see schedule)",
            "transaction-matched": "When a bank transaction is matched to documents (its "
            "conditions are about the transaction; its actions change the matched documents)",
        },
    ),
    _vocabulary(typing.Literal["local"], {"local": "Charges are recorded in the local ledger"}),
    _vocabulary(
        typing.Literal["invoice", "charge"],
        {"invoice": "An invoice for a billing period", "charge": "A one-off charge"},
    ),
    _vocabulary(typing.Literal["issued"], {"issued": "Issued to the billing account"}),
    _vocabulary(
        typing.Literal["plan", "overage", "charge"],
        {
            "plan": "The plan's price for the period",
            "overage": "Documents processed beyond the plan's quota",
            "charge": "A one-off charge",
        },
    ),
    _vocabulary(
        typing.Literal["month", "year"], {"month": "Billed monthly", "year": "Billed yearly"}
    ),
    _vocabulary(typing.Literal["active"], {"active": "Running; billed each period"}),
    _vocabulary(
        typing.Literal["active", "pending"],
        {
            "active": "Verified: what the number sends becomes the workspace's documents",
            "pending": "Waiting for the number to send its verification code",
        },
    ),
    _vocabulary(
        MailboxSecurity,
        {
            "tls": "Encrypted from the first byte (IMAPS, usually port 993)",
            "starttls": "Plain connection upgraded with STARTTLS (usually port 143)",
            "none": "Not encrypted (only for servers on a trusted network)",
        },
    ),
    _vocabulary(
        MailboxStatus,
        {"active": "Its last read worked", "error": "The last read failed (see lastError)"},
    ),
    _vocabulary(
        ExportRecordStatus,
        {
            "queued": "Waiting to be delivered",
            "sending": "Being delivered",
            "exported": "Delivered; the provider holds the bill",
            "failed": "Delivery failed (see error); it may be sent again",
            "unlinked": "Delivered once, then unlinked (integrations.unlink)",
        },
    ),
    _document_fields(EvidenceField),
    _document_fields(InspectableField),
    _document_fields(RequiredField),
    _document_fields(SortField),
    _document_fields(ViewColumn),
    _vocabulary(
        typing.Literal["words", "meaning"],
        {"words": "Its words matched (full text)", "meaning": "Its meaning matched (embeddings)"},
    ),
    _vocabulary(
        IntegrationCategory,
        {
            "email": "A mail source (none offered yet)",
            "accounting": "An accounting product (documents are sent to it)",
            "storage": "A file store (none offered yet)",
            "social": "A messaging source (none offered yet)",
        },
    ),
    _vocabulary(
        IntegrationStatus,
        {
            "available": "Can be connected; not connected here",
            "connected": "Connected in this workspace",
            "error": "The connection is in error (see lastError)",
        },
    ),
    _vocabulary(
        typing.Literal["ok", "error"],
        {"ok": "The mailbox answered", "error": "The mailbox did not answer (see error)"},
    ),
    _vocabulary(
        typing.Literal[tuple(c.id for c in CONNECTORS)],
        {c.id: c.title for c in CONNECTORS},
    ),
    _vocabulary(
        ActionType,
        {
            "set-category": "Set the category (category)",
            "set-merchant": "Set the merchant (merchant)",
            "mark-recurring": "Mark the document recurring (recurringType)",
            "archive": "Archive the document",
            "add-tag": "Put a tag of the workspace on the document",
            "send-to-integration": "Send the document to an accounting integration",
            "require-approval": "Hold the document for approval (reason)",
            "notify-email": "Send an e-mail about the document",
            "notify-webhook": "Call a webhook about the document (signed)",
        },
    ),
    _vocabulary(
        ParsedBy,
        {"grammar": "fincap's rule grammar (offline)", "llm": "The configured language model"},
    ),
    _vocabulary(
        ScheduleFrequency,
        {"daily": "Every day", "weekly": "Every week (on weekday)", "monthly": "Every month"},
    ),
    _vocabulary(
        typing.Literal["preview", "queued"],
        {
            "preview": "A dry run: what would be sent; nothing was",
            "queued": "The delivery is queued (follow its export record)",
        },
    ),
    _vocabulary(typing.Literal["created"], {"created": "The rule was saved"}),
    _vocabulary(
        typing.Literal["preview", "unlinked"],
        {
            "preview": "A dry run: what would be unlinked; nothing was",
            "unlinked": "The link is gone; the document can be sent again",
        },
    ),
    _vocabulary(typing.Literal["queued"], {"queued": "Stored; processing has not started yet"}),
    _vocabulary(
        typing.Literal["compact", "complete"],
        {
            "compact": "id, merchant, amount, currency, docDate, category, docType and the "
            "requiredFields",
            "complete": "Every field",
        },
    ),
    _vocabulary(
        typing.Literal["similarity", "mmr"],
        {
            "similarity": "The closest documents",
            "mmr": "Close, but diverse (maximal marginal relevance)",
        },
    ),
    _vocabulary(
        MappingSource,
        {
            "given": "The mapping sent with the import",
            "saved": "The mapping saved for the account or the file's header",
            "detected": "Detected from the header and the values",
        },
    ),
)


def meaning_of(values: tuple[str, ...], value: str) -> str | None:
    """What ``value`` means in the vocabulary ``values`` (a Literal's values; a gated
    capability's ``status`` gains ``approval_required``), or None when none is declared."""
    wanted = frozenset(values)
    for known, meanings in _VOCABULARIES:
        if known == wanted or (
            APPROVAL_REQUIRED in wanted and known == wanted - {APPROVAL_REQUIRED}
        ):
            if value in meanings:
                return meanings[value]
            if value == APPROVAL_REQUIRED:
                return meaning_of((APPROVAL_REQUIRED,), value)
    return None
