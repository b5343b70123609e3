"""Contract models of the views resource: saved lists of documents."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from domain.documents import ArchiveFilter
from domain.where import WhereClause
from schema.base import Boolean, CapabilityInput, CapabilityOutput, Integer, NotBoolean, OneLine
from schema.documents import SortField

MAX_VIEW_NAME = 60
MAX_VIEWS_PER_PERSON = 50
VIEW_ID = "View id (view_…)"
# The columns a list can show (the dashboard's table's columns).
ViewColumn = Literal[
    "docDate",
    "merchant",
    "amount",
    "convertedAmount",
    "category",
    "tags",
    "docType",
    "processingStatus",
    "receivedAt",
]
DEFAULT_COLUMNS: list[ViewColumn] = [
    "docDate",
    "merchant",
    "amount",
    "convertedAmount",
    "category",
    "tags",
    "docType",
    "processingStatus",
    "receivedAt",
]


def _tidy(name: str) -> str:
    tidy = " ".join(name.split())
    if not tidy:
        raise ValueError("a view's name has at least one letter or digit")
    return tidy


ViewName = Annotated[OneLine, AfterValidator(_tidy)]
VIEW_NAME = Field(min_length=1, max_length=MAX_VIEW_NAME, description="The view's name")
WHERE = Field(default=None, description="documents.search's where clause (null: every document)")
QUERY = Field(default=None, min_length=1, max_length=500, description="Words to rank by (a search)")
COLUMNS = Field(
    default_factory=lambda: list(DEFAULT_COLUMNS),
    min_length=1,
    max_length=len(DEFAULT_COLUMNS),
    description="The columns shown, in order",
)


class View(CapabilityOutput):
    """A saved list of documents."""

    id: str = Field(description=VIEW_ID)
    name: str = Field(description="Its name")
    owner: str = Field(description="Who saved it (user id)")
    shared: bool = Field(description="Shown to everyone in the workspace (else its owner only)")
    where: WhereClause | None = Field(description="Its where clause")
    query: str | None = Field(description="Its words, if it is a search")
    archived: ArchiveFilter = Field(description="Archived documents: exclude, include or only")
    sortBy: SortField = Field(description="Sort field when there are no words")
    sortOrder: Literal[1, -1] = Field(description="1 ascending, -1 descending")
    columns: list[ViewColumn] = Field(description="The columns shown, in order")
    count: Integer | None = Field(
        default=None,
        description="How many documents it lists now (views.list with counts: the first 50)",
    )
    viewerCanEdit: bool = Field(description="Whether the caller may change or delete it")
    createdAt: datetime = Field(description="When it was saved")
    updatedAt: datetime = Field(description="When it last changed")


class ListViews(CapabilityInput):
    """The caller's views and the workspace's shared ones."""

    counts: Boolean = Field(default=False, description="Also count each view's documents now")


class ViewList(CapabilityOutput):
    """Views by name."""

    views: list[View] = Field(description="The caller's views and the shared ones, by name")


class CreateView(CapabilityInput):
    """A new view."""

    name: ViewName = VIEW_NAME
    shared: Boolean = Field(default=False, description="Show it to everyone in the workspace")
    where: WhereClause | None = WHERE
    query: str | None = QUERY
    archived: ArchiveFilter = Field(default="exclude", description="Archived documents")
    sortBy: SortField = Field(default="docDate", description="Sort field when there are no words")
    sortOrder: Annotated[Literal[1, -1], NotBoolean] = Field(
        default=-1, description="1 ascending, -1 descending"
    )
    columns: list[ViewColumn] = COLUMNS


class UpdateView(CapabilityInput):
    """A view's changes: only the fields sent change."""

    id: str = Field(min_length=1, max_length=100, description=VIEW_ID)
    name: ViewName | None = Field(
        default=None, min_length=1, max_length=MAX_VIEW_NAME, description="Its new name"
    )
    shared: Boolean | None = Field(default=None, description="Shown to everyone")
    where: WhereClause | None = WHERE
    query: str | None = QUERY
    archived: ArchiveFilter | None = Field(default=None, description="Archived documents")
    sortBy: SortField | None = Field(default=None, description="Sort field")
    sortOrder: Annotated[Literal[1, -1], NotBoolean] | None = Field(
        default=None, description="1 or -1"
    )
    columns: list[ViewColumn] | None = Field(
        default=None, min_length=1, max_length=len(DEFAULT_COLUMNS), description="Columns"
    )


class ViewRef(CapabilityInput):
    """One view."""

    id: str = Field(min_length=1, max_length=100, description=VIEW_ID)


class ViewResult(CapabilityOutput):
    """The view as it is now."""

    view: View = Field(description="The view")


class DeletedView(CapabilityOutput):
    """A view that was deleted."""

    id: str = Field(description=VIEW_ID)
    deleted: bool = Field(description="Always true")
