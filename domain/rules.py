"""What the rule language (``engines.rules``) and the rule model (``schema.rules``) share."""

from __future__ import annotations

# What an automation rule about bank transactions (trigger transaction-matched) may do to the
# documents matched to a transaction: change their fields or tags. Archiving a receipt because
# its payment was matched, sending it on, notifying or holding it for approval are refused.
TRANSACTION_RULE_ACTIONS = ("set-category", "set-merchant", "mark-recurring", "add-tag")
