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
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engines.rules.notify import NotifyError, post_webhook, send_email
from persistence.document_edits import EditEntry
from persistence.document_fields import SEARCH_FIELDS
from persistence.document_records import StoredDocument
from persistence.ids import utcnow
from persistence.where import WhereError, compile_where
from resolvers.context import Context, Principal, Services
from resolvers.document_edits import edit_entries
from resolvers.document_views import full_view, jsonable
from resolvers.errors import CapabilityError, NotFound
from resolvers.invoke import invoke_as
from schema.rules import RuleAction, RuleDefinition

log = logging.getLogger("fincap.rules")

# The capabilities the integration and approval actions call (built by other resources; an
# action whose capability this service does not have fails with a clear error).
SEND_CAPABILITY = "integrations.send"
LIST_INTEGRATIONS_CAPABILITY = "integrations.list"
APPROVAL_CAPABILITY = "approvals.request"
EVENT_PROCESSED = "processed"
RUN_UPDATE_RULES = "run-update-rules"


class ActionFailed(Exception):
    """An action could not be carried out; the message says why (it is shown to users)."""


@dataclass(frozen=True)
class RuleEvent:
    """What happened to the document: the trigger type and an id that makes acting on it
    idempotent (a retried job or sweep does not act twice)."""

    trigger: str
    key: str
    duplicate_of: str | None = None


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


def rule_filter(rule: Mapping[str, Any]) -> dict[str, Any]:
    """The MongoDB filter of a stored rule's conditions (``{}``: every document)."""
    definition = RuleDefinition.model_validate(rule["definition"])
    return compile_where(definition.conditions, dict(SEARCH_FIELDS), "conditions")


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
    matched = await store.documents.matching(workspace_id, document_id, filters)
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
    definition = RuleDefinition.model_validate(rule["definition"])
    applied = failed = 0
    error: str | None = None
    said: list[str] = []
    for action in definition.actions:
        record = await services.store.documents.get(workspace_id, document_id)
        if record is None:
            said.append("the document no longer exists")
            break
        try:
            text, changed = await ACTIONS[action.type](
                services, workspace_id, rule, action, record, event
            )
        except ActionFailed as exc:
            failed += 1
            error = f"{action.type}: {exc}"
            said.append(f"{action.type} failed: {exc}")
            continue
        except Exception as exc:  # an action must never stop processing
            log.exception("rule action failed", extra={"ruleId": rule["_id"]})
            failed += 1
            error = f"{action.type}: unexpected error ({type(exc).__name__})"
            said.append(f"{action.type} failed (unexpected error)")
            continue
        applied += int(changed)
        said.append(text)
    await services.store.rules.record_run(
        workspace_id,
        rule["_id"],
        matched=1,
        applied=applied,
        failed=failed,
        error=error,
        runs=int(count_run),
    )
    return f"Rule '{rule['name']}': {'; '.join(said)}."


# -- actions ---------------------------------------------------------------------------------


async def _set_fields(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    record: StoredDocument,
    changes: dict[str, Any],
    described: str,
) -> tuple[str, bool]:
    current = full_view(record, services.base_url)
    edits = edit_entries(current, changes, by=rule["_id"], via="rule", at=utcnow())
    if not edits:
        return f"{described} (already so)", False
    changed = {entry["field"]: changes[entry["field"]] for entry in edits}
    updated = await services.store.documents.update_fields(workspace_id, record, changed, edits)
    if updated is None:
        raise ActionFailed("the document no longer exists")
    return described, True


async def set_category(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    return await _set_fields(
        services,
        workspace_id,
        rule,
        record,
        {"category": action.category},
        f"set category to {action.category}",
    )


async def set_merchant(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    return await _set_fields(
        services,
        workspace_id,
        rule,
        record,
        {"merchant": action.merchant},
        f"set merchant to {action.merchant}",
    )


async def mark_recurring(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    return await _set_fields(
        services,
        workspace_id,
        rule,
        record,
        {"isRecurring": True, "recurringType": action.recurringType},
        f"marked as {action.recurringType} recurring",
    )


async def archive(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    """As documents.delete: the document and its active duplicates, references cleaned up."""
    store = services.store
    if record.get("archived"):
        return "archived (already so)", False
    duplicates = await store.documents.active_duplicates_of(workspace_id, record["_id"])
    gone = [record["_id"], *duplicates]
    now = utcnow()
    await store.documents.record_edits(
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
    await store.documents.set_archived(workspace_id, gone, archived=True)
    await store.documents.remove_references(workspace_id, gone)
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


async def _call(ctx: Context, slug: str, arguments: dict[str, Any]) -> dict[str, Any]:
    registry = ctx.services.registry
    if registry is None or registry.get(slug) is None:
        raise ActionFailed(f"this service has no {slug} capability")
    try:
        result = await invoke_as(registry, slug, arguments, ctx)
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
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    """Through ``integrations.send`` with dryRun false (approval gating applies as for a
    person's call); a likely duplicate is not sent."""
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
            await _call(ctx, LIST_INTEGRATIONS_CAPABILITY, {}), str(action.integration)
        )
        integration_id = integration_id or found_id
        tenant_id = tenant_id or found_tenant
    if tenant_id is None:
        raise ActionFailed(f"the {action.integration} integration has no tenant connected")
    result = await _call(
        ctx,
        SEND_CAPABILITY,
        {
            "documentId": record["_id"],
            "integrationId": integration_id,
            "tenantId": tenant_id,
            "dryRun": False,
        },
    )
    if result.get("status") == "approval_required":
        return (
            f"sending to {action.integration} awaits approval {result.get('approvalRequestId')}",
            True,
        )
    return f"sent to {action.integration}", True


async def require_approval(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    ctx = await _acting_context(services, workspace_id, rule)
    reason = action.reason or f"Rule '{rule['name']}'"
    result = await _call(
        ctx, APPROVAL_CAPABILITY, {"documentId": record["_id"], "reason": reason[:500]}
    )
    return f"approval requested ({result.get('approvalRequestId') or result.get('id')})", True


def _summary(services: Services, record: StoredDocument) -> dict[str, Any]:
    view = full_view(record, services.base_url)
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
    record: StoredDocument,
    event: RuleEvent,
) -> dict[str, Any]:
    return {
        "event": "rule.matched",
        "ruleId": rule["_id"],
        "ruleName": rule["name"],
        "workspaceId": workspace_id,
        "trigger": event.trigger,
        "document": _summary(services, record),
        "sentAt": utcnow().isoformat(),
    }


async def notify_webhook(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
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
            _payload(services, workspace_id, rule, record, event),
            secret,
            timeout_s=config.webhook_timeout_s,
            client=config.http,
        )
    except NotifyError as exc:
        raise ActionFailed(str(exc)) from None
    return f"webhook notified (HTTP {status})", True


async def notify_email(
    services: Services,
    workspace_id: str,
    rule: Mapping[str, Any],
    action: RuleAction,
    record: StoredDocument,
    event: RuleEvent,
) -> tuple[str, bool]:
    smtp = services.automation.smtp
    if smtp is None:
        raise ActionFailed("e-mail notifications need an SMTP relay (FINCAP_SMTP_HOST)")
    doc = _summary(services, record)
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
        await send_email(smtp, str(action.email), subject[:200], text)
    except NotifyError as exc:
        raise ActionFailed(str(exc)) from None
    return f"e-mailed {action.email}", True


ACTIONS = {
    "set-category": set_category,
    "set-merchant": set_merchant,
    "mark-recurring": mark_recurring,
    "archive": archive,
    "send-to-integration": send_to_integration,
    "require-approval": require_approval,
    "notify-email": notify_email,
    "notify-webhook": notify_webhook,
}
