"""The capability machinery every face and every resource goes through:

    registry      ``@capability`` and the frozen registry; the OAuth scopes and their consent text
    invoke        ``invoke()``: look up, authenticate, resolve the workspace, check scopes and
                  roles, validate, gate for approval, run, validate the result
    context       who calls (``Credentials``, ``Principal``) and the ``Context`` a call runs in
    errors        the one error hierarchy every face maps by class (status, ``reason``)
    auth          API keys and OAuth access tokens to principals, workspaces to roles
    auth_cache    a short memory of both
    access_tokens what an OAuth access token is bound to, and finding a live one
    approval_gate a gated call stored for approval instead of run
    validation    pydantic's errors as one message naming each field
    job_kinds     ``@job_kind`` and the frozen job kinds (durable background work)
    cursors       signed pagination cursors
    throttle      expensive calls one at a time per key
    usage_meter   API calls counted in memory, flushed in batches
    services      the services container a call and a job receive, and the Protocols naming
                  the parts a service room implements (the event hub, the search indexes, …)
    sources_config  what the inbound sources read from the configuration

Nothing here imports ``resolvers.services`` or ``resolvers.resources``, not even for a type
hint (the ``resolvers-rooms`` contract counts those): the direction is resources → services →
framework.
"""
