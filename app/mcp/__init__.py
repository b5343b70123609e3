"""The MCP face: ``POST /mcp`` (streamable HTTP, JSON-RPC 2.0), one tool per capability, behind
the OAuth face's tokens (``server``)."""

from __future__ import annotations

from app.mcp.server import mcp_routes

__all__ = ["mcp_routes"]
