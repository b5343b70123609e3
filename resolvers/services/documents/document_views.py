"""Stored document records → the API's ``Document`` shape (complete or projected).

The views take the stored record, not the API's values: their callers hold it to hand back to
a write (``writes.update_fields`` and ``writes.mark_reviewed`` compare and set on the record as
read), and the listing reads share the views (issue 36: not yet values from the repository)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from persistence.documents import EditEntry, StoredDocument, from_record
from resolvers.framework.context import Context
from resolvers.framework.errors import store_errors
from schema.documents import COMPACT_FIELDS, Document

ALL_FIELDS = tuple(Document.model_fields)


def document_link(base_url: str, document_id: str) -> str:
    return f"{base_url}/v1/documents/{document_id}"


def file_url(base_url: str, document_id: str) -> str:
    return f"{base_url}/v1/files/{document_id}"


def full_view(
    record: Mapping[str, Any], base_url: str, history: Sequence[EditEntry] = ()
) -> dict[str, Any]:
    """Every field of the document (null where unknown), with its link, file URL and history."""
    view = {name: None for name in ALL_FIELDS} | from_record(record)
    view["link"] = document_link(base_url, view["id"])
    view["editHistory"] = list(history)
    if isinstance(view.get("file"), dict):
        view["file"] = {**view["file"], "url": file_url(base_url, view["id"])}
    return view


def projected_fields(required: Iterable[str]) -> list[str]:
    """API fields of a compact document: the compact set plus ``required``."""
    return list(dict.fromkeys([*COMPACT_FIELDS, *required]))


def projected_view(record: Mapping[str, Any], fields: list[str], base_url: str) -> dict[str, Any]:
    view = from_record(record)
    if "link" in fields:
        view["link"] = document_link(base_url, view["id"])
    if "file" in fields and isinstance(view.get("file"), dict):
        view["file"] = {**view["file"], "url": file_url(base_url, view["id"])}
    # Asked-for fields are always present, null when the document has no value.
    return {name: view.get(name) for name in fields}


async def complete_documents(ctx: Context, records: Sequence[StoredDocument]) -> list[Document]:
    """``records`` of the caller's workspace as complete documents, with their edit history
    (read for all of them at once)."""
    if not records:
        return []
    with store_errors():
        history = await ctx.store.documents.reads.history(ctx.require_workspace(), records)
    base = ctx.services.base_url
    return [
        Document.model_validate(full_view(record, base, history[record["_id"]]))
        for record in records
    ]


async def complete_document(ctx: Context, record: StoredDocument) -> Document:
    return (await complete_documents(ctx, [record]))[0]


def projected_documents(
    ctx: Context, records: Sequence[StoredDocument], fields: list[str]
) -> list[Document]:
    base = ctx.services.base_url
    return [Document.model_validate(projected_view(r, fields, base)) for r in records]


async def selected_documents(
    ctx: Context, records: Sequence[StoredDocument], fields: list[str]
) -> list[Document]:
    """``records`` with exactly ``fields`` (what a GraphQL query selects), the edit history
    read for all of them at once when it is one of the fields."""
    base = ctx.services.base_url
    views = [projected_view(record, fields, base) for record in records]
    if "editHistory" in fields and records:
        with store_errors():
            history = await ctx.store.documents.reads.history(ctx.require_workspace(), records)
        for view in views:
            view["editHistory"] = list(history[view["id"]])
    return [Document.model_validate(view) for view in views]


def jsonable(value: Any) -> Any:
    """A value as the API shows it, for edit history entries."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [jsonable(v) for v in value]
    return value
