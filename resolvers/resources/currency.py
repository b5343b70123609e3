"""Capabilities of the currency resource."""

from __future__ import annotations

from engines.currency import NoRate, UnknownCurrency
from resolvers.framework.context import Context
from resolvers.framework.errors import BadRequest
from resolvers.framework.registry import capability
from schema.currency import Conversion, ConvertCurrency


@capability(
    "currency.convert",
    input=ConvertCurrency,
    output=Conversion,
    permissions=["read_currency"],
    effect="read",
    needs_workspace=False,
)
async def convert(ctx: Context, args: ConvertCurrency) -> Conversion:
    """Converts an amount between currencies at European Central Bank reference rates (1999 on):
    those of date (or the last before it), else the latest. The result states the rate and its
    day.
    """
    try:
        quote = ctx.services.rate_book().quote(args.fromCurrency, args.toCurrency, args.date)
    except UnknownCurrency as exc:
        raise BadRequest(f"Invalid request: {exc}") from None
    except NoRate as exc:
        raise BadRequest(f"Invalid request: date: {exc}") from None
    return Conversion(
        amount=args.amount,
        fromCurrency=quote.from_currency,
        toCurrency=quote.to_currency,
        convertedAmount=quote.convert(args.amount),
        rate=float(quote.rate),
        rateDate=quote.rate_date,
    )
