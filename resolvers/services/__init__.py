"""Long-lived work that capabilities, jobs and faces share, each behind its own module: the
services container (``container``), the processing pipeline (``pipeline``, its ``steps`` and
``contract``, ``processing``, ``recovery``), automation rules (``rule_runner``,
``rule_reading``), the OAuth authorization server (``oauth``, ``oauth_registration``,
``sign_in_throttle``, ``client_addresses``), billing periods (``subscriptions``), search
(``search_indexes``), sources (``inbound_email``, ``mailbox_connections``, ``sources_config``),
accounting (``integration_connections``, ``export_delivery``), ``thumbnails``, operator
``accounts``, and what several document capabilities share (``document_views``,
``document_edits``, ``preferences``).

Services use the framework, never a resource module (``tests/test_layers.py``).
"""
