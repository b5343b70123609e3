"""Fixtures of the hardening tests: the documents resource's seeded workspace is reused."""

from tests.documents.conftest import seeded

__all__ = ["seeded"]
