"""The embedded store's clean stop: it exits by itself (not killed after the grace), what was
acknowledged is there at the next start, and the port is free again."""

from __future__ import annotations

from pathlib import Path

import pymongo
import pytest

from persistence.embedded import EmbeddedServer

pytestmark = pytest.mark.wire


def test_a_stopped_store_exits_by_itself_and_keeps_what_it_acknowledged(tmp_path: Path) -> None:
    server = EmbeddedServer(storage=str(tmp_path / "db")).start()
    client: pymongo.MongoClient = pymongo.MongoClient(server.uri)
    try:
        client.fincap.notes.insert_one({"_id": "n1", "text": "kept"})
    finally:
        client.close()
    assert server.process is not None
    server.stop()
    # 0: SecantusDB's own exit after SIGTERM (its supervisor passes the status on); a kill
    # after the grace would be a signal's status.
    assert server.process.returncode == 0

    again = EmbeddedServer(storage=str(tmp_path / "db"), port=server.port).start()
    client = pymongo.MongoClient(again.uri)
    try:
        assert client.fincap.notes.find_one({"_id": "n1"}) == {"_id": "n1", "text": "kept"}
    finally:
        client.close()
        again.stop()
    assert again.process is not None and again.process.returncode == 0
