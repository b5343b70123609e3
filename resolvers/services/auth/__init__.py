"""Who may call, and how they get a credential: the OAuth 2.1 authorization server (``oauth``,
its clients' registration and holds in ``oauth_registration``, the dashboard's own first-party
client in ``oauth_first_party``), one-time sign-in links and the sign-in throttle, the
addresses behind a trusted proxy (``client_addresses``), and the operator's account actions
(``accounts``: bootstrap, workspaces, keys, demo data).

Checking a credential on every call is the framework's (``resolvers.framework.auth``, its
cache and the access-token lookup): ``invoke()`` authenticates before any room runs, and the
framework imports no room. This room issues what that check reads.
"""
