"""Running automation rules: which enabled rules match a document, and what their actions do.

Matching uses the documents' own where-clause compiler: every rule's conditions are compiled
against the search fields and the document is tested against all of them in one read (the
document by id, one ``$facet`` branch per rule), so a rule matches exactly the documents
``documents.search`` would return for the same clause. Rules see the document as processing (or
the correction) left it; one rule's change does not make another rule match in the same event.

Actions change documents only through the documents repository's update paths (edit history
and dashboard rollups move with them), record who did it (``editedBy`` is the rule id, ``via``
is ``rule``), and never raise: a failed action is counted in the rule's stats with its error and
named in the activity reasoning, and processing goes on.

``require-approval`` holds the actions after it: the runner stores one approval request (the
same ``approval_requests`` records gated calls make, so approvals.get/approve/reject and MCP
work unchanged) whose call is ``rules.resume`` for this rule, document and event. Approving it
runs that call once, as the rule's author, and the held actions are carried out by the same loop
(``_carry_out``); rejecting it applies nothing, and both are noted in the document's activity.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from engines.rules.notify import NotifyError, post_webhook, send_email
from persistence.approvals import new_request_id
from persistence.documents import SEARCH_FIELDS, EditEntry, Loaded
from persistence.ids import utcnow
from persistence.tags import name_key
from persistence.transactions import FIELDS as TRANSACTION_FIELDS
from persistence.where import WhereError, compile_where
from resolvers.framework.approval_gate import requester_of
from resolvers.framework.context import Context, Principal
from resolvers.framework.errors import CapabilityError, NotFound
from resolvers.framework.invoke import invoke_as
from resolvers.framework.services import Services
from resolvers.services.documents.document_edits import edit_entries, with_summary
from resolvers.services.documents.document_views import full_view, jsonable
from schema.rules import TRANSACTION_MATCHED, RuleAction, RuleDefinition
from schema.tags import MAX_TAGS_PER_DOCUMENT

log = logging.getLogger("fincap.rules")

# The capabilities the integration actions call (built by other resources; an action whose
# capability this service does not have fails with a clear error).
SEND_CAPABILITY = "integrations.send"
LIST_INTEGRATIONS_CAPABILITY = "integrations.list"
# The call an approval request of require-approval stores (resolvers/resources/rules.py).
RESUME_CAPABILITY = "rules.resume"
REQUIRE_APPROVAL = "require-approval"
EVENT_PROCESSED = "processed"
RUN_UPDATE_RULES = "run-update-rules"
RUN_MATCH_RULES = "run-match-rules"
# A run-match-rules job holds at most this many transactions (an import's matches are queued in
# jobs of this size): read in one go (the transactions, then which rules match them), and
# acted on well within a job's time limit (about 0.1 s per matched document on a loaded
# 2-core machine: bench/match_rules.py), other workspaces' jobs running in between.
MATCH_RULES_SLICE = 500


class ActionFailed(Exception):
    """An action could not be carried out; the message says why (it is shown to users)."""


@dataclass(frozen=True)
class RuleEvent:
    """What happened to the document: the trigger type and an id that makes acting on it
    idempotent (a retried job or sweep does not act twice)."""

    trigger: str
    key: str
    duplicate_of: str | None = None
    # Set while carrying out actions an owner or admin approved (that approval's id): the
    # capabilities they call are not gated a second time.
    approval: str | None = None


@dataclass
class Outcome:
    """What a rule's actions did on one document."""

    applied: int = 0
    failed: int = 0
    error: str | None = None
    said: list[str] = field(default_factory=list)


async def queue_update_rules(
    services: Services, workspace_id: str, document_ids: list[str], request_id: str = ""
) -> None:
    """After a correction: run the workspace's document-updated rules on these documents, in
    a durable job (the correction's answer does not wait for notifications)."""
    if not document_ids or not await services.store.rules.enabled(workspace_id, "document-updated"):
        return
    await services.store.jobs.enqueue(
        workspace_id, RUN_UPDATE_RULES, {"documentIds": document_ids, "requestId": request_id}
    )
    services.wake_workers()


def rule_fields(definition: RuleDefinition) -> dict[str, Any]:
    """The fields a rule's conditions are about: the documents' search fields, or a
    transaction-matched rule's transaction fields (as transactions.search reads them)."""
    if definition.trigger.type == TRANSACTION_MATCHED:
        return dict(TRANSACTION_FIELDS)
    return dict(SEARCH_FIELDS)


def rule_filter(rule: Mapping[str, Any]) -> dict[str, Any]:
    """The MongoDB filter of a stored rule's conditions (``{}``: every document)."""
    definition = RuleDefinition.model_validate(rule["definition"])
    return compile_where(definition.conditions, rule_fields(definition), "conditions")


async def queue_match_rules(
    services: Services, workspace_id: str, transaction_ids: list[str]
) -> None:
    """After matches were made (matches.confirm, an import's automatic matches): run the
    workspace's transaction-matched rules on them in durable jobs, as the correction rules
    run (the request does not wait; an import's matches make one job per 500)."""
    if not transaction_ids or not await services.store.rules.enabled(
        workspace_id, TRANSACTION_MATCHED
    ):
        return
    for start in range(0, len(transaction_ids), MATCH_RULES_SLICE):
        ids = transaction_ids[start : start + MATCH_RULES_SLICE]
        await services.store.jobs.enqueue(workspace_id, RUN_MATCH_RULES, {"transactionIds": ids})
    services.wake_workers()


def _match_key(transaction_id: str, match: Mapping[str, Any]) -> str:
    """The event of one match: the transaction and when the match was made (a match undone
    and made again is a new event; a retried job is the same one)."""
    at = match.get("at")
    stamp = at.isoformat() if isinstance(at, datetime) else str(at)
    return f"matched:{transaction_id}:{stamp}"


async def run_transaction_rules(
    services: Services, workspace_id: str, transaction_ids: list[str]
) -> None:
    """The workspace's enabled transaction-matched rules on these transactions, while still
    matched: each rule whose conditions match a transaction acts on the documents of its
    match; one run per transaction per rule in the stats; what they did is noted in each
    document's activity reasoning."""
    store = services.store
    rules = await store.rules.enabled(workspace_id, TRANSACTION_MATCHED)
    if not rules:
        return
    filters: dict[str, dict[str, Any]] = {}
    for rule in rules:
        try:
            filters[rule["_id"]] = rule_filter(rule)
        except (WhereError, ValueError) as exc:
            await store.rules.record_run(
                workspace_id,
                rule["_id"],
                matched=0,
                applied=0,
                failed=0,
                error=f"its conditions no longer compile: {exc}",
            )
    # A job holds at most MATCH_RULES_SLICE transactions (queue_match_rules).
    ids = transaction_ids
    found = {
        t["_id"]: t
        for t in await store.transactions.by_ids(workspace_id, ids)
        if t.get("matched") and t.get("matches")
    }
    matched = await store.transactions.matching(workspace_id, list(found), filters)
    for rule in rules:
        misses = sum(1 for t in found if t not in matched.get(rule["_id"], set()))
        if rule["_id"] in filters and misses:
            await store.rules.record_run(
                workspace_id, rule["_id"], matched=0, applied=0, failed=0, error=None,
                runs=misses,
            )  # fmt: skip
    for transaction_id in ids:
        transaction = found.get(transaction_id)
        if transaction is None:
            continue  # undone (or gone) before the job ran: nothing to act on
        match = transaction["matches"][0]
        event = RuleEvent(trigger=TRANSACTION_MATCHED, key=_match_key(transaction_id, match))
        lines: dict[str, list[str]] = {}
        for rule in rules:
            if transaction_id not in matched.get(rule["_id"], set()):
                continue
            counted = False
            for document_id in match.get("documentIds") or []:
                if await store.rules.claim(workspace_id, rule["_id"], document_id, event.key):
                    line = await apply_rule(
                        services, workspace_id, rule, document_id, event, count_run=not counted
                    )
                    counted = True
                    lines.setdefault(document_id, []).append(line)
        for document_id, said in lines.items():
            await note_on_document(
                services,
                workspace_id,
                document_id,
                f"After a bank match ({transaction_id}): " + " ".join(said),
            )


async def run_document_rules(
    services: Services, workspace_id: str, document_id: str, event: RuleEvent
) -> list[str]:
    """Run the workspace's enabled rules of ``event.trigger`` on one document; one line per
    rule that matched, saying what it did (for the activity reasoning)."""
    store = services.store
    rules = await store.rules.enabled(workspace_id, event.trigger)
    if not rules:
        return []
    filters: dict[str, dict[str, Any]] = {}
    broken: dict[str, str] = {}
    for rule in rules:
        try:
            filters[rule["_id"]] = rule_filter(rule)
        except (WhereError, ValueError) as exc:
            broken[rule["_id"]] = f"its conditions no longer compile: {exc}"
    matched = await store.documents.reads.matching(workspace_id, document_id, filters)
    lines: list[str] = []
    await store.rules.record_evaluations(
        workspace_id, [r["_id"] for r in rules if r["_id"] not in matched and r["_id"] in filters]
    )
    for rule in rules:
        rule_id = rule["_id"]
        if rule_id in broken:
            await store.rules.record_run(
                workspace_id, rule_id, matched=0, applied=0, failed=0, error=broken[rule_id]
            )
        elif rule_id in matched and await store.rules.claim(
            workspace_id, rule_id, document_id, event.key
        ):
            lines.append(await apply_rule(services, workspace_id, rule, document_id, event))
    return lines


async def apply_rule(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    document_id: str,
    event: RuleEvent,
    *,
    count_run: bool = True,
) -> str:
    """Carry out the rule's actions on one matching document and count them in its stats
    (as a run of its own unless ``count_run`` is false: a scheduled run counts once); a
    sentence saying what happened."""
    done = await _carry_out(services, workspace_id, rule, document_id, event, start=0)
    await services.store.rules.record_run(
        workspace_id,
        rule["_id"],
        matched=1,
        applied=done.applied,
        failed=done.failed,
        error=done.error,
        runs=int(count_run),
    )
    return f"Rule '{rule['name']}': {'; '.join(done.said)}."


async def _carry_out(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    document_id: str,
    event: RuleEvent,
    *,
    start: int,
) -> Outcome:
    """The rule's actions from index ``start`` on, in order, up to and including the first
    require-approval (which holds the rest for review)."""
    definition = RuleDefinition.model_validate(rule["definition"])
    done = Outcome()
    for index, action in enumerate(definition.actions[start:], start):
        # Read again before each action: the one before may have changed it.
        loaded = await services.store.documents.reads.loaded(workspace_id, document_id)
        if loaded is None:
            done.said.append("the document no longer exists")
            break
        holds = action.type == REQUIRE_APPROVAL
        ok = False
        try:
            if holds:
                text, changed = await hold_for_approval(
                    services, workspace_id, rule, definition, index, loaded, event
                )
            else:
                text, changed = await ACTIONS[action.type](
                    services, workspace_id, rule, action, loaded, event
                )
            ok = True
        except ActionFailed as exc:
            done.failed += 1
            done.error = f"{action.type}: {exc}"
            done.said.append(f"{action.type} failed: {exc}")
        except Exception as exc:  # an action must never stop processing
            log.exception("rule action failed", extra={"ruleId": rule["_id"]})
            done.failed += 1
            done.error = f"{action.type}: unexpected error ({type(exc).__name__})"
            done.said.append(f"{action.type} failed (unexpected error)")
        if ok:
            done.applied += int(changed)
            done.said.append(text)
        if holds:
            # Held for review or, when the request could not be stored, not applied at all:
            # the actions after a require-approval never run without an approval.
            if not ok and index + 1 < len(definition.actions):
                done.said.append("the actions after it were not applied")
            break
    return done


# -- actions ---------------------------------------------------------------------------------


ActionFn = Callable[
    [Services, str, Mapping[str, Any], RuleAction, Loaded, RuleEvent],
    Awaitable[tuple[str, bool]],
]

# The actions that change fields: the changes each makes and what it says it did.
FIELD_CHANGES: dict[str, Callable[[RuleAction], tuple[dict[str, Any], str]]] = {
    "set-category": lambda a: ({"category": a.category}, f"set category to {a.category}"),
    "set-merchant": lambda a: ({"merchant": a.merchant}, f"set merchant to {a.merchant}"),
    "mark-recurring": lambda a: (
        {"isRecurring": True, "recurringType": a.recurringType},
        f"marked as {a.recurringType} recurring",
    ),
}


async def set_fields(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    """set-category, set-merchant and mark-recurring: edit history entries and the change, as
    a correction would (only the fields that actually change)."""
    changes, described = FIELD_CHANGES[action.type](action)
    return await _correct(services, workspace_id, rule, loaded, changes, described)


async def _correct(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    loaded: Loaded,
    changes: dict[str, Any],
    described: str,
) -> tuple[str, bool]:
    """Write ``changes`` as the rule's correction (what it says: ``described``)."""
    current = full_view(loaded.document, services.base_url)
    changes = with_summary(current, changes)
    edits = edit_entries(current, changes, by=rule["_id"], via="rule", at=utcnow())
    if not edits:
        return f"{described} (already so)", False
    changed = {entry["field"]: changes[entry["field"]] for entry in edits}
    updated = await services.store.documents.writes.update_fields(
        workspace_id, loaded, changed, edits
    )
    if updated is None:
        raise ActionFailed("the document no longer exists")
    return described, True


async def archive(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    """As documents.delete: the document and its active duplicates, references cleaned up."""
    store = services.store
    if loaded.document.get("archived"):
        return "archived (already so)", False
    duplicates = await store.documents.reads.active_duplicates_of(workspace_id, loaded.id)
    gone = [loaded.id, *duplicates]
    now = utcnow()
    await store.documents.writes.record_edits(
        workspace_id,
        {
            document_id: [
                EditEntry(
                    field="archived",
                    oldValue=False,
                    newValue=True,
                    editedBy=rule["_id"],
                    editedAt=now,
                    via="rule",
                )
            ]
            for document_id in gone
        },
    )
    await store.documents.writes.set_archived(workspace_id, gone, archived=True)
    await store.documents.writes.remove_references(workspace_id, gone)
    return "archived" + (f" with {len(duplicates)} duplicate(s)" if duplicates else ""), True


async def _acting_context(
    services: Services, workspace_id: str, rule: Mapping[str, Any]
) -> Context:
    """The rule acts as the user who saved it, while they are still a member."""
    user_id = rule["createdBy"]
    role = await services.store.workspaces.role_of(user_id, workspace_id)
    if role is None:
        raise ActionFailed("the rule's author is no longer a member of this workspace")
    principal = Principal(user_id=user_id, key_id=f"rule:{rule['_id']}", via="rule")
    return Context(services, principal, workspace_id, role, f"rule:{rule['_id']}")


async def _call(
    ctx: Context, slug: str, arguments: dict[str, Any], event: RuleEvent
) -> dict[str, Any]:
    registry = ctx.services.registry
    if registry is None or registry.get(slug) is None:
        raise ActionFailed(f"this service has no {slug} capability")
    try:
        result = await invoke_as(
            registry, slug, arguments, ctx, approved=event.approval is not None
        )
    except NotFound as exc:
        raise ActionFailed(exc.message) from None
    except CapabilityError as exc:
        raise ActionFailed(f"{slug}: {exc.message}") from None
    return result.model_dump(mode="json")


def _connected(listing: Mapping[str, Any], provider: str) -> tuple[str, str | None]:
    """The integration id and first tenant of ``provider`` in an integrations.list result
    (``{integrations: [{id, name, status, tenants: [{id, name}]}]}``)."""
    items = listing.get("integrations") or []
    found = [
        item
        for item in items
        if isinstance(item, Mapping)
        and provider in f"{item.get('id', '')} {item.get('name', '')}".lower().replace(" ", "")
    ]
    if not found:
        raise ActionFailed(f"this service offers no {provider} integration")
    connected = [item for item in found if item.get("status") == "connected"]
    if not connected:
        status = found[0].get("status") or "not connected"
        raise ActionFailed(f"{provider} is not connected in this workspace (status {status})")
    item = connected[0]
    tenants = item.get("tenants") or []
    tenant = tenants[0] if isinstance(tenants, list) and tenants else None
    tenant_id = (
        (tenant.get("tenantId") or tenant.get("id")) if isinstance(tenant, Mapping) else tenant
    )
    return str(item.get("id")), (str(tenant_id) if tenant_id else None)


async def send_to_integration(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    """Through ``integrations.send`` with dryRun false (approval gating applies as for a
    person's call, unless an owner or admin approved this very send through the rule's
    require-approval); a likely duplicate is not sent."""
    if event.duplicate_of is not None:
        return (
            f"not sent to {action.integration}: possible duplicate of {event.duplicate_of}",
            False,
        )
    ctx = await _acting_context(services, workspace_id, rule)
    integration_id, tenant_id = action.integrationId, action.tenantId
    if integration_id is None or tenant_id is None:
        registry = services.registry
        if registry is None or registry.get(SEND_CAPABILITY) is None:
            raise ActionFailed(f"this service has no {SEND_CAPABILITY} capability")
        found_id, found_tenant = _connected(
            await _call(ctx, LIST_INTEGRATIONS_CAPABILITY, {}, event), str(action.integration)
        )
        integration_id = integration_id or found_id
        tenant_id = tenant_id or found_tenant
    if tenant_id is None:
        raise ActionFailed(f"the {action.integration} integration has no tenant connected")
    result = await _call(
        ctx,
        SEND_CAPABILITY,
        {
            "documentId": loaded.id,
            "integrationId": integration_id,
            "tenantId": tenant_id,
            "dryRun": False,
        },
        event,
    )
    if result.get("status") == "approval_required":
        return (
            f"sending to {action.integration} awaits approval {result.get('approvalRequestId')}",
            True,
        )
    return f"sent to {action.integration}", True


def describe_action(action: RuleAction) -> str:
    """What an action will do, for the reviewer of a held action."""
    return {
        "set-category": f"set category to {action.category}",
        "set-merchant": f"set merchant to {action.merchant}",
        "mark-recurring": f"mark it {action.recurringType} recurring",
        "archive": "archive it",
        "add-tag": f"tag it {action.tag}",
        "send-to-integration": f"send it to {action.integration}",
        REQUIRE_APPROVAL: "ask for approval again",
        "notify-email": f"e-mail {action.email}",
        "notify-webhook": f"notify the webhook {action.url}",
    }[action.type]


def _described(services: Services, document: Mapping[str, Any]) -> str:
    doc = _summary(services, document)
    parts = [
        str(doc["merchant"] or "unknown merchant"),
        f"{doc['amount']} {doc['currency'] or ''}".strip() if doc["amount"] is not None else "",
        str(doc["docType"] or ""),
        str(doc["docDate"] or ""),
    ]
    return f"document {doc['id']} ({', '.join(p for p in parts if p)})"


async def hold_for_approval(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    definition: RuleDefinition,
    index: int,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    """require-approval: store one approval request whose call (rules.resume, as the rule's
    author) carries out the actions after this one on this document once an owner or admin
    approves it; with none after it, approving records the review."""
    registry = services.registry
    if registry is None or registry.get(RESUME_CAPABILITY) is None:
        raise ActionFailed(f"this service has no {RESUME_CAPABILITY} capability")
    ctx = await _acting_context(services, workspace_id, rule)
    action = definition.actions[index]
    held = [describe_action(a) for a in definition.actions[index + 1 :]]
    request_id = new_request_id()
    # The input names its own request: rules.resume runs only while that request is being
    # approved (see resolvers/rules.resume).
    call: dict[str, Any] = {
        "approvalRequestId": request_id,
        "ruleId": rule["_id"],
        "documentId": loaded.id,
        "fromAction": index + 1,
        "trigger": event.trigger,
        "eventKey": event.key,
    }
    if event.duplicate_of is not None:
        call["duplicateOf"] = event.duplicate_of
    approving = (
        f"Approving will, as the rule's author: {'; '.join(held)}."
        if held
        else "Approving records the review; the rule does nothing more."
    )
    await services.store.approvals.create(
        workspace_id,
        slug=RESUME_CAPABILITY,
        input=call,
        title=f"Review what rule '{rule['name']}' does to a document"[:200],
        description=" ".join(
            part
            for part in (
                f"Rule '{rule['name']}' matched {_described(services, loaded.document)}.",
                f"Reason: {action.reason}." if action.reason else "",
                approving,
                "Rejecting applies nothing.",
            )
            if part
        ),
        requester=requester_of(ctx),
        request_id=request_id,
    )
    return (
        f"waiting for approval {request_id}" + (f" to {'; '.join(held)}" if held else ""),
        True,
    )


async def note_on_document(
    services: Services, workspace_id: str, document_id: str, text: str
) -> None:
    """Append ``text`` to the reasoning of the activity item that brought the document in."""
    document = await services.store.documents.reads.document(
        workspace_id, document_id, ["activityId"]
    )
    activity_id = (document or {}).get("activityId")
    if activity_id:
        await services.store.activity.add_reasoning(workspace_id, activity_id, text)


async def _who(services: Services, user_id: str | None) -> str:
    user = await services.store.users.get(user_id) if user_id else None
    return str(user.get("email") or user_id) if user else str(user_id or "someone")


async def resume_held_actions(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    document_id: str,
    event: RuleEvent,
    *,
    start: int,
    approved_by: str | None,
) -> tuple[Outcome, str]:
    """Carry out a rule's actions from ``start`` on, approved by an owner or admin; counted in
    the rule's stats (not as a new run) and noted in the document's activity."""
    done = await _carry_out(services, workspace_id, rule, document_id, event, start=start)
    await services.store.rules.record_run(
        workspace_id,
        rule["_id"],
        matched=0,
        applied=done.applied,
        failed=done.failed,
        error=done.error,
        runs=0,
    )
    what = "; ".join(done.said) if done.said else "reviewed, nothing more to do"
    sentence = (
        f"Rule '{rule['name']}': approval {event.approval} granted by "
        f"{await _who(services, approved_by)}: {what}."
    )
    await note_on_document(services, workspace_id, document_id, sentence)
    return done, sentence


async def held_actions_rejected(ctx: Context, request: dict[str, Any]) -> None:
    """approvals.reject of a require-approval request: nothing runs; the document's activity
    says so."""
    workspace_id = ctx.require_workspace()
    call = request["input"]
    rule = await ctx.store.rules.get(workspace_id, call["ruleId"])
    name = f"'{rule['name']}'" if rule else call["ruleId"]
    message = request.get("rejectionMessage")
    await note_on_document(
        ctx.services,
        workspace_id,
        call["documentId"],
        f"Rule {name}: approval {request['_id']} rejected by "
        f"{await _who(ctx.services, request.get('resolvedBy'))}"
        + (f" ({message})" if message else "")
        + "; nothing was applied.",
    )


def _summary(services: Services, document: Mapping[str, Any]) -> dict[str, Any]:
    view = full_view(document, services.base_url)
    return {
        name: jsonable(view.get(name))
        for name in (
            "id",
            "merchant",
            "amount",
            "currency",
            "docDate",
            "category",
            "docType",
            "isRecurring",
            "link",
        )
    }


def _payload(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    loaded: Loaded,
    event: RuleEvent,
) -> dict[str, Any]:
    return {
        "event": "rule.matched",
        "ruleId": rule["_id"],
        "ruleName": rule["name"],
        "workspaceId": workspace_id,
        "trigger": event.trigger,
        "document": _summary(services, loaded.document),
        "sentAt": utcnow().isoformat(),
    }


async def notify_webhook(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    sealed = rule.get("webhookSecret")
    if not sealed:
        raise ActionFailed("the rule has no webhook secret")
    secret = services.keyring.decrypt("rule-webhook", sealed, rule["_id"].encode()).decode()
    config = services.automation
    try:
        status = await post_webhook(
            str(action.url),
            _payload(services, workspace_id, rule, loaded, event),
            secret,
            outbound=services.outbound,
            timeout_s=config.webhook_timeout_s,
        )
    except NotifyError as exc:
        raise ActionFailed(str(exc)) from None
    return f"webhook notified (HTTP {status})", True


async def notify_email(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    smtp = services.automation.smtp
    if smtp is None:
        raise ActionFailed("e-mail notifications need an SMTP relay (FINCAP_SMTP_HOST)")
    doc = _summary(services, loaded.document)
    amount = f"{doc['amount']} {doc['currency'] or ''}".strip() if doc["amount"] is not None else ""
    subject = f"[fincap] {rule['name']}: {doc['merchant'] or 'a document'} {amount}".strip()
    text = "\n".join(
        [
            f"The rule '{rule['name']}' matched a document ({event.trigger}).",
            "",
            *(f"{name}: {value}" for name, value in doc.items() if value is not None),
        ]
    )
    try:
        await send_email(smtp, str(action.email), subject[:200], text, outbound=services.outbound)
    except NotifyError as exc:
        raise ActionFailed(str(exc)) from None
    return f"e-mailed {action.email}", True


async def add_tag(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    loaded: Loaded,
    event: RuleEvent,
) -> tuple[str, bool]:
    """add-tag: the tag put on the document (as documents.tag would), while the tag exists."""
    wanted = str(action.tag)
    found = await services.store.tags.by_keys(workspace_id, [name_key(wanted)])
    if not found:
        raise ActionFailed(f"the tag '{wanted}' no longer exists (tags.create makes it again)")
    name = next(iter(found.values()))["name"]
    before = list(loaded.document.get("tags") or [])
    if name not in before and len(before) >= MAX_TAGS_PER_DOCUMENT:
        raise ActionFailed(f"the document already carries {MAX_TAGS_PER_DOCUMENT} tags")
    after = before if name in before else [*before, name]
    return await _correct(services, workspace_id, rule, loaded, {"tags": after}, f"tagged {name}")


# require-approval is not here: it stops the loop (``_carry_out`` calls hold_for_approval).
ACTIONS: dict[str, ActionFn] = {
    **dict.fromkeys(FIELD_CHANGES, set_fields),
    "archive": archive,
    "add-tag": add_tag,
    "send-to-integration": send_to_integration,
    "notify-email": notify_email,
    "notify-webhook": notify_webhook,
}
