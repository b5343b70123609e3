"""The face for people in a browser:

routes      ``/`` (landing), ``/api`` (the API reference), ``/app/`` (the dashboard) and
            its files
pages       the landing page and the API reference, rendered once at start-up
help        ``/help`` and ``/help/{id}``: the public help articles
dashboard/  the dashboard's plain JavaScript modules and stylesheet (no build step)
"""

from __future__ import annotations

from app.web.help import help_routes
from app.web.routes import web_routes

__all__ = ["help_routes", "web_routes"]
