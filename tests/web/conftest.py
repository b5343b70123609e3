"""The browser modules' shared server and browser, one per xdist worker (started by the first
module that asks for it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.web.shared_dashboard import SharedDashboard, shared_dashboard


@pytest.fixture(scope="session")
def dashboard(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SharedDashboard]:
    with shared_dashboard(tmp_path_factory) as shared:
        yield shared
