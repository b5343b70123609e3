"""The server's keys: one secret in, a separate subkey per purpose out.

A ``Keyring`` holds the server secret (``FINCAP_SECRET_KEY``, or the key ``fincap serve`` keeps in
its data directory) and derives, with HKDF-SHA256, one subkey per *purpose* and operation, so
that a value signed as a pagination cursor can never pass as a CSRF token, and a compromised
ciphertext of one purpose says nothing about another. It offers two things:

- ``sign(purpose, payload)`` / ``verify(purpose, token)``: a token that carries the payload
  readably (base64url) with an HMAC-SHA256 tag. For data the server hands out and must get back
  unchanged: cursors, CSRF tokens, OAuth ``state``. A payload that must expire carries its own
  expiry; ``verify`` only proves the server made it.
- ``encrypt(purpose, plaintext)`` / ``decrypt(purpose, token)``: AES-256-GCM (authenticated),
  for secrets at rest such as integration tokens and mailbox passwords. ``associated_data``
  binds a ciphertext to its record (e.g. the workspace and integration id), so it cannot be
  copied onto another record.

Rotation: a keyring may hold earlier secrets after the current one. Signing and encryption use the
current secret only; verification and decryption accept any of them, so values made before a
rotation stay readable until they are re-made.

No transport, no database: the app builds one keyring at start-up and hands it to handlers as
``ctx.services.keyring``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import secrets
from collections.abc import Sequence

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

MIN_SECRET_BYTES = 32
# Version byte of the ciphertext layout below, so that a later layout can be told apart.
_CIPHER_VERSION = b"\x01"
_KEY_ID_BYTES = 4
_NONCE_BYTES = 12


class KeyringError(ValueError):
    """The server secret is malformed (too short, not base64)."""


class InvalidToken(ValueError):
    """A signed token or ciphertext was not made by this keyring (or was altered)."""


def _b64encode(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _b64decode(text: str) -> bytes:
    # Both alphabets are accepted (`openssl rand -base64 32` prints the standard one); any
    # other character is an error rather than silently skipped.
    standard = text.strip().replace("-", "+").replace("_", "/").rstrip("=")
    if not standard.isascii():
        raise ValueError("not base64")
    return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)


def parse_secret(text: str) -> bytes:
    """The bytes of one secret written as base64 (either alphabet, padding optional)."""
    try:
        raw = _b64decode(text)
    except (binascii.Error, ValueError):
        raise KeyringError(
            "the secret key is not base64 (generate one with `openssl rand -base64 32`)"
        ) from None
    if len(raw) < MIN_SECRET_BYTES:
        raise KeyringError(
            f"the secret key has {len(raw)} bytes; at least {MIN_SECRET_BYTES} random bytes "
            "are needed (generate one with `openssl rand -base64 32`)"
        )
    return raw


def new_secret_text() -> str:
    """A fresh random secret in the format ``FINCAP_SECRET_KEY`` takes."""
    return _b64encode(secrets.token_bytes(MIN_SECRET_BYTES))


class _Secret:
    """One secret and the subkeys derived from it, derived once each."""

    def __init__(self, raw: bytes) -> None:
        self._raw = raw
        self._derived: dict[bytes, bytes] = {}
        # Identifies the secret inside ciphertexts without revealing anything about it.
        self.key_id = hashlib.sha256(b"fincap key id\x00" + raw).digest()[:_KEY_ID_BYTES]

    def subkey(self, operation: str, purpose: str) -> bytes:
        info = f"fincap/{operation}/{purpose}".encode()
        key = self._derived.get(info)
        if key is None:
            key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(self._raw)
            self._derived[info] = key
        return key


class Keyring:
    """Per-purpose signing and encryption keys derived from the server secret."""

    def __init__(self, secret: bytes, previous: Sequence[bytes] = ()) -> None:
        for raw in (secret, *previous):
            if len(raw) < MIN_SECRET_BYTES:
                raise KeyringError(f"a secret key needs at least {MIN_SECRET_BYTES} bytes")
        self._secrets = [_Secret(secret), *(_Secret(raw) for raw in previous)]

    @classmethod
    def from_text(cls, text: str) -> Keyring:
        """The keyring of ``FINCAP_SECRET_KEY``: base64 secrets separated by commas, the
        current one first (the others are only accepted, during a rotation)."""
        parts = [part for part in (p.strip() for p in text.split(",")) if part]
        if not parts:
            raise KeyringError("the secret key is empty")
        current, *previous = (parse_secret(part) for part in parts)
        return cls(current, previous)

    @classmethod
    def generate(cls) -> Keyring:
        """A keyring with a random secret that lives as long as the object (tests, one-offs)."""
        return cls(os.urandom(MIN_SECRET_BYTES))

    # Signing -------------------------------------------------------------------------------

    def sign(self, purpose: str, payload: bytes) -> str:
        """A URL-safe token carrying ``payload`` (readable, not secret) and its HMAC tag."""
        tag = self._tag(self._secrets[0], purpose, payload)
        return f"{_b64encode(payload)}.{_b64encode(tag)}"

    def verify(self, purpose: str, token: str) -> bytes:
        """The payload of a token ``sign(purpose, …)`` made; ``InvalidToken`` otherwise."""
        encoded_payload, dot, encoded_tag = token.rpartition(".")
        if not dot:
            raise InvalidToken("not a signed token")
        try:
            payload, tag = _b64decode(encoded_payload), _b64decode(encoded_tag)
        except (binascii.Error, ValueError):
            raise InvalidToken("not a signed token") from None
        for secret in self._secrets:
            if hmac.compare_digest(tag, self._tag(secret, purpose, payload)):
                return payload
        raise InvalidToken("the signature does not match")

    @staticmethod
    def _tag(secret: _Secret, purpose: str, payload: bytes) -> bytes:
        return hmac.new(secret.subkey("sign", purpose), payload, hashlib.sha256).digest()

    # Encryption ----------------------------------------------------------------------------

    def encrypt(self, purpose: str, plaintext: bytes, associated_data: bytes = b"") -> str:
        """AES-256-GCM ciphertext of ``plaintext`` as URL-safe text (version, key id, nonce,
        ciphertext and tag). ``associated_data`` is authenticated, not stored: ``decrypt``
        needs the same value."""
        secret = self._secrets[0]
        nonce = os.urandom(_NONCE_BYTES)
        sealed = AESGCM(secret.subkey("encrypt", purpose)).encrypt(
            nonce, plaintext, associated_data
        )
        return _b64encode(_CIPHER_VERSION + secret.key_id + nonce + sealed)

    def decrypt(self, purpose: str, token: str, associated_data: bytes = b"") -> bytes:
        """The plaintext of ``encrypt(purpose, …, associated_data)``; ``InvalidToken`` when the
        text was altered, made for another purpose or record, or by an unknown secret."""
        try:
            raw = _b64decode(token)
        except (binascii.Error, ValueError):
            raise InvalidToken("not a ciphertext") from None
        header = 1 + _KEY_ID_BYTES + _NONCE_BYTES
        if len(raw) <= header or raw[:1] != _CIPHER_VERSION:
            raise InvalidToken("not a ciphertext of this keyring")
        key_id = raw[1 : 1 + _KEY_ID_BYTES]
        nonce, sealed = raw[1 + _KEY_ID_BYTES : header], raw[header:]
        for secret in self._secrets:
            if secret.key_id != key_id:
                continue
            try:
                return AESGCM(secret.subkey("encrypt", purpose)).decrypt(
                    nonce, sealed, associated_data
                )
            except InvalidTag:
                break
        raise InvalidToken("the ciphertext cannot be decrypted with this keyring")
