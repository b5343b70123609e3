"""What each capability does, and the registries that collect capabilities and job kinds.

``RESOURCES`` is the one visible list of resource modules and ``JOB_MODULES`` the one list of
modules that declare job kinds; ``build_registry()`` and ``build_job_kinds()`` are called by the
app factory and the worker pool (and by tests), never at import time; ``default_registry()`` is
the process's own, built once.
"""

from __future__ import annotations

import functools

from resolvers.framework.job_kinds import JobKinds
from resolvers.framework.registry import Registry
from resolvers.resources import (
    activity,
    api_keys,
    approvals,
    billing,
    currency,
    documents,
    exports,
    files,
    help_center,
    integrations,
    mailboxes,
    matches,
    members,
    notes,
    rules,
    statements,
    tags,
    transactions,
    views,
    whatsapp,
    workspaces,
)
from resolvers.services.billing import subscriptions
from resolvers.services.connections import export_delivery
from resolvers.services.processing import pipeline, reprocessing, thumbnails

RESOURCES = (
    activity,
    api_keys,
    approvals,
    billing,
    currency,
    documents,
    exports,
    files,
    help_center,
    integrations,
    mailboxes,
    matches,
    members,
    notes,
    rules,
    statements,
    tags,
    transactions,
    views,
    whatsapp,
    workspaces,
)
JOB_MODULES = (
    export_delivery,
    mailboxes,
    pipeline,
    reprocessing,
    rules,
    subscriptions,
    thumbnails,
    whatsapp,
)


def build_registry() -> Registry:
    """Collect every capability of ``RESOURCES`` and freeze the registry."""
    return Registry.from_modules(RESOURCES).freeze()


@functools.cache
def default_registry() -> Registry:
    """The process's registry, for what is made without one (``fincap serve``'s app, a
    worker's services): built once, so what each face derives from it (the GraphQL schema, the
    MCP server, the routes: ``Registry.derived``, about 0.7 CPU-s a set) is made once per process
    too, and a process forked after it (the test suite's) inherits it all. Frozen: nothing
    that uses it can change it."""
    return build_registry()


def build_job_kinds() -> JobKinds:
    """Collect every job kind of ``JOB_MODULES`` and freeze them."""
    return JobKinds.from_modules(JOB_MODULES).freeze()


__all__ = ["JOB_MODULES", "RESOURCES", "build_job_kinds", "build_registry", "default_registry"]
