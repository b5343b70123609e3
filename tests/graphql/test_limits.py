"""Document limits: depth, tokens, aliases (also through fragments) and expanded size."""

from __future__ import annotations

import httpx
from graphql import parse

from app.graphql.builder import build_schema
from app.graphql.limits import Limits, expanded_size
from tests.graphql.helpers import GRAPHQL, test_registry
from tests.work_budget import call_budget

LIMITS = Limits()
# "Refused fast", counted rather than timed (tests/work_budget.py): the whole request, from the
# client through the app, took ~7,400 Python calls for a 13-level bomb (~500 per level); a check
# that walked the expanded document (10**12 fields) would pass this at once and be stopped.
BOMB_CALLS = 50_000


async def post(api: httpx.AsyncClient, query: str) -> httpx.Response:
    return await api.post(
        GRAPHQL, json={"query": query}, headers={"Accept": "application/graphql-response+json"}
    )


def messages(response: httpx.Response) -> list[str]:
    return [error["message"] for error in response.json()["errors"]]


def nested(depth: int) -> str:
    """A selection ``depth`` levels deep below the root field (names need not exist)."""
    return "{ workspacesList " + "{ a " * depth + "{ b }" + " }" * depth + " }"


async def test_depth_limit(api: httpx.AsyncClient) -> None:
    limit = LIMITS.max_depth
    over = await post(api, nested(limit))
    assert over.status_code == 400
    assert f"exceeds maximum operation depth of {limit}" in " ".join(messages(over))
    at_limit = await post(api, nested(limit - 1))
    assert not any("depth" in message for message in messages(at_limit))


async def test_depth_limit_on_valid_fields() -> None:
    async def never(*args: object) -> None:
        raise AssertionError("not executed")

    schema = build_schema(test_registry(), never, Limits(max_depth=1))  # type: ignore[arg-type]
    ok = await schema.execute("{ workspacesList { currentOrgId } }")
    assert ok.errors and "depth" not in ok.errors[0].message  # ran (and failed on the context)
    deep = await schema.execute("{ workspacesList { workspaces { id } } }")
    assert deep.errors and "exceeds maximum operation depth of 1" in deep.errors[0].message


async def test_token_limit(api: httpx.AsyncClient) -> None:
    over = await post(api, "{ " + "__typename " * LIMITS.max_tokens + "}")
    assert over.status_code == 400
    assert messages(over) == [
        f"Syntax Error: Document contains more than {LIMITS.max_tokens} tokens. Parsing aborted."
    ]
    under = await post(api, "{ " + "__typename " * 100 + "}")
    assert under.status_code == 200


async def test_alias_limit(api: httpx.AsyncClient) -> None:
    def aliases(count: int) -> str:
        return "{ " + " ".join(f"a{i}: __typename" for i in range(count)) + " }"

    over = await post(api, aliases(LIMITS.max_aliases + 1))
    assert over.status_code == 400
    assert messages(over) == [
        f"{LIMITS.max_aliases + 1} aliases found. Allowed: {LIMITS.max_aliases}"
    ]
    assert (await post(api, aliases(LIMITS.max_aliases))).status_code == 200


def fragment_bomb(levels: int, width: int, field: str = "a: __typename") -> str:
    """Each fragment spreads the previous one ``width`` times: width**levels fields expanded."""
    fragments = [f"fragment F0 on Query {{ {field} }}"]
    for level in range(1, levels):
        spreads = " ".join([f"...F{level - 1}"] * width)
        fragments.append(f"fragment F{level} on Query {{ {spreads} }}")
    return f"{{ ...F{levels - 1} }}\n" + "\n".join(fragments)


async def test_alias_bomb_through_fragments_is_refused_fast(api: httpx.AsyncClient) -> None:
    # 10**12 aliases in ~1,300 characters: counting them one by one would never finish.
    bomb = fragment_bomb(levels=13, width=10)
    with call_budget(BOMB_CALLS) as work:
        response = await post(api, bomb)
    assert not work.exceeded, work.calls
    assert response.status_code == 400
    assert messages(response) == [f"{10**12} aliases found. Allowed: {LIMITS.max_aliases}"]
    # Small fragment reuse stays legal: 3 spreads of 10 aliases = 30.
    assert (
        await post(
            api,
            fragment_bomb(
                levels=2, width=3, field=" ".join(f"a{i}: __typename" for i in range(10))
            ),
        )
    ).status_code == 200


async def test_field_bomb_without_aliases_is_refused_fast(api: httpx.AsyncClient) -> None:
    bomb = fragment_bomb(levels=13, width=10, field="__typename")
    with call_budget(BOMB_CALLS) as work:
        response = await post(api, bomb)
    assert not work.exceeded, work.calls
    assert response.status_code == 400
    assert messages(response) == [
        f"{10**12} field selections after expanding fragments. Allowed: {LIMITS.max_selections}"
    ]


def test_expanded_size_counts_fragments_once_each_time_they_are_spread() -> None:
    document = parse("{ x: a { ...F ...F } ... on Query { b } } fragment F on T { c d: e }")
    # a, b, and 2 × (c, e): 6 fields; x and 2 × d: 3 aliases.
    assert expanded_size(document) == (6, 3)


async def test_introspection_fits_the_limits(api: httpx.AsyncClient) -> None:
    from graphql import get_introspection_query

    query = get_introspection_query(descriptions=True, input_value_deprecation=True)
    response = await post(api, query)
    assert response.status_code == 200
    assert response.json()["data"]["__schema"]["queryType"]["name"] == "Query"


async def test_refusing_a_bomb_grows_with_its_text_not_its_expansion(
    api: httpx.AsyncClient,
) -> None:
    """Twice the levels (10**13 times the expanded fields) costs about twice the work."""
    work = []
    for levels in (13, 26):
        with call_budget(BOMB_CALLS) as counted:
            response = await post(api, fragment_bomb(levels=levels, width=10))
        assert response.status_code == 400 and not counted.exceeded
        work.append(counted.calls)
    assert work[1] < 3 * work[0], work
