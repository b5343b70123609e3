"""Which documents a read is about: ``DocumentQuery``, the one place document filters are built.

Resolvers describe a selection in the API's terms (a where clause, archive and export filters,
words, a merchant or category named exactly, a keyset position) and the documents repository
turns it into a MongoDB filter here: the workspace first, then the archive filter, outside
everything the caller asked for. Group keys of ``documents.count`` are built here too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any, Literal

from domain.documents import AggregateKey, ArchiveFilter, CountGroupBy, ExportFilter
from domain.where import WhereClause
from engines.text import tokenize
from persistence.documents.fields import SEARCH_FIELDS
from persistence.documents.records import midnight
from persistence.money import to_cents
from persistence.pagination import after
from persistence.where import FieldSpec, compile_where

WordsMatch = Literal["all", "any"]

EXPORT_FILTERS: dict[ExportFilter, dict[str, Any]] = {
    "all": {},
    "exported": {"exportStatus": "exported"},
    "not-exported": {"exportStatus": {"$ne": "exported"}},
}
# Equalities (every stored document has a boolean ``archived``), so the workspace and archive
# filters together are a prefix of the ``workspace_archived_date`` index.
ARCHIVE_FILTERS: dict[ArchiveFilter, dict[str, Any]] = {
    "exclude": {"archived": False},
    "only": {"archived": True},
    "include": {},
}
# documents.count's time groups; weeks are ISO weeks (Monday first; 2024-12-30 is 2025-W01).
TIME_FORMATS = {
    "day": "%Y-%m-%d",
    "date": "%Y-%m-%d",
    "week": "%G-W%V",
    "month": "%Y-%m",
    "year": "%Y",
}
# Arrival order: who came first is the original (``documents.reads.find_duplicates``). Documents of
# one incoming item share ``createdAt``; ``intakeOrder`` is their order within it.
ARRIVAL_ORDER = (("createdAt", 1), ("intakeOrder", 1), ("_id", 1))


def arrival(record: Mapping[str, Any]) -> tuple[datetime, int, str]:
    """A stored document's place in ``ARRIVAL_ORDER``."""
    created = record.get("createdAt")
    return (
        created if isinstance(created, datetime) else datetime.min.replace(tzinfo=UTC),
        int(record.get("intakeOrder") or 0),
        str(record["_id"]),
    )


def arrived_before(record: Mapping[str, Any], other: Mapping[str, Any]) -> bool:
    """Whether the stored document ``record`` came before ``other`` in ``ARRIVAL_ORDER``."""
    return arrival(record) < arrival(other)


@dataclass(frozen=True)
class Keyset:
    """A position in a sorted listing: the last row's sort value and id."""

    path: str
    order: int
    value: Any
    last_id: str


@dataclass(frozen=True)
class DocumentQuery:
    """A selection of one workspace's documents, in the API's terms.

    ``where`` is compiled against ``where_fields`` (a capability's whitelist) when the filter
    is built, so a clause that does not fit raises ``WhereError`` naming the condition.
    """

    where: WhereClause | None = None
    where_fields: Mapping[str, FieldSpec] = field(default_factory=lambda: SEARCH_FIELDS)
    archived: ArchiveFilter = "exclude"
    export_status: ExportFilter = "all"
    # Free text: its words must all appear, or any of them (a word of 3+ letters also matches
    # the words it starts).
    words: str | None = None
    words_match: WordsMatch = "any"
    # Exact values, ignoring case.
    merchant: str | None = None
    category: str | None = None
    after: Keyset | None = None
    # The where-clause as fincap narrowed it (its regex conditions matched in this process and
    # replaced by the ids that pass them: ``regex_reads``), instead of ``where`` compiled.
    compiled: tuple[Mapping[str, Any], ...] | None = None

    def where_filter(self) -> dict[str, Any]:
        """The where-clause's filter: ``compiled`` when set, else ``where`` compiled."""
        if self.compiled is not None:
            return combined(self.compiled)
        return compile_where(self.where, dict(self.where_fields))

    def parts(self) -> list[dict[str, Any]]:
        """The caller's filters (the workspace and archive filters are added outside them)."""
        parts = [self.where_filter(), EXPORT_FILTERS[self.export_status]]
        if self.words is not None:
            parts.append(words_filter(tokenize(self.words), self.words_match))
        if self.merchant is not None:
            parts.append({"merchant": equals_ignoring_case(self.merchant)})
        if self.category is not None:
            parts.append({"category": equals_ignoring_case(self.category)})
        if self.after is not None:
            keyset = self.after
            parts.append(after(keyset.path, keyset.order, keyset.value, keyset.last_id))
        return parts

    def scope_only(self) -> bool:
        """Whether the workspace, archive and export filters alone select the documents (no
        where-clause condition, words, names or position): a search index that knows each
        document's archive and export state can then list them without the database."""
        return (
            self.words is None
            and self.merchant is None
            and self.category is None
            and self.after is None
            # Compiled, so that an invalid clause is the same 400 as on the database's path.
            and not self.where_filter()
        )

    def stages(self, workspace_id: str) -> list[dict[str, Any]]:
        """The query as ``$match`` stages: see ``match_stages``."""
        return match_stages(workspace_id, self.archived, *self.parts())


def scope(workspace_id: str, archived: ArchiveFilter) -> dict[str, Any]:
    """The workspace and archive filters: flat equalities, an index prefix."""
    return {"workspaceId": workspace_id, **ARCHIVE_FILTERS[archived]}


def combined(filters: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The conjunction of ``filters``, flat where their keys do not meet."""
    parts = [dict(part) for part in filters if part]
    if not parts:
        return {}
    keys = [key for part in parts for key in part]
    if len(keys) == len(set(keys)) and not any(key.startswith("$") for key in keys):
        return {key: value for part in parts for key, value in part.items()}
    return parts[0] if len(parts) == 1 else {"$and": parts}


def match_stages(
    workspace_id: str, archived: ArchiveFilter, *filters: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """``$match`` stages: first the workspace and archive equalities alone, then the rest.

    The embedded store's planner uses an index only when every predicate of a ``$match`` is
    on its keys, and otherwise scans the whole collection, every workspace's documents. The
    first stage always fits ``workspace_archived_date``, so a read costs the size of its own
    workspace; the caller's conditions are applied to those documents only. (It also keeps
    ranges on ``docDate`` out of index bounds, where the embedded store drops documents equal
    to an inclusive bound on a descending key that is not the index's last.) A real MongoDB
    merges consecutive ``$match`` stages and plans them together.
    """
    stages = [{"$match": scope(workspace_id, archived)}]
    if caller := combined(filters):
        stages.append({"$match": caller})
    return stages


def equals_ignoring_case(value: str) -> dict[str, Any]:
    """A string condition: exactly ``value``, in any letter case."""
    return {"$regex": f"^{re.escape(value)}$", "$options": "i"}


def words_filter(tokens: list[str], match: WordsMatch) -> dict[str, Any]:
    """Documents whose search terms contain each token (or a word it starts, for 3+ letters).

    Anchored prefix regexes can use the ``searchTerms`` index.
    """
    parts: list[dict[str, Any]] = []
    for token in dict.fromkeys(tokens):
        if len(token) >= 3:
            parts.append({"searchTerms": {"$regex": "^" + re.escape(token)}})
        else:
            parts.append({"searchTerms": token})
    if not parts:
        return {"_id": {"$exists": False}}  # nothing searchable in the text: match nothing
    if len(parts) == 1:
        return parts[0]
    return {"$and" if match == "all" else "$or": parts}


def group_key(group_by: CountGroupBy | AggregateKey | None) -> Any:
    """The ``$group`` key of ``documents.count``'s groups (None: no groups)."""
    if group_by is None:
        return None
    if group_by in TIME_FORMATS:
        # Documents without a date form their own null group.
        formatted = {"$dateToString": {"format": TIME_FORMATS[group_by], "date": "$docDate"}}
        return {"$cond": [{"$eq": [{"$ifNull": ["$docDate", None]}, None]}, None, formatted]}
    if group_by == "tag":  # after $unwind: one tag per row
        return "$tags"
    return f"${group_by}"


def is_time_grouping(group_by: CountGroupBy | None) -> bool:
    return group_by in TIME_FORMATS


@dataclass(frozen=True)
class DuplicateRule:
    """One way a new document can repeat an existing one, and how to say so.

    ``indexed``: equalities and ranges an index of the workspace answers alone (the first
    ``$match``); ``rest``: the conditions checked on what it finds.
    """

    reason: str
    indexed: dict[str, Any]
    rest: dict[str, Any] = field(default_factory=dict)


def duplicate_rules(
    *,
    sha256: str | None,
    invoice_id: str | None,
    merchant: str | None,
    amount_cents: int | None,
    doc_date: datetime | None,
    amount_tolerance_cents: int = 5,
    days: int = 1,
) -> list[DuplicateRule]:
    """The duplicate checks that apply to a document with these values, strongest first."""
    rules: list[DuplicateRule] = []
    if sha256:
        rules.append(DuplicateRule("the same file (identical SHA-256)", {"file.sha256": sha256}))
    if invoice_id:
        rules.append(
            DuplicateRule(f"the same invoice number {invoice_id}", {"invoiceId": invoice_id})
        )
    if merchant and amount_cents is not None and doc_date is not None:
        rules.append(
            DuplicateRule(
                "the same merchant, amount within 0.05 and date within a day",
                # ``workspace_amount`` has the amount last: its bounds are exact.
                {
                    "amount": {
                        "$gte": amount_cents - amount_tolerance_cents,
                        "$lte": amount_cents + amount_tolerance_cents,
                    }
                },
                {
                    "merchant": equals_ignoring_case(merchant),
                    "docDate": {
                        "$gte": doc_date - timedelta(days=days),
                        "$lte": doc_date + timedelta(days=days),
                    },
                },
            )
        )
    return rules


def duplicate_rules_of(fields: Mapping[str, Any], sha256: str | None) -> list[DuplicateRule]:
    """The duplicate checks of a document with the API's ``fields`` (a Decimal amount, a date)
    and the file ``sha256``: ``duplicate_rules`` with the amount and date as stored."""
    amount, doc_date = fields.get("amount"), fields.get("docDate")
    return duplicate_rules(
        sha256=sha256,
        invoice_id=fields.get("invoiceId"),
        merchant=fields.get("merchant"),
        amount_cents=to_cents(amount) if amount is not None else None,
        doc_date=midnight(doc_date) if isinstance(doc_date, date) else None,
    )
