"""fincap's tests."""

from tests import mongomock_compat  # noqa: F401  (mongomock accepts current bulk writes)
