"""The MCP face: ``POST /mcp`` (streamable HTTP, JSON-RPC 2.0), one tool per capability, with
documents as resources and a few prompts, for OAuth tokens and API keys (``server``; the
modules beside it: ``tools``, ``schemas``, ``toolsets``, ``access``, ``identity``,
``resources``, ``prompts``, ``errors``)."""

from __future__ import annotations

from app.mcp.server import mcp_routes

__all__ = ["mcp_routes"]
