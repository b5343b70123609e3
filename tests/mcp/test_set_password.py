"""``fincap admin set-password`` on the embedded store: the hash is stored, the password works
on the sign-in check, short passwords and unknown users are refused."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app.cli import main
from persistence.client import connect
from persistence.embedded import shared_embedded_store
from persistence.store import Store
from resolvers.services.auth.oauth import sign_in
from tests.test_cli_serve import admin

pytestmark = pytest.mark.wire


def test_set_password_from_stdin(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    admin(data_dir, "bootstrap", "--email", "Pat@Example.com", "--workspace", "Pat Co")
    env = {"FINCAP_DATA_DIR": str(data_dir), "MONGODB_URI": ""}
    runner = CliRunner()

    def set_password(email: str, password: str) -> tuple[int, str]:
        done = runner.invoke(
            main, ["admin", "set-password", "--email", email], input=password + "\n", env=env
        )
        return done.exit_code, done.output

    # The three commands and the check join one store (as commands join a running `fincap
    # serve`); bootstrap above started its own, so both ways of reaching the store are used.
    # Each private start is a process of its own: three fewer of them (issue 36 item 7).
    with shared_embedded_store(data_dir, publish=True) as shared:
        code, output = set_password("pat@example.com", "short")
        assert code == 2 and "at least 10 characters" in output
        code, output = set_password("nobody@example.com", "long enough password")
        assert code == 2 and "No user with the email nobody@example.com" in output
        code, output = set_password("pat@example.com", "long enough password")
        assert code == 0, output
        assert json.loads(output)["passwordSet"] is True

        async def check() -> None:
            client, db = connect(shared.uri)
            try:
                store = Store(db)
                user = await store.users.find_by_email("pat@example.com")
                assert user is not None and user["passwordHash"].startswith("$argon2id$")
                signed_in = await sign_in(store, "PAT@example.com", "long enough password", "cli")
                assert signed_in is not None
                wrong = await sign_in(store, "pat@example.com", "wrong password!!", "cli-test")
                assert wrong is None
            finally:
                client.close()

        asyncio.run(check())
