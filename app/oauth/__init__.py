"""The OAuth 2.1 face under ``/v1/oauth``, for MCP clients:

endpoints  registration, authorization, the sign-in and consent steps, token, revocation
metadata   the paths, and the RFC 8414 / RFC 9728 metadata documents
forms      CSRF and session cookies, pages that are never framed nor cached
pages      the HTML a person sees (sign in, choose the workspace, consent)
"""

from __future__ import annotations

from app.oauth.endpoints import oauth_routes

__all__ = ["oauth_routes"]
