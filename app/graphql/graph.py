"""The GraphQL graph beyond the capabilities: links between results, read through DataLoaders.

Part of the GraphQL face. Capability fields mirror the registry one to one. Dashboards also want to
walk from a document to its duplicates and from a workspace to its documents and counts in one
request; this module declares those links (``app.graphql.builder.Link``) and the per-request
``GraphSession`` that resolves them. Every read goes through a DataLoader created per request, so a
list of 5 or 50 documents asking for their duplicates costs the same batched reads. The data comes
from resolver functions (``resolvers.resources.documents.documents_by_id``, …) that run under a
``Context`` obtained from ``authorize`` with the request's own credentials (cached per request and
workspace); they own workspace scoping and map store errors to capability errors, exactly as
``invoke`` does. Capability-backed links (``Workspace.documents``, ``Workspace.counts``) go through
``invoke`` itself, so validation, scopes and workspace scoping are those of REST.

Documents carry no workspace id on the wire; the session remembers in which workspace each one
was found (document ids are unique across workspaces), and the request's workspace otherwise.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import strawberry
from pydantic import BaseModel
from strawberry.dataloader import DataLoader

from app.graphql.declarations import Graph, Link
from app.graphql.selection import listed_fields
from resolvers.framework.context import Context, Credentials, Principal
from resolvers.framework.invoke import authorize, invoke
from resolvers.framework.registry import Registry
from resolvers.framework.services import Services
from resolvers.resources.documents import document_tallies, documents_by_id
from resolvers.resources.workspaces import current_workspace as workspace_of_context
from resolvers.services.documents.preferences import preferred_currency
from schema.documents import (
    CountDocuments,
    Document,
    DocumentCount,
    DocumentPage,
    EditRecord,
    SearchDocuments,
)
from schema.notes import Note, NoteList
from schema.workspaces import Workspace, WorkspaceSummary

# The links read what these capabilities read, so they need the scopes those declare.
READS_DOCUMENTS = "documents.get"
READS_WORKSPACES = "workspaces.list"
CONTEXT_KEY = "graph"


class Identified(Protocol):
    """A record with an id unique across workspaces (a document, a transaction)."""

    @property
    def id(self) -> str: ...


class GraphSession:
    """The graph's state for one request: credentials, authorizations, DataLoaders.

    Built per request (a DataLoader caches for its whole life, which must not outlive the
    request's credentials).
    """

    def __init__(
        self,
        registry: Registry,
        credentials: Credentials,
        services: Services,
        principal: Principal | None = None,
    ) -> None:
        self.registry = registry
        self.credentials = credentials
        self.services = services
        # Who the credentials are, when the face already authenticated them this request.
        self.principal = principal
        self._authorized: dict[tuple[str | None, tuple[str, ...]], asyncio.Future[Context]] = {}
        self._workspace_of: dict[str, str] = {}
        # The request's state of the graph's other parts (the transactions' DataLoaders), by
        # part: created on first use, gone with the request.
        self.parts: dict[str, Any] = {}

    # The DataLoaders, made when a request first uses one (most use none or one of them).

    @functools.cached_property
    def documents(self) -> DataLoader[tuple[str, str], Document | None]:
        return DataLoader(load_fn=self._load_documents)

    @functools.cached_property
    def counts(self) -> DataLoader[str, dict[str, int]]:
        return DataLoader(load_fn=self._load_counts)

    @functools.cached_property
    def workspaces(self) -> DataLoader[str | None, Workspace | None]:
        return DataLoader(load_fn=self._load_workspaces)

    def permissions_of(self, slug: str) -> tuple[str, ...]:
        """The scopes capability ``slug`` declares (a link reading what it reads needs them)."""
        spec = self.registry.get(slug)
        if spec is None:
            raise LookupError(f"the graph reads like {slug}, which this registry lacks")
        return spec.permissions

    # -- authorization --------------------------------------------------------------------

    def credentials_for(self, org_id: str | None) -> Credentials:
        """The request's credentials acting in ``org_id`` (None: the request's own org)."""
        if org_id is None:
            return self.credentials
        return dataclasses.replace(self.credentials, org_id=org_id)

    async def authorized(self, org_id: str | None, permissions: tuple[str, ...]) -> Context:
        """``authorize`` once per request, workspace and scopes (concurrent callers share it)."""
        key = (org_id, permissions)
        shared = self._authorized.get(key)
        if shared is not None:
            ctx = await shared
        else:
            # The first caller authorizes in place (a task would cost turns of the event loop
            # on every request); callers meanwhile await its outcome.
            shared = asyncio.get_running_loop().create_future()
            self._authorized[key] = shared
            try:
                ctx = await authorize(
                    self.credentials_for(org_id),
                    self.services,
                    permissions,
                    needs_workspace=True,
                    principal=self.principal,
                )
            except asyncio.CancelledError:
                shared.cancel()
                raise
            except BaseException as exc:
                shared.set_exception(exc)
                shared.exception()  # retrieved: a failure nobody else awaited is not logged
                raise
            shared.set_result(ctx)
        # The same authorization serves callers that name the workspace explicitly.
        self._authorized.setdefault((ctx.workspace_id, permissions), shared)
        return ctx

    async def allowed(self, slug: str, org_id: str | None) -> Context:
        """Authorized in ``org_id`` as capability ``slug`` is: its scopes and its roles (the
        errors REST answers), for a link that reads what ``slug`` reads."""
        ctx = await self.authorized(org_id, self.permissions_of(slug))
        spec = self.registry.get(slug)
        assert spec is not None  # permissions_of found it
        spec.require_role(ctx.role)
        return ctx

    async def invoke(
        self,
        slug: str,
        arguments: dict[str, Any],
        org_id: str,
        selected_fields: frozenset[str] | None = None,
    ) -> BaseModel:
        """Capability ``slug`` in workspace ``org_id`` with the request's credentials."""
        return await invoke(
            self.registry,
            slug,
            arguments,
            self.credentials_for(org_id),
            self.services,
            selected_fields=selected_fields,
        )

    # -- documents ------------------------------------------------------------------------

    def remember(self, documents: Sequence[Identified], workspace_id: str) -> None:
        """Note where ``documents`` (or transactions) were found, for their links."""
        for document in documents:
            self._workspace_of[document.id] = workspace_id

    async def workspace_of(self, document: Identified) -> str:
        """The workspace ``document`` (or a transaction) was read in, authorized for reading
        documents."""
        org_id = self._workspace_of.get(document.id)
        ctx = await self.authorized(org_id, self.permissions_of(READS_DOCUMENTS))
        return ctx.require_workspace()

    async def stored(self, document: Document, field: str) -> Any:
        """``document``'s ``field``, read from the store when its projection left it out.

        A compact search result has only a few fields set; links still need the stored ids,
        which the DataLoader reads for the whole list in one batch.
        """
        if field in document.model_fields_set:
            return getattr(document, field)
        found = await self.load_documents(await self.workspace_of(document), [document.id])
        return getattr(found[0], field) if found else None

    async def read_documents(self, ctx: Context, ids: Sequence[str]) -> list[Document]:
        """Documents of ``ctx``'s workspace by id, read at once, in no particular order: for a
        caller that holds its whole batch (``node``/``nodes`` at the root), which a DataLoader
        would only delay by a turn of the event loop. The DataLoader keeps them for links."""
        found = await documents_by_id(ctx, ids)
        workspace_id = ctx.require_workspace()
        self.documents.prime_many({(workspace_id, document.id): document for document in found})
        self.remember(found, workspace_id)
        return found

    async def load_documents(self, workspace_id: str, ids: Sequence[str]) -> list[Document]:
        """Documents of one workspace by id, in order; ids not found there are skipped."""
        found = await self.documents.load_many([(workspace_id, i) for i in ids])
        documents = [d for d in found if isinstance(d, Document)]
        self.remember(documents, workspace_id)
        return documents

    async def _load_documents(self, keys: list[tuple[str, str]]) -> list[Document | None]:
        by_workspace: dict[str, list[str]] = defaultdict(list)
        for workspace_id, document_id in keys:
            by_workspace[workspace_id].append(document_id)
        # One batch per workspace (usually one in all): the reads never follow the list size.
        contexts = [
            await self.authorized(ws, self.permissions_of(READS_DOCUMENTS)) for ws in by_workspace
        ]
        reads = [
            documents_by_id(ctx, ids)
            for ctx, ids in zip(contexts, by_workspace.values(), strict=True)
        ]
        # One workspace is awaited in place: a gather would make it a task.
        batches = [await reads[0]] if len(reads) == 1 else await asyncio.gather(*reads)
        found = {
            (ws, document.id): document
            for ws, batch in zip(by_workspace, batches, strict=True)
            for document in batch
        }
        return [found.get(key) for key in keys]

    # -- workspaces -----------------------------------------------------------------------

    async def _load_counts(self, workspace_ids: list[str]) -> list[dict[str, int]]:
        contexts = [
            await self.authorized(ws, self.permissions_of(READS_DOCUMENTS)) for ws in workspace_ids
        ]
        return await document_tallies(contexts)

    async def _load_workspaces(self, org_ids: list[str | None]) -> list[Workspace | None]:
        contexts = [
            await self.authorized(org_id, self.permissions_of(READS_WORKSPACES))
            for org_id in org_ids
        ]
        return list(await asyncio.gather(*(workspace_of_context(ctx) for ctx in contexts)))


def session_of(info: strawberry.Info) -> GraphSession:
    """The request's graph session (the GraphQL face puts it in the context)."""
    session: GraphSession = info.context[CONTEXT_KEY]
    return session


# -- link resolvers -------------------------------------------------------------------------


async def document_duplicates(
    root: Document, info: strawberry.Info, _: dict[str, Any] | None
) -> list[Document]:
    """The active documents recorded as duplicates of this one."""
    session = session_of(info)
    ids = await session.stored(root, "duplicates")
    if not ids:
        return []
    return await session.load_documents(await session.workspace_of(root), ids)


async def document_duplicate_of(
    root: Document, info: strawberry.Info, _: dict[str, Any] | None
) -> Document | None:
    """The original this document duplicates, if any."""
    session = session_of(info)
    original = await session.stored(root, "duplicateOf")
    if not original:
        return None
    found = await session.load_documents(await session.workspace_of(root), [original])
    return found[0] if found else None


async def document_edit_history(
    root: Document, info: strawberry.Info, _: dict[str, Any] | None
) -> list[EditRecord]:
    """Corrections of this document, oldest first (also for compact results)."""
    history: list[EditRecord] | None = await session_of(info).stored(root, "editHistory")
    return history or []


def held_edit_history(root: Document) -> list[EditRecord]:
    """The edit history a document read whole holds (``document_edit_history`` without the
    read a compact result needs); ``LookupError`` for a document read without it."""
    if "editHistory" not in root.model_fields_set:
        raise LookupError("editHistory")
    return root.editHistory or []


async def document_notes(
    root: Document, info: strawberry.Info, _: dict[str, Any] | None
) -> list[Note]:
    """notes.list of this document, with its scopes and roles (the notes are stored with the
    document but not in its fields)."""
    session = session_of(info)
    found = await session.invoke(
        NOTES_LIST, {"documentId": root.id}, await session.workspace_of(root)
    )
    assert isinstance(found, NoteList)
    return found.notes


async def current_workspace(
    root: Any, info: strawberry.Info, _: dict[str, Any] | None
) -> Workspace | None:
    """The workspace of this request (X-Service-Org-Id, or the key's own workspace)."""
    return await session_of(info).workspaces.load(None)


async def summary_workspace(
    root: WorkspaceSummary, info: strawberry.Info, _: dict[str, Any] | None
) -> Workspace:
    """This listed workspace as a graph node (workspaces.list already checked membership)."""
    return Workspace(id=root.id, name=root.name, role=root.role, createdAt=root.createdAt)


async def workspace_documents(
    root: Workspace, info: strawberry.Info, arguments: dict[str, Any] | None
) -> BaseModel:
    """documents.search in this workspace (same input, validation and defaults), reading
    what the query selects of the documents."""
    session = session_of(info)
    selected = listed_fields(info, Document)
    page = await session.invoke("documents.search", arguments or {}, root.id, selected)
    if isinstance(page, DocumentPage):
        session.remember(page.documents, root.id)
    return page


async def workspace_counts(
    root: Workspace, info: strawberry.Info, arguments: dict[str, Any] | None
) -> BaseModel:
    """documents.count in this workspace (groups and per-currency totals)."""
    return await session_of(info).invoke("documents.count", arguments or {}, root.id)


async def workspace_preferred_currency(
    root: Workspace, info: strawberry.Info, _: dict[str, Any] | None
) -> str:
    """The currency this workspace's totals are shown in."""
    session = session_of(info)
    ctx = await session.authorized(root.id, session.permissions_of(READS_WORKSPACES))
    return await preferred_currency(ctx.store, root.id, ctx.user_id)


def _workspace_count(kind: str) -> Callable[..., Awaitable[int]]:
    async def resolve(root: Workspace, info: strawberry.Info, _: dict[str, Any] | None) -> int:
        session = session_of(info)
        await session.authorized(root.id, session.permissions_of(READS_DOCUMENTS))
        counts = await session.counts.load(root.id)
        return counts[kind]

    return resolve


NOTES_LIST = "notes.list"


def document_graph(registry: Registry) -> Graph:
    """The links of the service's graph that ``registry`` can serve."""
    links = [
        Link(
            name="duplicates",
            model=Document,
            returns=list[Document],
            resolve=document_duplicates,
            keep_as="duplicateIds",
            description="Documents recorded as duplicates of this one",
        ),
        Link(
            name="duplicateOf",
            model=Document,
            returns=Document | None,
            resolve=document_duplicate_of,
            keep_as="duplicateOfId",
            description="The original this document duplicates",
        ),
        Link(
            name="editHistory",
            model=Document,
            returns=list[EditRecord],
            resolve=document_edit_history,
            held=held_edit_history,
            description="Corrections of this document, oldest first",
        ),
    ]
    if registry.get(NOTES_LIST):
        links.append(
            Link(
                name="notes",
                model=Document,
                returns=list[Note],
                resolve=document_notes,
                description="The people's notes on this document, oldest first (notes.list)",
            )
        )
    if registry.get("documents.search") and registry.get("documents.count"):
        links += [
            Link(
                name="workspace",
                returns=Workspace | None,
                resolve=current_workspace,
                description="The workspace of this request (X-Service-Org-Id), for dashboards",
            ),
            Link(
                name="workspace",
                model=WorkspaceSummary,
                returns=Workspace,
                resolve=summary_workspace,
                description="This workspace with its documents and counts",
            ),
            Link(
                name="documents",
                model=Workspace,
                argument=SearchDocuments,
                returns=DocumentPage | None,
                resolve=workspace_documents,
                description="documents.search in this workspace",
            ),
            Link(
                name="counts",
                model=Workspace,
                argument=CountDocuments,
                returns=DocumentCount | None,
                resolve=workspace_counts,
                description="documents.count in this workspace: totals per currency, groups",
            ),
            Link(
                name="documentCount",
                model=Workspace,
                returns=int,
                resolve=_workspace_count("active"),
                description="Active (not archived) documents",
            ),
            Link(
                name="preferredCurrency",
                model=Workspace,
                returns=str,
                resolve=workspace_preferred_currency,
                description="The currency totals are shown in (ISO 4217): the workspace's "
                "preference, else the caller's, else USD",
            ),
            Link(
                name="archivedCount",
                model=Workspace,
                returns=int,
                resolve=_workspace_count("archived"),
                description="Archived documents",
            ),
        ]
    return Graph(links=tuple(links))
