"""Documents as the API shows them (complete or projected), from the repository's values.

The views take the API's values (``store.documents`` maps its records: ``reads.document``,
``reads.documents``, a ``Page``'s documents, a ``Loaded``'s ``document``) and add what only the
API has: the link, the original's URL, the edit history and nulls for the fields a document
lacks."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from persistence.documents import EditEntry
from resolvers.framework.context import Context
from resolvers.framework.errors import store_errors
from schema.documents import COMPACT_FIELDS, Document

ALL_FIELDS = tuple(Document.model_fields)


def document_link(base_url: str, document_id: str) -> str:
    return f"{base_url}/v1/documents/{document_id}"


def file_url(base_url: str, document_id: str) -> str:
    return f"{base_url}/v1/files/{document_id}"


def full_view(
    document: Mapping[str, Any], base_url: str, history: Sequence[EditEntry] = ()
) -> dict[str, Any]:
    """Every field of the ``document`` (API values; null where unknown), with its link, file
    URL and history."""
    view = {name: None for name in ALL_FIELDS} | dict(document)
    view["link"] = document_link(base_url, view["id"])
    view["editHistory"] = list(history)
    if isinstance(view.get("file"), dict):
        view["file"] = {**view["file"], "url": file_url(base_url, view["id"])}
    return view


def projected_fields(required: Iterable[str]) -> list[str]:
    """API fields of a compact document: the compact set plus ``required``."""
    return list(dict.fromkeys([*COMPACT_FIELDS, *required]))


def projected_view(document: Mapping[str, Any], fields: list[str], base_url: str) -> dict[str, Any]:
    """Exactly ``fields`` of the ``document`` (API values), with the link and file URL when
    asked for."""
    view = dict(document)
    if "link" in fields:
        view["link"] = document_link(base_url, view["id"])
    if "file" in fields and isinstance(view.get("file"), dict):
        view["file"] = {**view["file"], "url": file_url(base_url, view["id"])}
    # Asked-for fields are always present, null when the document has no value.
    return {name: view.get(name) for name in fields}


async def complete_documents(
    ctx: Context, documents: Sequence[Mapping[str, Any]]
) -> list[Document]:
    """``documents`` (API values) of the caller's workspace as complete documents, with their
    edit history (read for all of them at once)."""
    if not documents:
        return []
    with store_errors():
        history = await ctx.store.documents.reads.history(ctx.require_workspace(), documents)
    base = ctx.services.base_url
    return [
        Document.model_validate(full_view(document, base, history[document["id"]]))
        for document in documents
    ]


async def complete_document(ctx: Context, document: Mapping[str, Any]) -> Document:
    return (await complete_documents(ctx, [document]))[0]


def projected_documents(
    ctx: Context, documents: Sequence[Mapping[str, Any]], fields: list[str]
) -> list[Document]:
    base = ctx.services.base_url
    return [Document.model_validate(projected_view(d, fields, base)) for d in documents]


async def selected_documents(
    ctx: Context, documents: Sequence[Mapping[str, Any]], fields: list[str]
) -> list[Document]:
    """``documents`` with exactly ``fields`` (what a GraphQL query selects), the edit history
    read for all of them at once when it is one of the fields."""
    base = ctx.services.base_url
    views = [projected_view(document, fields, base) for document in documents]
    if "editHistory" in fields and documents:
        with store_errors():
            history = await ctx.store.documents.reads.history(ctx.require_workspace(), documents)
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
