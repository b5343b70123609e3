"""Errors the persistence layer raises instead of the driver's, so no caller imports pymongo.

    QueryTimeout   a query ran past its ``maxTimeMS`` (typically an expensive regex)

The where-clause compiler's ``WhereError`` (``persistence/where.py``) is the other error a
query can raise: a clause that cannot be compiled.
"""

from __future__ import annotations


class QueryTimeout(Exception):
    """A query ran past its ``maxTimeMS`` (typically an expensive regex)."""
