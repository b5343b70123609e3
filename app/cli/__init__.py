"""The ``fincap`` command line.

    root      the ``fincap`` group: ``serve``, ``worker``, the operator's ``admin`` and ``demo``
              commands (server side: they import the service only when run)
    commands  ``fincap <resource> <action>``, one command per capability, from the shipped
              discovery listing (``discovery.json``, kept equal to the registry by a test)
    account   ``fincap auth``, ``fincap workspace``, ``fincap doctor``
    upload    ``fincap files upload`` with a progress bar
    client    HTTP calls to a fincap server and what their failures mean (``error.reason``)
    config    ``~/.fincap/config.json`` and the environment that overrides it
    output    tables and JSON on a terminal

``fincap = app.cli:main`` (pyproject) and ``python -m app.cli`` both start ``root.main``.
"""

from __future__ import annotations

from app.cli.root import main

__all__ = ["main"]
