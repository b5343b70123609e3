"""The search vocabulary: words that name a kind of document or a category, in the languages
fincap reads, and how the index matches them against a document's docType and category."""

from __future__ import annotations

import numpy as np
import pytest

from engines.ranking.search_index import SearchIndex, fuse, fused_top
from engines.ranking.vocabulary import document_concepts, understand


def concepts(query: str) -> dict[str, set[str]]:
    return {term.token: set(term.concepts) for term in understand(query)}


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("invoice", "invoice"),
        ("Invoices", "invoice"),  # plural
        ("Rechnung", "invoice"),
        ("Rechnungen", "invoice"),
        ("facture", "invoice"),
        ("factura", "invoice"),
        ("fattura", "invoice"),
        ("factuur", "invoice"),
        ("receipt", "receipt"),
        ("Quittung", "receipt"),
        ("Kassenbon", "receipt"),
        ("reçu", "receipt"),
        ("resit", "receipt"),  # Malay
        ("Gutschrift", "credit-note"),
        ("refund", "refund"),
    ],
)
def test_words_that_name_a_kind_of_document(query: str, kind: str) -> None:
    (term,) = understand(query)
    assert term.concepts == {f"type:{kind}"} and term.kind_only


@pytest.mark.parametrize(
    ("query", "category"),
    [
        ("hotel", "lodging"),
        ("Übernachtung", "lodging"),
        ("taxi", "transport"),
        ("Tankstelle", "fuel"),
        ("gasolinera", "fuel"),
        ("coffee", "meals"),
        ("Kaffee", "meals"),
        ("Apotheke", "healthcare"),
        ("farmasi", "healthcare"),  # Malay
        ("groceries", "groceries"),  # the category's own name
    ],
)
def test_words_of_a_trade_name_its_category(query: str, category: str) -> None:
    (term,) = understand(query)
    assert f"category:{category}" in term.concepts and not term.kind_only


def test_phrases_name_what_their_words_alone_do_not() -> None:
    assert concepts("gas station") == {"gas": {"category:fuel"}, "station": {"category:fuel"}}
    assert concepts("stesen minyak")["stesen"] == {"category:fuel"}  # Malay
    assert concepts("gas") == {"gas": set()}
    assert concepts("station") == {"station": set()}


def test_a_query_keeps_each_word_with_its_own_concepts() -> None:
    assert concepts("Hotel Rechnung") == {
        "hotel": {"category:lodging"},
        "rechnung": {"type:invoice"},
    }
    assert concepts("starbucks in Berlin") == {"starbucks": set(), "in": set(), "berlin": set()}


def test_compounds_are_split_into_known_parts() -> None:
    terms = understand("Hotelrechnung")
    assert [(t.token, set(t.concepts)) for t in terms] == [
        ("hotelrechnung", set()),
        ("hotel", {"category:lodging"}),
        ("rechnung", {"type:invoice"}),
    ]
    assert concepts("Tankbeleg") == {
        "tankbeleg": set(),
        "tank": {"category:fuel"},
        "beleg": {"type:receipt"},
    }
    # A short part alone is not trusted; a thing bought is no part ("pain" in painkillers).
    assert concepts("Zugticket") == {"zugticket": set()}
    assert concepts("painkillers") == {"painkillers": set()}


def test_things_bought_name_their_category_only_as_a_fallback() -> None:
    (latte,) = understand("latte")
    assert latte.fallback and latte.concepts == {"category:meals"}
    (hotel,) = understand("hotel")
    assert not hotel.fallback


def test_broad_categories_are_named_only_by_their_name() -> None:
    assert concepts("furniture") == {"furniture": set()}  # Shopping, like hardware
    assert concepts("shopping") == {"shopping": {"category:shopping"}}


def test_a_document_carries_its_category_and_kind() -> None:
    assert document_concepts("Office Supplies", "invoice") == (
        "category:office supplies",
        "type:invoice",
    )
    assert document_concepts(None, None) == (None, None)


def index_of(documents: list[tuple[str, str, str, str]]) -> tuple[SearchIndex, np.ndarray]:
    index = SearchIndex(4)
    for doc_id, merchant, category, doc_type in documents:
        summary = f"{doc_type.capitalize()} from {merchant}."
        texts = {"merchant": merchant, "category": category, "summary": summary}
        index.upsert(doc_id, texts, None, doc_type=doc_type)
    return index, index.rows_of([d[0] for d in documents])


DOCUMENTS = [
    ("marriott", "Marriott", "Lodging", "invoice"),
    ("bahn", "Deutsche Bahn", "Travel", "receipt"),
    ("netpresse", "Netpresse", "Other", "invoice"),
    ("apple", "Apple Store", "Equipment", "receipt"),
    ("rewe", "REWE", "Groceries", "receipt"),
]


def ranked(index: SearchIndex, rows: np.ndarray, query: str) -> list[str]:
    scores = index.lexical_scores(query, rows)
    order = [int(i) for i in np.argsort(-scores, kind="stable") if scores[i] > 0]
    return [index.ids[int(rows[i])] for i in order]


def test_the_index_matches_concepts_to_category_and_kind() -> None:
    index, rows = index_of(DOCUMENTS)
    assert ranked(index, rows, "hotel invoice") == ["marriott", "netpresse"]
    assert ranked(index, rows, "Hotel Rechnung") == ["marriott", "netpresse"]
    assert ranked(index, rows, "Lebensmittel") == ["rewe"]


def test_a_kind_of_document_matches_the_kind_not_the_text() -> None:
    index, rows = index_of(DOCUMENTS)
    index.upsert(
        "bahn", {"merchant": "Deutsche Bahn", "summary": "Invoice copy"}, None, doc_type="receipt"
    )
    assert set(ranked(index, rows, "invoice")) == {"marriott", "netpresse"}
    # A correction of the kind moves the document.
    index.upsert("netpresse", {"merchant": "Netpresse"}, None, doc_type="receipt")
    assert ranked(index, rows, "invoice") == ["marriott"]


def test_a_kind_no_document_has_is_read_as_a_word() -> None:
    index = SearchIndex(4)
    index.upsert("a", {"merchant": "Refund Shop"}, None)  # no kind stored
    assert index.lexical_scores("refund", index.rows_of(["a"]))[0] > 0


def test_a_thing_bought_that_a_document_names_is_a_word() -> None:
    index, rows = index_of([*DOCUMENTS, ("milk", "Milk Bar", "Meals", "receipt")])
    assert ranked(index, rows, "apple") == ["apple"]  # not every grocery receipt
    assert ranked(index, rows, "milk") == ["milk"]
    assert ranked(index, rows, "bread") == ["rewe"]  # no document says bread: its category


def test_equal_word_scores_rank_by_meaning() -> None:
    """Every invoice matches "invoices" alike: the word ranking orders them by meaning (here
    all too far to rank by meaning themselves), not by their place in the index."""
    lexical = np.array([1.0, 1.0, 1.0, 0.0], dtype=np.float32)
    similarity = np.array([0.01, 0.1, 0.05, 0.9], dtype=np.float32)
    fused = fuse(lexical, similarity)
    assert list(np.argsort(-fused[:3], kind="stable")) == [1, 2, 0]
    assert fused_top(lexical, similarity, 4).ranked.rows == [3, 1, 2, 0]


def test_documents_matching_every_word_come_first() -> None:
    """A railway ticket closer in meaning to "hotel invoice" than anything (every cosine low)
    still ranks after the hotel's invoice, which matches both words."""
    index, rows = index_of(DOCUMENTS)
    words = index.lexical_match("hotel invoice", rows)
    assert words.complete is not None
    assert [index.ids[int(r)] for r in rows[words.complete]] == ["marriott"]
    similarity = np.array([0.10, 0.16, 0.12, 0.0, 0.0], dtype=np.float32)  # bahn "nearest"
    plain = fused_top(words.scores, similarity, 3, distinctive=words.distinctive)
    assert plain.ranked.rows[0] == 1  # without the tier: the railway first
    tiered = fused_top(
        words.scores, similarity, 3, distinctive=words.distinctive, first=words.complete
    )
    assert tiered.ranked.rows[0] == 0
    # One distinctive word: no tier.
    assert index.lexical_match("hotel", rows).complete is None
