"""One object that holds every collection module over one motor database."""

from __future__ import annotations

from motor.motor_asyncio import AsyncIOMotorDatabase

from persistence.activity import Activity
from persistence.api_keys import ApiKeys
from persistence.categories import CategoryOverrides
from persistence.documents import Documents
from persistence.files import Files
from persistence.jobs import Jobs
from persistence.users import Users
from persistence.workspaces import Workspaces


class Store:
    """Collection modules of one database; the app factory builds one per process."""

    def __init__(self, db: AsyncIOMotorDatabase) -> None:
        self.db = db
        self.users = Users(db)
        self.workspaces = Workspaces(db)
        self.api_keys = ApiKeys(db)
        self.documents = Documents(db)
        self.files = Files(db)
        self.jobs = Jobs(db)
        self.activity = Activity(db)
        self.category_overrides = CategoryOverrides(db)

    async def ensure_indexes(self) -> None:
        """Create every declared index; idempotent, run at start-up."""
        for module in (
            self.users,
            self.workspaces,
            self.api_keys,
            self.documents,
            self.jobs,
            self.activity,
            self.category_overrides,
        ):
            await module.ensure_indexes()

    async def ping(self) -> bool:
        try:
            await self.db.command("ping")
        except Exception:
            return False
        return True
