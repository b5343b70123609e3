"""Capabilities of the rules resource, and the jobs that run scheduled and update rules.

A sentence becomes a rule in ``read_sentence``: the grammar first (offline); when it leaves part
of the sentence unread, or finds no action, and a language model is configured, the model is
asked, and its answer is kept only when it validates against the same ``RuleDefinition`` and
its conditions compile with the documents' where-clause compiler. Saved rules run in the
processing pipeline (``ApplyRules``), after a correction (``run-update-rules`` jobs) and on
their schedule (one ``run-scheduled-rule`` job per rule, queued again after each run).
"""

from __future__ import annotations

import calendar
import json
import logging
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from pydantic import ValidationError

from domain.rules import WEEKDAY_NUMBERS
from engines.rules.llm import RuleModel, RuleModelError
from persistence.documents import SEARCH_FIELDS, DocumentQuery
from persistence.ids import utcnow
from persistence.jobs import JobRecord
from persistence.rules import MAX_RULES_PER_WORKSPACE
from persistence.where import WhereError, compile_where
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest, Forbidden, NotFound, store_errors
from resolvers.framework.job_kinds import RunAgain, job_kind
from resolvers.framework.registry import MANAGERS, MEMBERS, ApprovalGate, capability
from resolvers.framework.services import Services
from resolvers.framework.validation import describe_validation_error
from resolvers.services.rules.rule_reading import read_sentence_off_loop
from resolvers.services.rules.rule_runner import (
    RESUME_CAPABILITY,
    RUN_MATCH_RULES,
    RUN_UPDATE_RULES,
    RuleEvent,
    apply_rule,
    held_actions_rejected,
    note_on_document,
    resume_held_actions,
    rule_fields,
    run_document_rules,
    run_transaction_rules,
)
from resolvers.services.rules.tagging import known_tags
from schema.rules import (
    TRANSACTION_MATCHED,
    AutomationRule,
    DeletedRule,
    DeleteRule,
    DisableRule,
    EnableRule,
    ExecuteRule,
    ListRules,
    PrepareRule,
    ResumedRule,
    ResumeRule,
    Rule,
    RuleDefinition,
    RuleList,
    RulePreview,
    RuleResult,
    RuleSchedule,
    RuleStats,
    SavedRule,
)

log = logging.getLogger("fincap.rules")
RUN_SCHEDULED_RULE = "run-scheduled-rule"
# A scheduled run acts on at most this many matching documents (the next run continues).
SWEEP_LIMIT = 500
# Deleting a rule rejects at most this many of its open approval requests (the rest stay
# pending; approving one then fails with "the rule was deleted").
MAX_OPEN_REJECTED = 1000


@dataclass
class SentenceReading:
    """A sentence read as a rule (validated), or None, with what was not understood."""

    rule: RuleDefinition | None
    not_understood: list[str]
    parsed_by: str = "grammar"
    warnings: list[str] = field(default_factory=list)


def _resolve_me(candidate: Any, email: str | None) -> Any:
    """ "Notify me": the address of the user saving the rule."""
    if not isinstance(candidate, dict):
        return candidate
    for action in candidate.get("actions") or []:
        if isinstance(action, dict) and action.get("email") in ("me", "myself", "us"):
            action["email"] = email
    return candidate


def validated(candidate: Any) -> RuleDefinition:
    """``candidate`` as a rule whose conditions compile; ValueError saying why not."""
    try:
        rule = RuleDefinition.model_validate(candidate)
    except ValidationError as exc:
        raise ValueError(describe_validation_error(exc, opening="")) from None
    try:
        compile_where(rule.conditions, rule_fields(rule), "conditions")
    except WhereError as exc:
        raise ValueError(str(exc)) from None
    return rule


async def read_sentence(ctx: Context, text: str) -> SentenceReading:
    """The grammar's reading of ``text``, or the language model's where the grammar fell short."""
    user = await ctx.store.users.get(ctx.user_id)
    email = (user or {}).get("email")
    # Parsing is CPU work of up to a second (``parser.PARSE_BUDGET_S``): off the event loop,
    # one sentence at a time in this process (``rule_reading``).
    draft = await read_sentence_off_loop(text)
    reading = SentenceReading(None, list(draft.not_understood), "grammar", list(draft.warnings))
    if draft.rule is not None:
        try:
            reading.rule = validated(_resolve_me(draft.rule, email))
        except ValueError as exc:
            reading.warnings.append(f"The sentence did not make a valid rule: {exc}")
    config = ctx.services.automation.rule_model
    if config is None or (reading.rule is not None and not reading.not_understood):
        return reading
    try:
        answer = await RuleModel(config, ctx.services.outbound).read(
            text, RuleDefinition.model_json_schema(), sorted(SEARCH_FIELDS)
        )
        candidate = answer.get("rule")
        if candidate is None:
            raise ValueError("it found no rule in the sentence")
        rule = validated(_resolve_me(candidate, email))
    except (RuleModelError, ValueError) as exc:
        reading.warnings.append(f"The language model's answer was not used: {exc}")
        return reading
    left_out = answer.get("notUnderstood")
    return SentenceReading(
        rule,
        [str(part) for part in left_out if str(part).strip()] if isinstance(left_out, list) else [],
        "llm",
        [w for w in reading.warnings if "valid rule" not in w],
    )


def webhook_refusals(services: Services, rule: RuleDefinition) -> list[str]:
    """Why each webhook of ``rule`` can never be delivered: its URL names an address (in any
    notation) or a local name the outbound policy refuses. No DNS is asked here (that would
    tell which names resolve inside); delivery checks the resolved addresses again."""
    refusals = []
    for action in rule.actions:
        if action.type != "notify-webhook" or not action.url:
            continue
        try:
            host = httpx.URL(action.url).host
        except httpx.InvalidURL:
            refusals.append(f"the webhook URL {action.url} is not a valid URL")
            continue
        if (why := services.outbound.literal_refusal(host)) is not None:
            refusals.append(
                f"the webhook URL {action.url} names {why}; webhooks go to public addresses "
                "(or to those FINCAP_OUTBOUND_ALLOW admits)"
            )
    return refusals


# -- schedules -------------------------------------------------------------------------------


def next_run(schedule: RuleSchedule, after: datetime) -> datetime:
    """The first time strictly after ``after`` (UTC) that ``schedule`` runs."""
    after = after.astimezone(UTC)
    at = after.replace(hour=schedule.hour, minute=0, second=0, microsecond=0)
    if schedule.frequency == "daily":
        return at if at > after else at + timedelta(days=1)
    if schedule.frequency == "weekly":
        ahead = (WEEKDAY_NUMBERS[schedule.weekday or "monday"] - at.weekday()) % 7
        at += timedelta(days=ahead)
        return at if at > after else at + timedelta(days=7)
    day = schedule.dayOfMonth or 1
    at = at.replace(day=day)
    if at > after:
        return at
    year, month = (at.year + 1, 1) if at.month == 12 else (at.year, at.month + 1)
    return at.replace(year=year, month=month, day=min(day, calendar.monthrange(year, month)[1]))


# -- views -----------------------------------------------------------------------------------


def rule_view(record: dict[str, Any], awaiting: list[str] | None = None) -> AutomationRule:
    return AutomationRule(
        id=record["_id"],
        name=record["name"],
        status=record["status"],
        triggerType=record["triggerType"],
        naturalLanguageRule=record["naturalLanguageRule"],
        definition=RuleDefinition.model_validate(record["definition"]),
        stats=RuleStats.model_validate(
            {**(record.get("stats") or {}), "awaitingApproval": awaiting or []}
        ),
        createdBy=record["createdBy"],
        createdAt=record["createdAt"],
        updatedAt=record["updatedAt"],
        nextRunAt=record.get("nextRunAt") if record["status"] == "enabled" else None,
    )


async def _matching_counts(
    ctx: Context, rule: RuleDefinition | None
) -> tuple[int | None, int | None]:
    """(matching documents, matching transactions) today: a transaction-matched rule's
    conditions are about transactions (its documents are only known once matched)."""
    if rule is None:
        return None, None
    workspace_id = ctx.require_workspace()
    if rule.trigger.type == TRANSACTION_MATCHED:
        return None, await ctx.store.transactions.count(workspace_id, rule.conditions)
    return await ctx.store.documents.reads.count(
        workspace_id, DocumentQuery(where=rule.conditions)
    ), None


# -- capabilities ----------------------------------------------------------------------------


@capability(
    "rules.prepare",
    input=PrepareRule,
    output=RulePreview,
    permissions=["read_rules"],
    effect="read",
    cost=1,  # up to a second of parsing: one at a time per key, within a budget (throttle)
)
async def prepare(ctx: Context, args: PrepareRule) -> RulePreview:
    """Reads a plain-language rule (e.g. "Categorize all Uber and Bolt receipts as Travel") into a
    structured rule and previews it, saving nothing: name, trigger (document-processed,
    document-updated, schedule, transaction-matched), conditions (a where clause as in
    documents.search, or as in transactions.search for a rule about bank transactions, e.g.
    "Transactions from Shell are Fuel") and actions (set-category, set-merchant, mark-recurring,
    archive, add-tag, send-to-integration, require-approval, notify-email, notify-webhook).
    notUnderstood lists what it does not reflect; matchingDocuments counts the documents it
    matches today (matchingTransactions the transactions, for a transaction-matched rule).
    """
    ctx.require_workspace()
    reading = await read_sentence(ctx, args.naturalLanguageRule)
    if reading.rule is not None:
        reading.warnings.extend(webhook_refusals(ctx.services, reading.rule))
    documents, transactions = await _matching_counts(ctx, reading.rule)
    return RulePreview(
        rule=reading.rule,
        notUnderstood=reading.not_understood,
        parsedBy=reading.parsed_by,  # type: ignore[arg-type]
        warnings=reading.warnings,
        matchingDocuments=documents,
        matchingTransactions=transactions,
    )


def _saving(args: ExecuteRule) -> bool:
    """A confirmed save is what waits for approval (confirm false is refused with a 400)."""
    return args.confirm is True


async def describe_rule(args: ExecuteRule) -> str:
    """What a reviewer reads: the sentence and the grammar's reading of it."""
    draft = await read_sentence_off_loop(args.naturalLanguageRule)
    reading = (
        json.dumps(
            {k: draft.rule[k] for k in ("trigger", "conditions", "actions")}, sort_keys=True
        )[:1500]
        if draft.rule
        else "no rule read by the grammar"
    )
    return f"Save the automation rule {args.naturalLanguageRule!r}: {reading}"


@capability(
    "rules.execute",
    input=ExecuteRule,
    output=SavedRule,
    permissions=["write_rules"],
    effect="write",
    roles=MEMBERS,
    cost=1,  # reads the sentence as rules.prepare does (and for the reviewer, when gated)
    approval=ApprovalGate(
        "Save an automation rule",
        applies=_saving,  # type: ignore[arg-type]
        describe=describe_rule,
        preflight=False,
    ),
)
async def execute(ctx: Context, args: ExecuteRule) -> SavedRule:
    """Creates and enables an automation rule from a plain-language description (read as
    rules.prepare does); confirm must be true. It runs on each newly processed document
    (document-processed), after each correction (document-updated), at its times (schedule) or
    when a bank transaction is matched, on the matched documents (transaction-matched). A
    webhook action's signing secret is returned here only. Waits for an owner's or admin's
    approval (status approval_required) unless switched off.
    """
    workspace_id = ctx.require_workspace()
    if args.confirm is not True:
        raise BadRequest(
            "Invalid request: confirm: must be true to save the rule (use rules.prepare to "
            "preview it)"
        )
    reading = await read_sentence(ctx, args.naturalLanguageRule)
    if reading.rule is None:
        unread = "; ".join(reading.not_understood) or args.naturalLanguageRule
        raise BadRequest(
            f"Invalid request: naturalLanguageRule: no rule could be read from it (not "
            f"understood: {unread})"
        )
    if refusals := webhook_refusals(ctx.services, reading.rule):
        raise BadRequest("Invalid request: naturalLanguageRule: " + "; ".join(refusals))
    if await ctx.store.rules.count(workspace_id) >= MAX_RULES_PER_WORKSPACE:
        raise BadRequest(
            f"A workspace has at most {MAX_RULES_PER_WORKSPACE} rules; delete one first"
        )
    definition = reading.rule
    for action in definition.actions:  # a tag to add must exist; stored as the tag spells it
        if action.type == "add-tag" and action.tag is not None:
            action.tag = (await known_tags(ctx, [action.tag], "naturalLanguageRule"))[0]
    secret = (
        secrets.token_urlsafe(32)
        if any(action.type == "notify-webhook" for action in definition.actions)
        else None
    )
    schedule = definition.trigger.schedule
    next_run_at = next_run(schedule, utcnow()) if schedule is not None else None
    record = await ctx.store.rules.create(
        workspace_id,
        name=definition.name,
        text=args.naturalLanguageRule,
        definition=definition.model_dump(mode="json", exclude_none=True),
        created_by=ctx.user_id,
        webhook_secret=None,
        next_run_at=next_run_at,
    )
    if secret is not None:
        sealed = ctx.services.keyring.encrypt(
            "rule-webhook", secret.encode(), record["_id"].encode()
        )
        await ctx.store.rules.set_webhook_secret(workspace_id, record["_id"], sealed)
    if next_run_at is not None:
        await _queue_schedule(ctx.services, workspace_id, record["_id"], next_run_at)
    return SavedRule(
        status="created",
        rule=rule_view(record),
        notUnderstood=reading.not_understood,
        warnings=reading.warnings,
        webhookSecret=secret,
    )


@capability(
    "rules.list",
    input=ListRules,
    output=RuleList,
    permissions=["read_rules"],
    effect="read",
)
async def list_rules(ctx: Context, args: ListRules) -> RuleList:
    """Lists the workspace's automation rules, newest first, with name, status, trigger type and
    execution stats. Disabled rules only with includeDisabled true.
    """
    records = await ctx.store.rules.listing(
        ctx.require_workspace(), include_disabled=args.includeDisabled, limit=args.limit
    )
    return RuleList(rules=await rule_views(ctx, records))


async def every_rule(ctx: Context, *, include_disabled: bool) -> list[Rule]:
    """All the workspace's rules (at most ``MAX_RULES_PER_WORKSPACE``), newest first, as
    rules.list shows them: the GraphQL face pages them (``Workspace.rules``). The caller has
    been authorized as for rules.list."""
    with store_errors():
        records = await ctx.store.rules.listing(
            ctx.require_workspace(),
            include_disabled=include_disabled,
            limit=MAX_RULES_PER_WORKSPACE,
        )
        return _as_nodes(await rule_views(ctx, records))


async def rules_by_id(ctx: Context, rule_ids: list[str]) -> list[Rule]:
    """The workspace's rules among ``rule_ids`` (the graph's node(id:)); another workspace's
    are simply not found. The caller has been authorized as for rules.list."""
    if not rule_ids:
        return []
    with store_errors():
        records = await ctx.store.rules.by_ids(ctx.require_workspace(), rule_ids)
        return _as_nodes(await rule_views(ctx, records))


def _as_nodes(views: list[AutomationRule]) -> list[Rule]:
    return [Rule.model_validate(view.model_dump()) for view in views]


async def rule_views(ctx: Context, records: list[dict[str, Any]]) -> list[AutomationRule]:
    """The rules with their open approval requests (read from the approvals themselves, so a
    request approved or rejected anywhere leaves the list at once)."""
    waiting = await ctx.store.approvals.unresolved(
        ctx.require_workspace(), RESUME_CAPABILITY, "ruleId", [r["_id"] for r in records]
    )
    return [rule_view(record, waiting.get(record["_id"])) for record in records]


def _require_author_or_manager(ctx: Context, record: dict[str, Any]) -> None:
    """A member changes the rules they saved; owners and admins change any."""
    if record.get("createdBy") != ctx.user_id and ctx.role not in MANAGERS:
        raise Forbidden(
            "Only the rule's author, or an owner or admin of the workspace, can change this rule"
        )


async def _set_status(ctx: Context, rule_id: str, status: str) -> RuleResult:
    workspace_id = ctx.require_workspace()
    record = await ctx.store.rules.get(workspace_id, rule_id)
    if record is None:
        raise NotFound(f"Rule '{rule_id}' not found")
    _require_author_or_manager(ctx, record)
    schedule = RuleDefinition.model_validate(record["definition"]).trigger.schedule
    next_run_at = next_run(schedule, utcnow()) if schedule and status == "enabled" else None
    updated = await ctx.store.rules.set_status(workspace_id, rule_id, status, next_run_at)
    if updated is None:
        raise NotFound(f"Rule '{rule_id}' not found")
    if next_run_at is not None:
        await _queue_schedule(ctx.services, workspace_id, rule_id, next_run_at)
    return RuleResult(rule=(await rule_views(ctx, [updated]))[0])


@capability(
    "rules.enable",
    input=EnableRule,
    output=RuleResult,
    permissions=["write_rules"],
    effect="write",
    roles=MEMBERS,
)
async def enable(ctx: Context, args: EnableRule) -> RuleResult:
    """Enables a rule: it runs again on its trigger (a scheduled rule from its next time).
    Enabling an enabled rule changes nothing. Its author, or an owner or admin."""
    return await _set_status(ctx, args.id, "enabled")


@capability(
    "rules.disable",
    input=DisableRule,
    output=RuleResult,
    permissions=["write_rules"],
    effect="write",
    roles=MEMBERS,
)
async def disable(ctx: Context, args: DisableRule) -> RuleResult:
    """Disables a rule: it keeps its definition and stats but runs no more until enabled. Its
    author, or an owner or admin.
    """
    return await _set_status(ctx, args.id, "disabled")


@capability(
    "rules.delete",
    input=DeleteRule,
    output=DeletedRule,
    permissions=["write_rules"],
    effect="destructive",
    roles=MEMBERS,
)
async def delete(ctx: Context, args: DeleteRule) -> DeletedRule:
    """Deletes a rule for good, with its stats; what it did to documents stays. Its pending
    approval requests are rejected. Its author, or an owner or admin.
    """
    workspace_id = ctx.require_workspace()
    record = await ctx.store.rules.get(workspace_id, args.id)
    if record is None:
        raise NotFound(f"Rule '{args.id}' not found")
    _require_author_or_manager(ctx, record)
    if not await ctx.store.rules.delete(workspace_id, args.id):
        raise NotFound(f"Rule '{args.id}' not found")
    waiting = await ctx.store.approvals.unresolved(
        workspace_id, RESUME_CAPABILITY, "ruleId", [args.id], limit=MAX_OPEN_REJECTED
    )
    for request_id in waiting.get(args.id, []):
        rejected = await ctx.store.approvals.reject(
            workspace_id, request_id, ctx.user_id, "The rule was deleted"
        )
        if rejected is not None:
            await held_actions_rejected(ctx, rejected)
    return DeletedRule(id=args.id, deleted=True)


@capability(
    "rules.resume",
    input=ResumeRule,
    output=ResumedRule,
    permissions=["write_documents"],
    effect="destructive",
    roles=MEMBERS,
    on_reject=held_actions_rejected,
    internal=True,
)
async def resume(ctx: Context, args: ResumeRule) -> ResumedRule:
    """Carries out, once, the actions an automation rule held for review on one document (the
    actions after its require-approval step), as the rule's author; with none, records the
    review. Internal: no face offers it. A rule's require-approval stores it as an approval
    request, and it runs when an owner or admin approves that request with approvals.approve
    (any other run is refused with 403). The document's activity says who approved and what
    was done."""
    workspace_id = ctx.require_workspace()
    request = await ctx.store.approvals.get(workspace_id, args.approvalRequestId)
    principal = ctx.principal
    if (
        principal.via != "rule"
        or principal.key_id != f"rule:{args.ruleId}"
        or request is None
        or request["capabilitySlug"] != RESUME_CAPABILITY
        or request["status"] != "running"  # claimed by the approval running it now
        or request["input"] != args.model_dump(mode="json", exclude_unset=True)
    ):
        raise Forbidden(
            "rules.resume runs only when an owner or admin approves the request a rule's "
            "require-approval stored (approvals.approve)"
        )
    rule = await ctx.store.rules.get(workspace_id, args.ruleId)
    if rule is None:
        raise BadRequest("Invalid request: ruleId: the rule was deleted; reject this request")
    event = RuleEvent(
        trigger=args.trigger,
        key=args.eventKey,
        duplicate_of=args.duplicateOf,
        approval=args.approvalRequestId,
    )
    done, sentence = await resume_held_actions(
        ctx.services,
        workspace_id,
        rule,
        args.documentId,
        event,
        start=args.fromAction,
        approved_by=request.get("resolvedBy"),
    )
    return ResumedRule(
        ruleId=args.ruleId,
        documentId=args.documentId,
        actionsApplied=done.applied,
        actionsFailed=done.failed,
        outcome=sentence,
    )


# -- jobs --------------------------------------------------------------------------------------


async def _queue_schedule(
    services: Services, workspace_id: str, rule_id: str, at: datetime
) -> None:
    await services.store.jobs.enqueue(
        workspace_id,
        RUN_SCHEDULED_RULE,
        {"ruleId": rule_id},
        run_after=at,
        dedupe_key=f"rule-schedule:{rule_id}",
    )
    services.wake_workers()


@job_kind(RUN_SCHEDULED_RULE)
async def run_scheduled_rule(services: Services, job: JobRecord) -> RunAgain | None:
    """A scheduled rule's run: its actions on the matching active documents it has not acted
    on before (at most ``SWEEP_LIMIT`` a run), then the same job again at the next time."""
    workspace_id, rule_id = job["workspaceId"], job["payload"]["ruleId"]
    store = services.store
    rule = await store.rules.get(workspace_id, rule_id)
    if rule is None or rule["status"] != "enabled":
        return None  # deleted or disabled: enabling queues a new job
    definition = RuleDefinition.model_validate(rule["definition"])
    schedule = definition.trigger.schedule
    if schedule is None:
        return None
    now = store.jobs.now()  # the clock the job was claimed by
    due = rule.get("nextRunAt")
    if due is not None and due.replace(tzinfo=due.tzinfo or UTC) > now + timedelta(seconds=1):
        return RunAgain(at=due)  # re-enabled with a later time than this job's
    event = RuleEvent(trigger="schedule", key="schedule")
    try:
        found = await store.documents.reads.find(
            workspace_id,
            DocumentQuery(where=definition.conditions),
            limit=SWEEP_LIMIT * 2,
            fields=["id"],
        )
    except WhereError as exc:
        await store.rules.record_run(
            workspace_id,
            rule_id,
            matched=0,
            applied=0,
            failed=0,
            error=f"its conditions no longer compile: {exc}",
        )
        found = []
    ids = [record["_id"] for record in found]
    done = await store.rules.applied_to(workspace_id, rule_id, ids, event.key) if ids else set()
    fresh = [document_id for document_id in ids if document_id not in done][:SWEEP_LIMIT]
    for document_id in fresh:
        if await store.rules.claim(workspace_id, rule_id, document_id, event.key):
            await apply_rule(services, workspace_id, rule, document_id, event, count_run=False)
    await store.rules.record_run(workspace_id, rule_id, matched=0, applied=0, failed=0, error=None)
    following = next_run(schedule, now)
    await store.rules.set_next_run(workspace_id, rule_id, following)
    return RunAgain(at=following)


@job_kind(RUN_UPDATE_RULES)
async def run_update_rules(services: Services, job: JobRecord) -> None:
    """document-updated rules on the corrected documents; what they did is added to each
    document's activity reasoning."""
    workspace_id = job["workspaceId"]
    event = RuleEvent(trigger="document-updated", key=f"updated:{job['_id']}")
    for document_id in job["payload"]["documentIds"]:
        lines = await run_document_rules(services, workspace_id, document_id, event)
        if lines:
            await note_on_document(
                services, workspace_id, document_id, "After an update: " + " ".join(lines)
            )


@job_kind(RUN_MATCH_RULES)
async def run_match_rules(services: Services, job: JobRecord) -> None:
    """transaction-matched rules on the transactions just matched (by a person or at import);
    what they did is added to each matched document's activity reasoning."""
    await run_transaction_rules(
        services, job["workspaceId"], list(job["payload"]["transactionIds"])
    )
