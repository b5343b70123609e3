"""Which document fields each capability may filter on, compiled from the domain's lists.

``domain.documents`` (``COUNT_FILTERS``, ``SEARCH_FILTERS``) names the fields and their types,
and the contract's descriptions list them; here each gets where it is stored.
"""

from __future__ import annotations

from collections.abc import Mapping

from domain.documents import COUNT_FILTERS, SEARCH_FILTERS
from domain.where import Filterable
from persistence.where import FieldSpec

# Fields stored under another name than the one filters use.
STORED_AS = {"id": "_id", "convertedAmount": "preferredCents"}


def compiled(filters: Mapping[str, Filterable]) -> dict[str, FieldSpec]:
    return {
        name: FieldSpec(
            spec.type, path=STORED_AS.get(name), values=frozenset(spec.values), upper=spec.upper
        )
        for name, spec in filters.items()
    }


COUNT_FIELDS: dict[str, FieldSpec] = compiled(COUNT_FILTERS)
SEARCH_FIELDS: dict[str, FieldSpec] = compiled(SEARCH_FILTERS)
