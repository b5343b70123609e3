"""The plan catalog: what each plan costs, includes and allows, read from a TOML file.

The default catalog ships with the package (``plans.toml`` beside this module); an operator
points ``FINCAP_BILLING_PLANS`` at a file of the same format to bill differently. The file is
validated with pydantic when the service starts, so a typo stops it with the key and the reason
instead of surfacing as a wrong invoice a month later. Prices are decimal strings with at most
two places and become integer cents here: every later computation is on integers.
"""

from __future__ import annotations

import functools
import re
import tomllib
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

DEFAULT_PLANS_FILE = "plans.toml"
MONEY_PATTERN = re.compile(r"^[0-9]{1,9}(\.[0-9]{1,2})?$")
ID_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"


class PlanCatalogError(ValueError):
    """A plans file that cannot be read or does not validate; the message says where."""


def _cents(value: Any) -> int:
    """``"29.00"`` → 2900. Only decimal strings: a TOML float (29.99) is not exact."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValueError('write money as a decimal string such as "29.00"')
    text = str(value)
    if not MONEY_PATTERN.match(text):
        raise ValueError(f"{text!r} is not an amount with at most two decimal places")
    try:
        return int(Decimal(text) * 100)
    except InvalidOperation as exc:  # pragma: no cover - the pattern rules it out
        raise ValueError(str(exc)) from None


Cents = Annotated[int, BeforeValidator(_cents)]


class Plan(BaseModel):
    """One plan of the catalog (its id is the key it is filed under)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(default="", pattern=r"^$|" + ID_PATTERN)
    name: str = Field(min_length=1, max_length=80)
    price: Cents = Field(description="price per period, in cents")
    interval: Literal["month", "year"] = "month"
    documents_included: int = Field(ge=0)
    overage_per_document: Cents | None = Field(
        default=None, description="cents per document beyond the quota; None: not billed"
    )
    seats: int = Field(ge=1)
    api_calls_included: int = Field(ge=0)
    storage_mb_included: int = Field(ge=0)
    features: tuple[str, ...] = ()

    @property
    def months(self) -> int:
        """Length of one period in months."""
        return 12 if self.interval == "year" else 1


class PlanCatalog(BaseModel):
    """Every plan, the features they may include, the currency and the plan new workspaces get."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    currency: str = Field(pattern=r"^[A-Z]{3}$")
    default_plan: str
    features: dict[str, str] = Field(default_factory=dict)
    plans: dict[str, Plan] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _ids_from_keys(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("plans"), dict):
            plans = {
                key: {**value, "id": key} if isinstance(value, dict) else value
                for key, value in data["plans"].items()
            }
            data = {**data, "plans": plans}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> PlanCatalog:
        for key in self.plans:
            if not re.match(ID_PATTERN, key):
                raise ValueError(f"plan id {key!r} must be lowercase letters, digits, - or _")
        if self.default_plan not in self.plans:
            raise ValueError(
                f"default_plan {self.default_plan!r} is not one of the plans "
                f"({', '.join(sorted(self.plans))})"
            )
        for plan in self.plans.values():
            unknown = [name for name in plan.features if name not in self.features]
            if unknown:
                raise ValueError(
                    f"plan {plan.id!r} names unknown feature(s) {', '.join(unknown)}; "
                    "declare them under [features]"
                )
        return self

    def get(self, plan_id: str) -> Plan | None:
        return self.plans.get(plan_id)

    @property
    def default(self) -> Plan:
        return self.plans[self.default_plan]


def load_catalog(path: Path | None = None) -> PlanCatalog:
    """The catalog in ``path`` (TOML), or the one shipped with fincap when ``path`` is None.

    Raises ``PlanCatalogError`` naming the file, the key and the reason.
    """
    where = str(path) if path is not None else "the default plans"
    try:
        if path is None:
            text = resources.files(__package__).joinpath(DEFAULT_PLANS_FILE).read_text("utf-8")
        else:
            text = path.read_text("utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise PlanCatalogError(f"{where}: cannot read ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PlanCatalogError(f"{where}: not valid TOML ({exc})") from None
    try:
        return PlanCatalog.model_validate(data)
    except ValidationError as exc:
        reasons = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'file'}: {error['msg']}"
            for error in exc.errors()
        )
        raise PlanCatalogError(f"{where}: {reasons}") from None


@functools.cache
def default_catalog() -> PlanCatalog:
    """The catalog shipped with fincap (read once per process)."""
    return load_catalog(None)
