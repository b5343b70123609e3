"""The connector error tree: one subclass per kind, each with its own snake_case ``reason``,
``retryable`` fixed by the kind, and ``raise_for`` choosing the kind from the HTTP status."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import httpx
import pytest

import engines.connectors as connectors
from engines.connectors import errors
from engines.connectors.base import raise_for
from resolvers.framework.errors import BadGateway, BadRequest
from resolvers.services.connections.gateway import provider_call


def _subclasses(cls: type[errors.ConnectorError]) -> list[type[errors.ConnectorError]]:
    found: list[type[errors.ConnectorError]] = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def test_every_kind_has_its_own_snake_case_reason() -> None:
    kinds = _subclasses(errors.ConnectorError)
    assert len(kinds) >= 10
    reasons = [kind.reason for kind in kinds]
    assert len(set(reasons)) == len(reasons), reasons
    assert errors.ConnectorError.reason not in reasons
    for reason in reasons:
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", reason), reason
    # Each kind is public: in the errors module's and the package's ``__all__``.
    for kind in kinds:
        assert kind.__name__ in errors.__all__
        assert getattr(connectors, kind.__name__) is kind
        assert kind.__name__ in connectors.__all__


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (400, errors.Refused, False),
        (401, errors.Refused, False),
        (403, errors.Refused, False),
        (404, errors.RemoteGone, False),
        (409, errors.Refused, False),
        (429, errors.RateLimited, True),
        (500, errors.ProviderFailed, True),
        (503, errors.ProviderFailed, True),
    ],
)
def test_raise_for_maps_the_status_to_its_kind(
    status: int, kind: type[errors.ConnectorError], retryable: bool
) -> None:
    response = httpx.Response(status, text="nope\nat all")
    with pytest.raises(errors.ConnectorError) as caught:
        raise_for(response, "create the bill")
    assert type(caught.value) is kind
    assert caught.value.status == status
    assert caught.value.retryable is retryable
    # The words people read are unchanged by the kind.
    assert caught.value.message == f"create the bill: the provider answered {status}: nope at all"


def test_raise_for_lets_a_success_through() -> None:
    raise_for(httpx.Response(201, text="{}"), "create the bill")


def test_retryable_belongs_to_the_kind() -> None:
    retryable = {k.reason for k in _subclasses(errors.ConnectorError) if k.retryable}
    assert retryable == {"unreachable", "rate_limited", "provider_error"}


def test_the_integrations_guide_lists_every_reason() -> None:
    """The guide's table documents the reasons and whether each is retried: a new kind, or a
    changed ``retryable``, must be written there too."""
    from pathlib import Path

    guide = (Path(__file__).parents[2] / "docs/guide/integrations.md").read_text()
    rows = re.findall(r"^\| `([a-z_]+)` \| (yes|no) \|", guide, flags=re.MULTILINE)
    listed = {reason: retried == "yes" for reason, retried in rows}
    assert listed == {kind.reason: kind.retryable for kind in _subclasses(errors.ConnectorError)}


def test_provider_call_is_the_one_seam_to_a_502() -> None:
    """A connector error inside ``provider_call`` leaves as a 502 naming the provider and what
    was being done, chained to it so its kind can be recorded; anything else passes through."""
    with pytest.raises(BadGateway) as raised, provider_call("Xero", "refreshing the token failed"):
        raise errors.RateLimited("slow down", status=429)
    assert raised.value.message == "Xero: refreshing the token failed: slow down"
    assert errors.reason_of(raised.value) == "rate_limited"
    with pytest.raises(BadGateway) as raised, provider_call("QuickBooks"):
        raise errors.Refused("no such account")
    assert raised.value.message == "QuickBooks: no such account"
    with pytest.raises(BadRequest), provider_call("Xero"):
        raise BadRequest("Invalid request: tenantId: unknown")


def test_no_other_resolver_turns_a_connector_error_into_a_502() -> None:
    """The 502 of a connector failure is made in one place: a resolver that catches
    ``ConnectorError`` does something else with it (records it, reports it, answers a 400)."""
    root = Path(__file__).resolve().parents[2] / "resolvers"
    seam = root / "services" / "connections" / "gateway.py"
    for path in root.rglob("*.py"):
        if path == seam:
            continue
        for handler in ast.walk(ast.parse(path.read_text())):
            if isinstance(handler, ast.ExceptHandler) and "ConnectorError" in ast.unparse(
                handler.type or ast.Constant(None)
            ):
                raised = [n for n in ast.walk(handler) if isinstance(n, ast.Raise) and n.exc]
                names = {ast.unparse(r.exc).split("(")[0] for r in raised if r.exc}
                assert "BadGateway" not in names, f"{path}:{handler.lineno}: use provider_call"
