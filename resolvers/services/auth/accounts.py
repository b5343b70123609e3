"""Operator actions on accounts: bootstrap a user, add workspaces, issue API keys.

These are not capabilities (no API key exists yet when they are needed); the CLI's ``fincap
admin`` commands call them directly on the store.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from engines.billing.plans import PlanCatalog, default_catalog
from persistence.ids import utcnow
from persistence.money import to_cents
from persistence.store import Store
from resolvers.framework.auth import new_api_key_secret
from resolvers.framework.errors import BadRequest, NotFound
from resolvers.services.billing import subscriptions


def _clean_name(name: str) -> str:
    name = name.strip()
    if not 1 <= len(name) <= 200:
        raise BadRequest("workspace name must be 1 to 200 characters")
    return name


def _clean_email(email: str) -> str:
    email = email.strip().lower()
    if "@" not in email or len(email) > 320:
        raise BadRequest(f"not an email address: {email!r}")
    return email


async def _new_workspace(
    store: Store, name: str, owner_id: str, plans: PlanCatalog | None
) -> dict[str, Any]:
    """A workspace and its subscription to the default plan, billed to the owner's account."""
    workspace = await store.workspaces.create(_clean_name(name), owner_id)
    await subscriptions.open_subscription(store, plans or default_catalog(), workspace, utcnow())
    return workspace


async def bootstrap(
    store: Store, email: str, workspace_name: str, plans: PlanCatalog | None = None
) -> dict[str, Any]:
    """A user (created if new), a workspace they own, and an API key: everything to start."""
    user = await store.users.get_or_create(_clean_email(email))
    workspace = await _new_workspace(store, workspace_name, user["_id"], plans)
    secret = new_api_key_secret()
    await store.api_keys.create(user["_id"], secret, name="bootstrap", origin="bootstrap")
    return {"userId": user["_id"], "orgId": workspace["_id"], "apiKey": secret}


async def create_workspace(
    store: Store, email: str, name: str, plans: PlanCatalog | None = None
) -> dict[str, Any]:
    """A new workspace owned by the user with ``email`` (created if new)."""
    user = await store.users.get_or_create(_clean_email(email))
    workspace = await _new_workspace(store, name, user["_id"], plans)
    return {"orgId": workspace["_id"]}


async def set_plan(
    store: Store, org_id: str, plan_id: str, plans: PlanCatalog | None = None
) -> dict[str, Any]:
    """Move workspace ``org_id`` to ``plan_id`` (prorated as billing.change-plan does)."""
    if await store.workspaces.get_unscoped(org_id) is None:
        raise NotFound(f"no workspace {org_id!r}")
    subscription = await subscriptions.change_plan(
        store, plans or default_catalog(), org_id, plan_id, utcnow()
    )
    return {
        "orgId": org_id,
        "planId": subscription["planId"],
        "pendingPlanId": subscription.get("pendingPlanId"),
    }


async def charge(
    store: Store,
    email: str,
    amount: str,
    description: str,
    org_id: str | None = None,
    plans: PlanCatalog | None = None,
) -> dict[str, Any]:
    """A one-off charge (or, negative, a credit) on the billing account of the user ``email``."""
    user = await store.users.find_by_email(_clean_email(email))
    if user is None:
        raise NotFound(f"no user with email {email.strip().lower()!r}")
    try:
        value = Decimal(amount.strip())
    except InvalidOperation:
        raise BadRequest(f"amount: not a decimal number: {amount!r}") from None
    if not value.is_finite() or value != value.quantize(Decimal("0.01")) or abs(value) >= 10**9:
        raise BadRequest("amount: at most two decimal places and below 1,000,000,000")
    if org_id is not None and await store.workspaces.role_of(user["_id"], org_id) != "owner":
        raise BadRequest(f"{email} does not own workspace {org_id}")
    entry = await subscriptions.add_charge(
        store,
        plans or default_catalog(),
        user["_id"],
        to_cents(value),
        description,
        utcnow(),
        workspace_id=org_id,
    )
    return {"chargeId": entry["_id"], "userId": user["_id"], "total": str(value)}


async def create_user(store: Store, email: str) -> dict[str, Any]:
    """An account with no workspace yet, and an API key for it: for a person invited to a
    workspace (members.invite), who then accepts with members.accept-invite. An existing
    account with this email is refused (issue it a key with create_key)."""
    email = _clean_email(email)
    if await store.users.find_by_email(email) is not None:
        raise BadRequest(f"{email} already has an account; use create-key for another key")
    user = await store.users.get_or_create(email)
    secret = new_api_key_secret()
    await store.api_keys.create(
        user["_id"], secret, name="created by an operator", origin="operator"
    )
    return {"userId": user["_id"], "apiKey": secret}


async def create_key(store: Store, email: str, restrict_to: str | None = None) -> dict[str, Any]:
    """A new API key for an existing user, optionally usable in one workspace only."""
    user = await store.users.find_by_email(_clean_email(email))
    if user is None:
        raise NotFound(f"no user with email {email.strip().lower()!r}")
    if restrict_to is not None and await store.workspaces.role_of(user["_id"], restrict_to) is None:
        raise BadRequest(f"{email} is not a member of workspace {restrict_to}")
    secret = new_api_key_secret()
    record = await store.api_keys.create(
        user["_id"], secret, restricted_to=restrict_to, origin="operator"
    )
    return {"apiKey": secret, "keyId": record["_id"]}


DEMO_BATCH = 1000


async def load_demo(store: Store, org_id: str, count: int, seed: int) -> dict[str, Any]:
    """Insert ``count`` realistic demo documents into workspace ``org_id``."""
    from engines.demo import demo_documents

    if await store.workspaces.get_unscoped(org_id) is None:
        raise NotFound(f"no workspace {org_id!r}")
    if not 1 <= count <= 1_000_000:
        raise BadRequest("count must be 1 to 1,000,000")
    documents = demo_documents(count, seed=seed)
    await convert_demo(store, org_id, documents)
    inserted = 0
    for start in range(0, len(documents), DEMO_BATCH):
        inserted += await store.documents.writes.insert_many(
            org_id, documents[start : start + DEMO_BATCH]
        )
    return {"orgId": org_id, "inserted": inserted}


async def rebuild_rollups(store: Store, org_ids: list[str]) -> dict[str, Any]:
    """Recount the rollups of ``org_ids`` (none: the stale workspaces); rows per workspace."""
    chosen = org_ids or await store.documents.totals.stale_rollups()
    return {"rebuilt": {org: await store.documents.totals.rebuild_rollups(org) for org in chosen}}


async def convert_demo(store: Store, org_id: str, documents: list[dict[str, Any]]) -> None:
    """Give demo documents what ingest gives uploads: the workspace's preferred currency and
    the ECB rate to it at the document date, so dashboards total them like real ones."""
    from engines.currency import default_rate_book
    from resolvers.services.documents.preferences import preferred_currency
    from resolvers.services.processing.pipeline_steps import conversion

    preferred = await preferred_currency(store, org_id, None)
    rates = default_rate_book()
    known: dict[tuple[Any, Any], float | None] = {}
    for document in documents:
        key = (document.get("currency"), document.get("docDate"))
        if key not in known:
            known[key] = conversion(rates, key[0], preferred, key[1])
        document["preferredCurrency"] = preferred
        document["conversionRate"] = known[key]
