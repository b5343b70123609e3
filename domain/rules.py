"""What the rule language (``engines.rules``) and the rule model (``schema.rules``) share."""

from __future__ import annotations

from typing import Literal, get_args

from domain.vocabulary import vocabulary

# The days a weekly schedule may run on, Monday first (``date.weekday()``'s order: Monday is 0).
Weekday = Literal["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
WEEKDAYS = vocabulary(Weekday, {day: day.capitalize() for day in get_args(Weekday)})
# Each day's number in ``date.weekday()``'s count.
WEEKDAY_NUMBERS: dict[str, int] = {day: number for number, day in enumerate(WEEKDAYS)}

# What an automation rule about bank transactions (trigger transaction-matched) may do to the
# documents matched to a transaction: change their fields or tags. Archiving a receipt because
# its payment was matched, sending it on, notifying or holding it for approval are refused.
TRANSACTION_RULE_ACTIONS = ("set-category", "set-merchant", "mark-recurring", "add-tag")
