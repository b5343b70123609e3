"""Contract models of the rules resource: the rule model and the capabilities' bodies.

``RuleDefinition`` is the one model of an automation rule. The grammar's parse and a language
model's answer are both validated against it, and a saved rule is stored as it. A rule is data:
a trigger, a where clause for the documents' compiler (``persistence/where.py``) and actions.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from domain.documents import RecurringType
from domain.rules import TRANSACTION_RULE_ACTIONS, Weekday
from domain.where import WhereClause
from engines.connectors.registry import provider_ids
from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer
from schema.secrets import SecretText

MAX_RULE_TEXT = 1000

TriggerType = Literal["document-processed", "document-updated", "schedule", "transaction-matched"]
# The trigger of the rules about bank transactions: their conditions are a where clause over the
# transactions' fields (``domain.transactions.TRANSACTION_FILTERS``), their actions act on the
# documents matched to the transaction.
TRANSACTION_MATCHED = "transaction-matched"
ScheduleFrequency = Literal["daily", "weekly", "monthly"]
ActionType = Literal[
    "set-category",
    "set-merchant",
    "mark-recurring",
    "archive",
    "add-tag",
    "send-to-integration",
    "require-approval",
    "notify-email",
    "notify-webhook",
]
RuleStatus = Literal["enabled", "disabled"]
ParsedBy = Literal["grammar", "llm"]
# The accounting products a rule can send to: one value per declared connector
# (engines.connectors.registry, the one list; read here without loading any connector's client).
if TYPE_CHECKING:
    IntegrationProvider = str
else:
    IntegrationProvider = Literal[provider_ids()]


class RuleSchedule(BaseModel):
    """When a scheduled rule runs (UTC)."""

    model_config = ConfigDict(extra="forbid")

    frequency: ScheduleFrequency = Field(description="How often it runs")
    weekday: Weekday | None = Field(default=None, description="weekly: the day it runs")
    dayOfMonth: int | None = Field(
        default=None, ge=1, le=28, description="monthly: the day it runs (1-28)"
    )
    hour: int = Field(default=6, ge=0, le=23, description="the hour it runs, UTC")

    @model_validator(mode="after")
    def _fits_frequency(self) -> RuleSchedule:
        if self.frequency == "weekly" and self.weekday is None:
            self.weekday = "monday"
        if self.frequency == "monthly" and self.dayOfMonth is None:
            self.dayOfMonth = 1
        if self.frequency != "weekly" and self.weekday is not None:
            raise ValueError("weekday belongs to a weekly schedule")
        if self.frequency != "monthly" and self.dayOfMonth is not None:
            raise ValueError("dayOfMonth belongs to a monthly schedule")
        return self


class RuleTrigger(BaseModel):
    """What starts the rule: a document finished processing, a document was corrected, a
    schedule (then ``schedule`` says when), or a bank transaction was matched to documents."""

    model_config = ConfigDict(extra="forbid")

    type: TriggerType = Field(description="What starts the rule")
    schedule: RuleSchedule | None = Field(default=None, description="When it runs (type schedule)")

    @model_validator(mode="after")
    def _schedule_iff_scheduled(self) -> RuleTrigger:
        if (self.type == "schedule") != (self.schedule is not None):
            raise ValueError("a schedule belongs to, and is required by, trigger type schedule")
        return self


# Which parameter each action needs: the one place that says it (the model validator below).
ACTION_PARAMETERS: dict[str, tuple[str, ...]] = {
    "set-category": ("category",),
    "set-merchant": ("merchant",),
    "mark-recurring": ("recurringType",),
    "archive": (),
    "add-tag": ("tag",),
    "send-to-integration": ("integration",),
    "require-approval": (),
    "notify-email": ("email",),
    "notify-webhook": ("url",),
}
OPTIONAL_PARAMETERS: dict[str, tuple[str, ...]] = {
    "send-to-integration": ("integrationId", "tenantId"),
    "require-approval": ("reason",),
    "mark-recurring": (),
}
_ALL_PARAMETERS = (
    "category",
    "tag",
    "merchant",
    "recurringType",
    "integration",
    "integrationId",
    "tenantId",
    "email",
    "url",
    "reason",
)


class RuleAction(BaseModel):
    """One thing a rule does to a matching document; ``type`` says which parameters apply."""

    model_config = ConfigDict(extra="forbid")

    type: ActionType = Field(description="What the action does")
    category: str | None = Field(
        default=None, min_length=1, max_length=100, description="set-category: the category to set"
    )
    merchant: str | None = Field(
        default=None, min_length=1, max_length=200, description="set-merchant: the merchant to set"
    )
    tag: str | None = Field(
        default=None, min_length=1, max_length=50, description="add-tag: a tag's name (tags.list)"
    )
    recurringType: RecurringType | None = Field(
        default=None, description="mark-recurring: how often the document recurs"
    )
    integration: IntegrationProvider | None = Field(
        default=None, description="send-to-integration: the accounting product"
    )
    integrationId: str | None = Field(
        default=None, min_length=1, max_length=100, description="from integrations.list"
    )
    tenantId: str | None = Field(
        default=None, min_length=1, max_length=100, description="the tenant/company in it"
    )
    email: str | None = Field(
        default=None,
        pattern=r"^[^@\s]{1,64}@[^@\s]{1,255}$",
        max_length=320,
        description="notify-email: the recipient",
    )
    url: str | None = Field(
        default=None,
        pattern=r"^https?://[^\s]{1,2000}$",
        description="notify-webhook: the address that receives a signed POST",
    )
    reason: str | None = Field(
        default=None,
        max_length=500,
        description="require-approval: why, shown to the approver",
    )

    @model_validator(mode="after")
    def _parameters_fit_type(self) -> RuleAction:
        needed = ACTION_PARAMETERS[self.type]
        allowed = set(needed) | set(OPTIONAL_PARAMETERS.get(self.type, ()))
        missing = [name for name in needed if getattr(self, name) is None]
        if missing:
            raise ValueError(f"action {self.type} needs {', '.join(missing)}")
        extra = [n for n in _ALL_PARAMETERS if n not in allowed and getattr(self, n) is not None]
        if extra:
            raise ValueError(f"action {self.type} takes no {', '.join(extra)}")
        return self


class RuleDefinition(BaseModel):
    """An automation rule: a trigger, the documents it applies to, and what it does."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=120, description="The rule's name")
    trigger: RuleTrigger = Field(description="What starts it")
    conditions: WhereClause | None = Field(
        default=None,
        description="which documents: a where clause as in documents.search (none: every "
        "document); for trigger transaction-matched, which transactions: a where clause as in "
        "transactions.search",
    )
    actions: list[RuleAction] = Field(
        min_length=1, max_length=10, description="What it does, in order"
    )

    @model_validator(mode="after")
    def _actions_fit_trigger(self) -> RuleDefinition:
        if self.trigger.type == TRANSACTION_MATCHED:
            refused = [a.type for a in self.actions if a.type not in TRANSACTION_RULE_ACTIONS]
            if refused:
                raise ValueError(
                    f"a transaction-matched rule does not {', '.join(dict.fromkeys(refused))}: it "
                    f"can {', '.join(TRANSACTION_RULE_ACTIONS)} on the matched documents"
                )
        return self


# -- capability bodies ---------------------------------------------------------------------


class PrepareRule(CapabilityInput):
    """Input of rules.prepare."""

    naturalLanguageRule: str = Field(
        min_length=1,
        max_length=MAX_RULE_TEXT,
        description="The rule in plain language, e.g. 'Categorize all Uber and Bolt receipts "
        "as Travel'",
    )


class ExecuteRule(PrepareRule):
    """Input of rules.execute."""

    confirm: Boolean = Field(description="Must be true to save the rule")


class RulePreview(CapabilityOutput):
    """The structured rule read from a sentence; nothing is saved."""

    rule: RuleDefinition | None = Field(
        description="The rule, or null when no action could be read from the sentence"
    )
    notUnderstood: list[str] = Field(
        description="Parts of the sentence the rule does not reflect (empty: all understood)"
    )
    parsedBy: ParsedBy = Field(description="grammar (offline) or llm (the configured model)")
    warnings: list[str] = Field(description="Assumptions made and things to check")
    matchingDocuments: int | None = Field(
        description="Active documents the conditions match today (null without a rule, and "
        "for a transaction-matched rule, whose conditions are about transactions)"
    )
    matchingTransactions: int | None = Field(
        default=None,
        description="transaction-matched rules: bank transactions the conditions match today "
        "(matched or not; null for other rules)",
    )


class RuleStats(CapabilityOutput):
    """What a rule has done so far."""

    runs: int = Field(
        description="Times the rule was evaluated (one per document event or scheduled run)"
    )
    documentsMatched: int = Field(description="Documents the rule matched")
    actionsApplied: int = Field(description="Actions that succeeded")
    actionsFailed: int = Field(description="Actions that failed")
    lastRunAt: datetime | None = Field(description="When it last ran")
    lastError: str | None = Field(description="The last failure, in words")
    lastErrorAt: datetime | None = Field(description="When it failed last")
    awaitingApproval: list[str] = Field(
        default_factory=list,
        description="Approval requests this rule made (require-approval) that wait for an "
        "owner or admin, oldest first (at most 20): see approvals.get",
    )


class AutomationRule(CapabilityOutput):
    """A saved automation rule."""

    id: str = Field(description="Rule id")
    name: str = Field(description="The rule's name")
    status: RuleStatus = Field(description="Whether it runs")
    triggerType: TriggerType = Field(description="What starts it")
    naturalLanguageRule: str = Field(description="The rule as it was written in words")
    definition: RuleDefinition = Field(
        description="The rule as data: trigger, conditions and actions"
    )
    stats: RuleStats = Field(description="What it has done so far")
    createdBy: str = Field(description="The user who made it")
    createdAt: datetime = Field(description="When it was made")
    updatedAt: datetime = Field(description="When it last changed")
    nextRunAt: datetime | None = Field(description="Scheduled rules: the next run")


class Rule(AutomationRule):
    """A saved automation rule as a node of the graph (node(id:), Workspace.rules): the fields
    of AutomationRule, its id unique across every workspace."""


class SavedRule(CapabilityOutput):
    """rules.execute's result: the saved rule, and (once) its webhook signing secret."""

    status: Literal["created"]
    rule: AutomationRule = Field(description="The rule saved")
    notUnderstood: list[str] = Field(
        description="Parts of the text that became nothing in the rule"
    )
    warnings: list[str] = Field(description="What to check before relying on the rule")
    webhookSecret: SecretText | None = Field(
        description="Secret that signs this rule's webhook calls (X-Fincap-Signature); shown "
        "only here"
    )


class ListRules(CapabilityInput):
    """Input of rules.list."""

    includeDisabled: Boolean = Field(default=False, description="Also list disabled rules")
    limit: Integer = Field(default=20, ge=1, le=100, description="Rules per call")


class RuleList(CapabilityOutput):
    """The workspace's rules, newest first."""

    rules: list[AutomationRule] = Field(description="The rules, newest first")


class RuleId(CapabilityInput):
    """A rule by id."""

    id: str = Field(min_length=1, max_length=100, description="Rule id (rul_…)")


class EnableRule(RuleId):
    """Input of rules.enable."""


class DisableRule(RuleId):
    """Input of rules.disable."""


class DeleteRule(RuleId):
    """Input of rules.delete."""


class RuleResult(CapabilityOutput):
    """One rule after a change of status."""

    rule: AutomationRule = Field(description="The rule")


class DeletedRule(CapabilityOutput):
    """rules.delete's result."""

    id: str = Field(description="The rule deleted")
    deleted: Literal[True] = Field(description="Always true")


class ResumeRule(CapabilityInput):
    """Input of rules.resume: what a rule's require-approval step stored for the reviewer."""

    approvalRequestId: str = Field(min_length=1, max_length=100)
    ruleId: str = Field(min_length=1, max_length=100)
    documentId: str = Field(min_length=1, max_length=100)
    fromAction: Integer = Field(
        ge=0, le=10, description="Index of the first held action in the rule's actions"
    )
    trigger: TriggerType
    eventKey: str = Field(min_length=1, max_length=200)
    duplicateOf: str | None = Field(default=None, min_length=1, max_length=100)


class ResumedRule(CapabilityOutput):
    """What the approved actions did."""

    ruleId: str
    documentId: str
    actionsApplied: int
    actionsFailed: int
    outcome: str = Field(description="What happened, as recorded in the document's activity")
