"""The one seam where a connector's failure becomes a capability's failure.

A call to an outside system (Xero, QuickBooks, an IMAP server, WhatsApp's Graph) made inside a
capability runs in ``provider_call``: the ``ConnectorError`` it raises leaves as a 502
(``BadGateway``) whose message names the provider and, when given, what was being done. It is
chained (``raise … from``), so a caller that records the failure (an export's ``errorReason``)
reads its kind with ``engines.connectors.errors.reason_of``, never from the words.

The few places that turn a connector error into something else say so where they catch it: a
job records it and lets the jobs queue retry what ``retryable`` says may succeed later (export
delivery, WhatsApp media and replies, a mailbox's poll); a search reports it per provider
(activity.search); a sign-in check is the request's own fault, a 400 (mailboxes.connect); a
disconnect forgets the grant whatever the provider answers.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from engines.connectors.errors import ConnectorError
from resolvers.framework.errors import BadGateway


@contextmanager
def provider_call(provider: str, doing: str | None = None) -> Iterator[None]:
    """Run a call to ``provider`` (its display name): a ``ConnectorError`` raised inside becomes
    ``BadGateway("<provider>: [<doing>: ]<the connector's message>")``, chained to it. Any other
    error passes through untouched."""
    try:
        yield
    except ConnectorError as exc:
        said = f"{doing}: {exc}" if doing else str(exc)
        raise BadGateway(f"{provider}: {said}") from exc
