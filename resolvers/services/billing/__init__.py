"""Billing periods: a workspace's subscription, its plan changes and charges
(``subscriptions``); the plan arithmetic is ``engines.billing``.
"""
