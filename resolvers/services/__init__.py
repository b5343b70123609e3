"""Long-lived work that capabilities, jobs and faces share, in one room per subsystem:

    auth          the OAuth authorization server, sign-in links and throttle, client addresses,
                  the operator's account actions
    processing    intake, inbound email, the pipeline and its steps, the analyzer, thumbnails,
                  reprocessing, recovery, the free-space floor
    rules         automation rules at run time, reading a sentence into a rule, tags
    bank          reconciliation, automatic matching, the transactions' views
    events        the live event hub, its filters, the live streams' authorization
    connections   accounting connections, export delivery, connected mailboxes
    billing       billing periods
    documents     document views and edit entries, preferences, ranked search's indexes

Rooms import downwards only (the ``service-rooms`` contract in ``pyproject.toml``): auth over
processing and bank, over rules, events, connections and billing, over documents. Services use
the framework, never a resource module (``resolvers-rooms``); the services container is the
framework's (``resolvers.framework.services``).
"""
