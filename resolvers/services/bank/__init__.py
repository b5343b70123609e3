"""Bank transactions against documents: reconciliation (candidates and decisions over
``engines.reconciliation``), automatic matching after a statement arrives, and the
transactions' API views.
"""
