"""Stored document records → the API's ``Document`` shape (full or projected)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from persistence.documents import from_record
from schema.documents import COMPACT_FIELDS, Document

ALL_FIELDS = tuple(Document.model_fields)

# API field → stored fields needed to produce it.
STORED_FOR = {"id": ("_id",), "date": ("docDate",), "link": ("_id",)}


def document_link(base_url: str, document_id: str) -> str:
    return f"{base_url}/v1/documents/{document_id}"


def file_url(base_url: str, document_id: str) -> str:
    return f"{base_url}/v1/files/{document_id}"


def full_view(record: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    """Every field of the document (null where unknown), with its link and file URL."""
    view = {name: None for name in ALL_FIELDS} | from_record(record)
    view["link"] = document_link(base_url, view["id"])
    if isinstance(view.get("file"), dict):
        view["file"] = {k: v for k, v in view["file"].items() if k != "gridfsId"}
        view["file"]["url"] = file_url(base_url, view["id"])
    return view


def projected_fields(required: Iterable[str]) -> list[str]:
    """API fields of a compact document: the compact set plus ``required``."""
    return list(dict.fromkeys([*COMPACT_FIELDS, *required]))


def projection_for(fields: Iterable[str]) -> dict[str, int]:
    stored: dict[str, int] = {}
    for name in fields:
        for path in STORED_FOR.get(name, (name,)):
            stored[path] = 1
    return stored


def projected_view(record: Mapping[str, Any], fields: list[str], base_url: str) -> dict[str, Any]:
    view = from_record(record)
    if "link" in fields:
        view["link"] = document_link(base_url, view["id"])
    # Asked-for fields are always present, null when the document has no value.
    return {name: view.get(name) for name in fields}


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
