"""Automation rules at run time: reading a sentence into a rule off the event loop
(``rule_reading``), running rules on documents and transactions (``rule_runner``), and the tags
rules and documents share (``tagging``). The rule language itself is ``engines.rules``.
"""
