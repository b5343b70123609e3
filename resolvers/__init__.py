"""What each capability does, and the registries that collect capabilities and job kinds.

``RESOURCES`` is the one visible list of resource modules and ``JOB_MODULES`` the one list of
modules that declare job kinds; ``build_registry()`` and ``build_job_kinds()`` are called by the
app factory and the worker pool (and by tests), never at import time.
"""

from __future__ import annotations

from resolvers import (
    api_keys,
    approvals,
    billing,
    currency,
    documents,
    exports,
    files,
    integrations,
    pipeline,
    subscriptions,
    workspaces,
)
from resolvers.job_kinds import JobKinds
from resolvers.registry import Registry

RESOURCES = (
    api_keys,
    approvals,
    billing,
    currency,
    documents,
    exports,
    files,
    integrations,
    workspaces,
)
JOB_MODULES = (exports, pipeline, subscriptions)


def build_registry() -> Registry:
    """Collect every capability of ``RESOURCES`` and freeze the registry."""
    return Registry.from_modules(RESOURCES).freeze()


def build_job_kinds() -> JobKinds:
    """Collect every job kind of ``JOB_MODULES`` and freeze them."""
    return JobKinds.from_modules(JOB_MODULES).freeze()
