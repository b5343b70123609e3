"""Keyset pages owned by the repository (``documents.pages.page``): each row's key is its
position in the requested order, a key handed back reads on from that row, and a key no page
gave out is refused at the call, before anything is read."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from persistence.documents import DocumentQuery, NotAPageKey, Page
from persistence.store import Store

WS = "org_pages"


async def stocked(store: Store) -> None:
    # Ties on amount and one document without an amount: the id breaks ties, missing values
    # sort lowest.
    amounts = [Decimal("5"), Decimal("5"), Decimal("2.50"), None, Decimal("9"), Decimal("5")]
    await store.documents.writes.insert_many(
        WS,
        [
            {"_id": f"d{i}", "amount": amount, "currency": "EUR", "conversionRate": 2.0}
            for i, amount in enumerate(amounts)
        ],
    )


async def all_pages(store: Store, sort_by: str, order: int, size: int) -> list[Page]:
    pages: list[Page] = []
    key = None
    while True:
        page = await store.documents.pages.page(
            WS, DocumentQuery(), sort_by=sort_by, order=order, limit=size, after=key, fields=["id"]
        )
        pages.append(page)
        key = page.next_key
        if key is None:
            return pages


@pytest.mark.parametrize("order", [1, -1])
@pytest.mark.parametrize("sort_by", ["amount", "convertedAmount", "id"])
async def test_pages_read_on_from_their_keys(store: Store, sort_by: str, order: int) -> None:
    await stocked(store)
    whole = await store.documents.pages.page(
        WS, DocumentQuery(), sort_by=sort_by, order=order, limit=100
    )
    assert not whole.more and whole.next_key is None
    pages = await all_pages(store, sort_by, order, size=2)
    assert [d["id"] for page in pages for d in page.documents] == [d["id"] for d in whole.documents]
    assert [page.more for page in pages] == [True, True, False]
    assert pages[0].next_key == pages[0].keys[-1]


async def test_a_key_is_the_stored_sort_value_and_the_id(store: Store) -> None:
    """The repository knows that convertedAmount is stored as preferredCents: the caller's
    key holds the stored value without the caller naming the stored field."""
    await stocked(store)
    page = await store.documents.pages.page(
        WS, DocumentQuery(), sort_by="convertedAmount", order=-1, limit=1, fields=["id"]
    )
    assert page.keys == [{"v": 1800, "id": "d4"}]  # 9.00 EUR at 2.0, in cents


async def test_a_key_without_an_id_is_refused_before_any_read(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def read(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("read with a key no page gave out")

    monkeypatch.setattr(store.documents.reads, "find", read)
    with pytest.raises(NotAPageKey):
        store.documents.pages.page(WS, DocumentQuery(), limit=2, after={"v": 5})


def test_a_page_read_backwards_turns_round_with_its_keys() -> None:
    page = Page([{"id": "a"}, {"id": "b"}], [{"v": 1, "id": "a"}, {"v": 2, "id": "b"}], True)
    turned = page.reversed()
    assert [document["id"] for document in turned.documents] == ["b", "a"]
    assert turned.keys == [{"v": 2, "id": "b"}, {"v": 1, "id": "a"}]
    assert turned.more
