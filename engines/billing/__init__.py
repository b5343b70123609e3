"""Billing arithmetic with no database and no transport: the plan catalog, billing periods,
and invoices computed from plan segments and usage, in integer cents."""
