"""The keyring (signing and encryption per purpose) and where the server secret comes from."""

from __future__ import annotations

import base64
import logging
import stat
from pathlib import Path

import pytest

from app.host.config import Settings
from app.host.secret_key import SECRET_FILE, SecretKeyError, load_keyring
from engines.keyring import InvalidToken, Keyring, KeyringError, new_secret_text

SECRET = base64.b64encode(b"k" * 32).decode()  # standard alphabet with padding, as openssl prints


def test_signed_payload_round_trips_and_is_bound_to_its_purpose() -> None:
    keyring = Keyring.from_text(SECRET)
    token = keyring.sign("cursor", b'{"o":5}')
    assert keyring.verify("cursor", token) == b'{"o":5}'
    with pytest.raises(InvalidToken):
        keyring.verify("csrf", token)
    with pytest.raises(InvalidToken):
        Keyring.generate().verify("cursor", token)


@pytest.mark.parametrize(
    "forge",
    [
        lambda token: token.replace(
            token.split(".")[0], base64.urlsafe_b64encode(b'{"o":6}').decode().rstrip("=")
        ),
        lambda token: token[:-2] + ("AA" if not token.endswith("AA") else "BB"),
        lambda token: token.split(".")[0],
        lambda token: "%%%." + token.split(".")[1],
        lambda token: "",
    ],
)
def test_altered_tokens_are_refused(forge: object) -> None:
    keyring = Keyring.from_text(SECRET)
    token = keyring.sign("cursor", b'{"o":5}')
    with pytest.raises(InvalidToken):
        keyring.verify("cursor", forge(token))  # type: ignore[operator]


def test_encryption_is_authenticated_and_bound_to_purpose_and_record() -> None:
    keyring = Keyring.from_text(SECRET)
    sealed = keyring.encrypt("integration-token", b"xero-refresh-token", b"org_1/int_1")
    assert b"xero" not in base64.urlsafe_b64decode(sealed + "==")
    assert keyring.encrypt("integration-token", b"x") != keyring.encrypt("integration-token", b"x")
    assert keyring.decrypt("integration-token", sealed, b"org_1/int_1") == b"xero-refresh-token"
    with pytest.raises(InvalidToken):
        keyring.decrypt("integration-token", sealed, b"org_2/int_1")  # moved to another record
    with pytest.raises(InvalidToken):
        keyring.decrypt("mailbox-password", sealed, b"org_1/int_1")
    tampered = bytearray(base64.urlsafe_b64decode(sealed + "=" * (-len(sealed) % 4)))
    tampered[-1] ^= 1
    with pytest.raises(InvalidToken):
        keyring.decrypt(
            "integration-token",
            base64.urlsafe_b64encode(bytes(tampered)).decode(),
            b"org_1/int_1",
        )
    with pytest.raises(InvalidToken):
        keyring.decrypt("integration-token", "not base64 at all!")


def test_rotation_accepts_the_previous_secret_and_uses_the_new_one() -> None:
    old = Keyring.from_text(SECRET)
    token, sealed = old.sign("cursor", b"p"), old.encrypt("secret", b"s")
    new_secret = new_secret_text()
    rotated = Keyring.from_text(f"{new_secret}, {SECRET}")
    assert rotated.verify("cursor", token) == b"p"
    assert rotated.decrypt("secret", sealed) == b"s"
    fresh = rotated.sign("cursor", b"p")
    assert Keyring.from_text(new_secret).verify("cursor", fresh) == b"p"
    with pytest.raises(InvalidToken):
        old.verify("cursor", fresh)


@pytest.mark.parametrize(
    ("text", "reason"),
    [("", "empty"), ("c2hvcnQ=", "at least 32"), ("not*base64*at*all" * 4, "not base64")],
)
def test_malformed_secrets_are_refused(text: str, reason: str) -> None:
    with pytest.raises(KeyringError, match=reason):
        Keyring.from_text(text)


def test_generated_key_file_is_private_and_kept_across_restarts(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    first = load_keyring(settings)
    path = tmp_path / "data" / SECRET_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    token = first.sign("cursor", b"page 2")
    assert load_keyring(settings).verify("cursor", token) == b"page 2"  # "after a restart"
    assert [p.name for p in path.parent.iterdir()] == [SECRET_FILE]  # no draft left behind


def test_configured_secret_wins_and_bad_ones_name_the_variable(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, secret_key=SECRET)
    assert load_keyring(settings).verify("c", Keyring.from_text(SECRET).sign("c", b"x")) == b"x"
    assert not (tmp_path / SECRET_FILE).exists()
    with pytest.raises(SecretKeyError, match="FINCAP_SECRET_KEY"):
        load_keyring(Settings(data_dir=tmp_path, secret_key="short"))


def test_shared_database_without_a_secret_logs_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="fincap.secrets"):
        load_keyring(Settings(data_dir=tmp_path, mongodb_uri="mongodb://db.example:27017/x"))
    assert any("FINCAP_SECRET_KEY is not set" in r.getMessage() for r in caplog.records)
    with caplog.at_level(logging.WARNING, logger="fincap.secrets"):
        caplog.clear()
        load_keyring(Settings(data_dir=tmp_path))
    assert not caplog.records
