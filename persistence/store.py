"""One object that holds every collection module over one motor database."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from motor.motor_asyncio import AsyncIOMotorDatabase

from persistence.access_changes import AccessChanges
from persistence.activity import Activity
from persistence.api_keys import ApiKeys
from persistence.approvals import Approvals
from persistence.billing import BillingAccounts, BillingLedger, Subscriptions
from persistence.categories import CategoryOverrides
from persistence.documents import Documents
from persistence.exports import Exports
from persistence.files import Files
from persistence.health import StoreHealth
from persistence.ids import utcnow
from persistence.inbound_addresses import InboundAddresses
from persistence.intakes import Intakes
from persistence.integrations import Integrations
from persistence.invitations import Invitations
from persistence.jobs import Clock, Jobs
from persistence.mailboxes import Mailboxes
from persistence.oauth import OAuthClients, OAuthCodes, OAuthConsents, OAuthTokens
from persistence.rules import Rules
from persistence.search_snapshots import SearchSnapshots
from persistence.sign_in_failures import SignInFailures
from persistence.sign_in_links import SignInLinks
from persistence.statement_mappings import StatementMappings
from persistence.tags import Tags
from persistence.thumbnails import Thumbnails
from persistence.transactions import Transactions
from persistence.units import Units
from persistence.usage import Usage
from persistence.used_nonces import UsedNonces
from persistence.users import Users
from persistence.views import Views
from persistence.whatsapp_senders import WhatsAppSenders
from persistence.workspaces import Workspaces


@runtime_checkable
class Repository(Protocol):
    """A collection module: it declares its indexes and creates them on request."""

    async def ensure_indexes(self) -> None: ...


class Store:
    """Collection modules of one database; the app factory builds one per process.

    A new collection module is one attribute here: ``ensure_indexes`` finds every repository
    among the attributes. ``clock`` is the jobs' clock (tests move it to expire leases);
    ``health`` what the driver's monitor says of the store (``persistence.health``).
    """

    def __init__(
        self, db: AsyncIOMotorDatabase, clock: Clock = utcnow, health: StoreHealth | None = None
    ) -> None:
        self.db = db
        self.health = health or StoreHealth()
        self.users = Users(db)
        self.workspaces = Workspaces(db)
        self.invitations = Invitations(db)
        self.api_keys = ApiKeys(db)
        self.documents = Documents(db)
        self.files = Files(db)
        self.thumbnails = Thumbnails(db)
        self.jobs = Jobs(db, clock)
        self.activity = Activity(db)
        self.category_overrides = CategoryOverrides(db)
        self.tags = Tags(db)
        self.views = Views(db)
        self.oauth_clients = OAuthClients(db)
        self.oauth_codes = OAuthCodes(db)
        self.oauth_tokens = OAuthTokens(db)
        self.oauth_consents = OAuthConsents(db)
        self.sign_in_failures = SignInFailures(db)
        self.sign_in_links = SignInLinks(db)
        self.access_changes = AccessChanges(db)
        self.rules = Rules(db)
        self.inbound_addresses = InboundAddresses(db)
        self.mailboxes = Mailboxes(db)
        self.whatsapp_senders = WhatsAppSenders(db)
        self.billing_accounts = BillingAccounts(db)
        self.subscriptions = Subscriptions(db)
        self.billing_ledger = BillingLedger(db)
        self.usage = Usage(db)
        self.approvals = Approvals(db)
        self.integrations = Integrations(db)
        self.exports = Exports(db)
        self.used_nonces = UsedNonces(db)
        self.intakes = Intakes(db)
        self.transactions = Transactions(db)
        self.statement_mappings = StatementMappings(db)
        # Writes to several collections at once, all or nothing (persistence.units).
        self.units = Units(db)
        self.search_snapshots = SearchSnapshots(db)

    def repositories(self) -> list[Repository]:
        # Not ``db``: a motor database answers every attribute name with a collection.
        return [
            value
            for name, value in vars(self).items()
            if name != "db" and isinstance(value, Repository)
        ]

    async def ensure_indexes(self) -> None:
        """Create every declared index; idempotent, run at start-up."""
        for repository in self.repositories():
            await repository.ensure_indexes()

    async def ping(self) -> bool:
        """Whether the store answers a command and a read: a store whose storage engine failed
        (a full disk's panic) still answers ``ping`` and fails every read."""
        try:
            await self.db.command("ping")
            await self.db["workspaces"].find_one({}, {"_id": 1})
        except Exception:
            return False
        return True
