"""Billing arithmetic: periods over month ends and leap years, proration, overage, the catalog."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from fractions import Fraction
from pathlib import Path

import pytest

from engines.billing.invoice import PlanChange, draft_invoice, segments
from engines.billing.periods import (
    add_months,
    next_period_end,
    period_bounds,
    period_index,
    round_half_up,
    share,
)
from engines.billing.plans import PlanCatalogError, default_catalog, load_catalog


def at(year: int, month: int, day: int, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


@pytest.mark.parametrize(
    ("start", "months", "expected"),
    [
        (date(2024, 1, 31), 1, date(2024, 2, 29)),  # leap February
        (date(2023, 1, 31), 1, date(2023, 2, 28)),  # common February
        (date(2100, 1, 31), 1, date(2100, 2, 28)),  # a century is not a leap year…
        (date(2000, 1, 31), 1, date(2000, 2, 29)),  # …unless divisible by 400
        (date(2024, 3, 31), 1, date(2024, 4, 30)),
        (date(2024, 12, 15), 1, date(2025, 1, 15)),  # over the year end
        (date(2024, 2, 29), 12, date(2025, 2, 28)),  # a yearly plan from a leap day
        (date(2024, 2, 29), 48, date(2028, 2, 29)),
        (date(2024, 5, 31), -3, date(2024, 2, 29)),
    ],
)
def test_add_months_clamps_to_the_months_length(start: date, months: int, expected: date) -> None:
    assert add_months(start, months) == expected


def test_a_31st_anchor_returns_to_the_31st_after_short_months() -> None:
    anchor = date(2024, 1, 31)
    starts = [period_bounds(anchor, 1, index)[0].date() for index in range(13)]
    assert starts == [
        date(2024, 1, 31),
        date(2024, 2, 29),
        date(2024, 3, 31),
        date(2024, 4, 30),
        date(2024, 5, 31),
        date(2024, 6, 30),
        date(2024, 7, 31),
        date(2024, 8, 31),
        date(2024, 9, 30),
        date(2024, 10, 31),
        date(2024, 11, 30),
        date(2024, 12, 31),
        date(2025, 1, 31),
    ]
    # Periods tile time: each ends where the next starts.
    for index in range(12):
        assert period_bounds(anchor, 1, index)[1] == period_bounds(anchor, 1, index + 1)[0]
    # Moving period by period on the anchor day gives the same ends as computing from the anchor.
    start = period_bounds(anchor, 1, 0)[0]
    for index in range(12):
        end = next_period_end(start, 1, 31)
        assert end == period_bounds(anchor, 1, index)[1]
        start = end


@pytest.mark.parametrize(
    ("moment", "expected"),
    [
        (at(2024, 1, 31), 0),  # the first instant belongs to the period it starts
        (at(2024, 2, 28, 23), 0),
        (at(2024, 2, 29), 1),  # half-open: the end belongs to the next period
        (at(2024, 3, 30, 23), 1),
        (at(2024, 3, 31), 2),
        (at(2025, 1, 30, 23), 11),
        (at(2025, 1, 31), 12),
        (at(2023, 6, 1), 0),  # before the anchor: the first period
    ],
)
def test_period_index_at_boundaries(moment: datetime, expected: int) -> None:
    assert period_index(date(2024, 1, 31), 1, moment) == expected


def test_period_index_for_yearly_plans() -> None:
    anchor = date(2024, 2, 29)
    assert period_index(anchor, 12, at(2025, 2, 27, 23)) == 0
    assert period_index(anchor, 12, at(2025, 2, 28)) == 1
    assert period_bounds(anchor, 12, 4) == (at(2028, 2, 29), at(2029, 2, 28))


def test_share_is_exact_and_rounding_is_half_up() -> None:
    start, end = at(2024, 2, 1), at(2024, 3, 1)  # 29 days
    assert share(at(2024, 2, 15), end, start, end) == Fraction(15, 29)
    assert share(start - timedelta(days=3), end + timedelta(days=3), start, end) == 1
    assert share(end, end + timedelta(days=1), start, end) == 0
    assert [round_half_up(Fraction(n, 2)) for n in (1, 3, -1, -3, 5)] == [1, 2, -1, -2, 3]
    assert round_half_up(Fraction(2499, 1000)) == 2


CATALOG = default_catalog()
FREE, PRO, BUSINESS = (CATALOG.plans[name] for name in ("free", "pro", "business"))


def test_the_shipped_catalog() -> None:
    assert CATALOG.currency == "USD" and CATALOG.default_plan == "free"
    assert (FREE.price, PRO.price, BUSINESS.price) == (0, 2900, 9900)
    assert (PRO.overage_per_document, FREE.overage_per_document) == (5, None)


def test_a_whole_period_on_one_plan_costs_its_price() -> None:
    start, end = at(2024, 2, 1), at(2024, 3, 1)
    draft = draft_invoice(CATALOG, [PlanChange("pro", start)], start, end, 1000)
    assert draft.total == 2900
    assert [(line.kind, line.amount) for line in draft.lines] == [("plan", 2900)]
    assert draft.documents_included == 1000 and draft.documents_over == 0
    assert draft.lines[0].description == "Pro plan, 2024-02-01 to 2024-03-01"


def test_overage_is_billed_per_document_beyond_the_quota() -> None:
    start, end = at(2024, 2, 1), at(2024, 3, 1)
    draft = draft_invoice(CATALOG, [PlanChange("pro", start)], start, end, 1237)
    assert [(line.kind, line.quantity, line.unit_amount, line.amount) for line in draft.lines] == [
        ("plan", 1, 2900, 2900),
        ("overage", 237, 5, 1185),
    ]
    assert draft.total == 4085 and draft.documents_over == 237


def test_a_plan_without_an_overage_price_does_not_bill_overage() -> None:
    start, end = at(2024, 2, 1), at(2024, 3, 1)
    draft = draft_invoice(CATALOG, [PlanChange("free", start)], start, end, 80)
    assert draft.total == 0 and draft.documents_over == 30
    assert [line.kind for line in draft.lines] == ["plan"]


def test_an_upgrade_mid_period_prorates_both_plans_by_time() -> None:
    # February 2024 has 29 days; Pro for 14 days, Business for 15.
    start, end = at(2024, 2, 1), at(2024, 3, 1)
    changes = [PlanChange("pro", start), PlanChange("business", at(2024, 2, 15))]
    draft = draft_invoice(CATALOG, changes, start, end, 0)
    exact = Fraction(2900 * 14, 29) + Fraction(9900 * 15, 29)
    assert [line.amount for line in draft.lines] == [1400, 5121]  # 1400 exactly; 5120.69
    assert draft.total == round_half_up(exact) == 6521
    assert "prorated 48.28% of the period" in draft.lines[0].description
    # Quota prorated too (rounded up): 1000·14/29 + 5000·15/29 = 3068.97 → 3069.
    assert draft.documents_included == 3069
    # The overage price is that of the plan in force at the end.
    over = draft_invoice(CATALOG, changes, start, end, 3100)
    assert over.lines[-1].quantity == 31 and over.lines[-1].unit_amount == 3


def test_a_downgrade_mid_period_costs_less_than_staying() -> None:
    start, end = at(2023, 2, 1), at(2023, 3, 1)  # 28 days
    changes = [PlanChange("business", start), PlanChange("pro", at(2023, 2, 8))]
    draft = draft_invoice(CATALOG, changes, start, end, 0)
    assert [line.amount for line in draft.lines] == [2475, 2175]  # 9900/4, 2900·3/4
    assert draft.total == 4650 < 9900


def test_lines_always_add_up_to_the_rounded_exact_total() -> None:
    # Many changes at awkward moments: each line is rounded cumulatively, so the total is the
    # exact proration rounded once, never off by the sum of per-line roundings.
    start, end = at(2024, 1, 31), at(2024, 2, 29)
    plans = ["pro", "business", "free", "pro", "business", "pro"]
    changes = [
        PlanChange(plan, start + timedelta(hours=7 * index**2, minutes=13 * index))
        for index, plan in enumerate(plans)
    ]
    draft = draft_invoice(CATALOG, changes, start, end, 0)
    exact = sum(
        CATALOG.plans[plan].price * share(s, e, start, end)
        for plan, s, e in segments(changes, start, end)
    )
    assert draft.total == round_half_up(Fraction(exact))
    assert sum(line.amount for line in draft.lines) == draft.total


def test_segments_merge_repeats_and_drop_empty_ones() -> None:
    start, end = at(2024, 4, 1), at(2024, 5, 1)
    changes = [
        PlanChange("free", start - timedelta(days=40)),  # in force since before the period
        PlanChange("pro", at(2024, 4, 10)),
        PlanChange("pro", at(2024, 4, 11)),  # no change of plan: same segment
        PlanChange("business", at(2024, 4, 20)),
        PlanChange("free", at(2024, 4, 20)),  # same instant: the last one wins
    ]
    assert segments(changes, start, end) == [
        ("free", start, at(2024, 4, 10)),
        ("pro", at(2024, 4, 10), at(2024, 4, 20)),
        ("free", at(2024, 4, 20), end),
    ]


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "plans.toml"
    path.write_text(text)
    return path


VALID = """
currency = "EUR"
default_plan = "solo"
[features]
ocr = "OCR"
[plans.solo]
name = "Solo"
price = "9.99"
documents_included = 100
overage_per_document = "0.10"
seats = 1
api_calls_included = 5000
storage_mb_included = 100
features = ["ocr"]
"""


def test_a_plans_file_replaces_the_catalog(tmp_path: Path) -> None:
    catalog = load_catalog(write(tmp_path, VALID))
    assert catalog.currency == "EUR" and catalog.default.price == 999
    assert catalog.default.overage_per_document == 10 and catalog.default.id == "solo"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('price = "9.99"', "price = 9.99"), "plans.solo.price: Value error, write money"),
        (('price = "9.99"', 'price = "9.999"'), "at most two decimal places"),
        (('default_plan = "solo"', 'default_plan = "team"'), "default_plan 'team' is not one"),
        (('features = ["ocr"]', 'features = ["sso"]'), "unknown feature(s) sso"),
        (("seats = 1", "seats = 0"), "plans.solo.seats"),
        (("seats = 1", "seats = 1\nsaets = 2"), "plans.solo.saets: Extra inputs"),
        (('currency = "EUR"', 'currency = "euro"'), "currency: String should match"),
        (("[plans.solo]", "[plans.Solo]"), "plans.Solo.id: String should match"),
        (('name = "Solo"', 'name = "Solo'), "not valid TOML"),
    ],
)
def test_a_bad_plans_file_is_refused_with_the_key_and_reason(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    with pytest.raises(PlanCatalogError) as raised:
        load_catalog(write(tmp_path, VALID.replace(old, new)))
    assert message in str(raised.value)
    assert str(tmp_path) in str(raised.value)


def test_a_missing_plans_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(PlanCatalogError, match="cannot read"):
        load_catalog(tmp_path / "nope.toml")


def test_settings_refuse_a_bad_plans_file_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.host.config import ConfigError, Settings

    bad = write(tmp_path, VALID.replace('price = "9.99"', "price = 9.99"))
    monkeypatch.setenv("FINCAP_BILLING_PLANS", str(bad))
    with pytest.raises(ConfigError, match=r"FINCAP_BILLING_PLANS: .*plans.solo.price"):
        Settings.from_env()
    monkeypatch.setenv("FINCAP_BILLING_PLANS", str(write(tmp_path, VALID)))
    assert Settings.from_env().plan_catalog().default_plan == "solo"
    monkeypatch.delenv("FINCAP_BILLING_PLANS")
    assert Settings().plan_catalog() is default_catalog()
