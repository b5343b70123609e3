"""The GraphQL face: ``/v1/graphql`` and its explorer.

face       the routes: GraphQL over HTTP, the explorer page for browsers
explorer   the explorer page (GraphiQL, examples, sign-in), its files and ``/graphql``
builder    the schema built from the registry (no ``resolvers`` import: it is handed the
           registry object and the ``execute`` callable)
execution  graphql-core's executor, faster for wide selections
document_cache  parsed and validated documents kept by their text (bounded LRU)
graph      the links between types (a document's workspace, a workspace's documents)
graphiql/  GraphiQL's vendored browser files (scripts/vendor-graphiql.sh rebuilds them)
page/      the explorer's own script and styles
"""

from __future__ import annotations

from app.graphql.face import graphql_routes
from app.graphql.limits import Limits

__all__ = ["Limits", "graphql_routes"]
