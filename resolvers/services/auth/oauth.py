"""The OAuth 2.1 authorization server: clients, codes, tokens, passwords, pending requests.

``AuthorizationServer`` implements the MCP SDK's provider interface; the SDK's handlers parse
and check the HTTP requests (PKCE S256, exact redirect URIs, client authentication) and call
it. Decisions (docs/api/mcp.md):

- access tokens ``fat_…`` live 1 hour, refresh tokens ``frt_…`` 30 days, codes ``fac_…`` 5
  minutes; all carry 256 random bits and are stored as SHA-256 digests only;
- a token is bound to one user, one workspace, its scopes and its client; every call checks
  the membership again, so removing a member ends their tokens' access at once;
- a refresh token is rotated on use; presenting a rotated one again (a stolen copy, or a
  replay) revokes its whole family, as does a second exchange of one code;
- revoking either token of a family (RFC 7009) ends the whole family;
- a grant is bound to the resource the client named (RFC 8707 ``resource``: this service, or
  a path under it such as ``/mcp``; the whole service when none is named), and a token is
  refused where it is presented outside that resource (``resource_covers``);
- registration is bounded (``resolvers.services.auth.oauth_registration``) and sign-in throttled
  (``resolvers.services.auth.sign_in_throttle``); password hashes are checked one at a time in a
  thread of their own (argon2 takes ~0.1 s of CPU and 64 MB each).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from mcp.server.auth.provider import (
    AuthorizationCode,
    AuthorizationParams,
    IdentityAssertionParams,
    RegistrationError,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from mcp.shared.auth_utils import resource_url_from_server_url
from pydantic import AnyUrl, ValidationError

from engines.keyring import InvalidToken, Keyring
from persistence.ids import new_id, utcnow
from persistence.store import Store
from resolvers.framework.access_tokens import (
    ACCESS_PREFIX,
    FincapAccessToken,
    FincapRefreshToken,
    bound_fields,
    epoch,
    find_access_token,
)
from resolvers.framework.errors import BadRequest, NotFound
from resolvers.services.auth import sign_in_throttle
from resolvers.services.auth.oauth_first_party import DASHBOARD_CLIENT_ID, ensure_dashboard_client
from resolvers.services.auth.oauth_registration import redirect_uri_problem, unused_until
from resolvers.services.auth.sign_in_throttle import SignInThrottled

REFRESH_PREFIX = "frt_"
CODE_PREFIX = "fac_"
ACCESS_TOKEN_TTL = timedelta(hours=1)
REFRESH_TOKEN_TTL = timedelta(days=30)
CODE_TTL = timedelta(minutes=5)
PENDING_TTL = timedelta(minutes=15)  # from the client's redirect to the user's consent
REQUEST_PURPOSE = "oauth-authorization-request"

_hasher = PasswordHasher()
# One password check at a time per process: each takes 64 MB and ~0.1 s of a core, so a burst
# of sign-ins queues here instead of growing memory or taking every core from the API.
_hashing = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argon2")
# Client addresses (digests) with a password being checked now, in this process.
_hashing_for: set[str] = set()


def hash_password(password: str) -> str:
    """The argon2id hash of a password (argon2-cffi's default parameters)."""
    return _hasher.hash(password)


def password_matches(password_hash: str | None, password: str) -> bool:
    if not password_hash:
        # Same work as a real check, so the answer's timing does not tell unknown emails apart.
        _hasher.hash(password)
        return False
    try:
        return _hasher.verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


def password_problem(password: str) -> str | None:
    """Why ``password`` may not be set (None: it may), as ``set_password`` would refuse it."""
    if len(password) < 10:
        return "password: use at least 10 characters"
    if len(password) > 1024:
        return "password: at most 1024 characters"
    return None


async def set_password(store: Store, email: str, password: str) -> dict[str, Any]:
    """Give an existing user a password (``fincap admin set-password``)."""
    problem = password_problem(password)
    if problem is not None:
        raise BadRequest(problem)
    user = await store.users.find_by_email(email)
    if user is None:
        raise NotFound(f"No user with the email {email.strip().lower()}")
    await store.users.set_password_hash(user["_id"], hash_password(password))
    return {"userId": user["_id"], "passwordSet": True}


async def sign_in(store: Store, email: str, password: str, address: str) -> dict[str, Any] | None:
    """The user whose email and password these are, or None. ``SignInThrottled`` (before any
    hashing) while the account or the client ``address`` (``client_addresses``) must wait, or
    while another attempt from that address is being hashed: an address holds one place in
    the hashing queue at a time, so a burst from one address does not queue ahead of another
    person's sign-in."""
    if address in _hashing_for:
        raise SignInThrottled(utcnow() + timedelta(seconds=1))
    _hashing_for.add(address)
    try:
        admitted = await sign_in_throttle.admit(store, email, address)
        user = await store.users.find_by_email(email)
        # argon2 takes ~0.1 s of CPU by design: off the event loop, in the one hashing thread.
        # An unknown account costs the same hashing, so timing does not tell accounts apart.
        matches = await asyncio.get_running_loop().run_in_executor(
            _hashing, password_matches, user.get("passwordHash") if user else None, password
        )
    finally:
        _hashing_for.discard(address)
    if not matches:
        await sign_in_throttle.failed(store, admitted)  # counted when it was admitted
        return None
    await sign_in_throttle.succeeded(store, email, admitted)
    return user


def canonical_resource(resource: str) -> str:
    """A resource indicator as compared and stored (lower-case scheme and host, no fragment,
    no trailing slash)."""
    return resource_url_from_server_url(resource).rstrip("/")


class FincapCode(AuthorizationCode):
    user_id: str
    workspace_id: str


class PendingRequest(AuthorizationParams):
    """An authorization request between the client's redirect and the user's consent.

    It travels signed inside the sign-in and consent pages (nothing is stored until the user
    consents), and expires after ``PENDING_TTL``.
    """

    client_id: str
    client_name: str | None = None
    expires_at: float
    # ``prompt=consent``: show the consent page even when this consent is remembered.
    ask_consent: bool = False


def _expiry(ttl: timedelta) -> tuple[datetime, int]:
    moment = utcnow() + ttl
    return moment, int(moment.timestamp())


class AuthorizationServer:
    """The SDK's ``OAuthAuthorizationServerProvider`` over fincap's store."""

    def __init__(
        self,
        store: Store,
        keyring: Keyring,
        sign_in_path: str,
        *,
        client_address: str = "",
        base_url: str = "",
    ) -> None:
        self.store = store
        self.keyring = keyring
        self.sign_in_path = sign_in_path
        # The digest of the address a registration comes from (``client_addresses``).
        self.client_address = client_address
        # The service's public address: the dashboard client's redirect URI is on it.
        self.base_url = base_url

    async def revoke_family(self, family_id: str) -> None:
        """End every token of one authorization (the auth cache hears of it from the store)."""
        await self.store.oauth_tokens.revoke_family(family_id)

    # Clients -------------------------------------------------------------------------------

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        metadata: dict[str, Any] | None
        if client_id == DASHBOARD_CLIENT_ID and self.base_url:
            # First-party: stored on first use, kept on this server's address.
            metadata = await ensure_dashboard_client(self.store, self.base_url)
        else:
            metadata = await self.store.oauth_clients.get(client_id)
        if metadata is None:
            return None
        try:
            return OAuthClientInformationFull.model_validate(metadata)
        except ValidationError:
            return None

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        """Store a client whose redirect URIs are allowed (``redirect_uri_problem``); it is
        removed unless a user consents to it within a day. The bounds on its size and the
        rate limit were applied before the SDK parsed it (``app.oauth.endpoints.register``)."""
        if client_info.client_id is None:
            raise RegistrationError("invalid_client_metadata", "client_id is missing")
        for uri in client_info.redirect_uris or ():
            problem = redirect_uri_problem(uri)
            if problem is not None:
                raise RegistrationError("invalid_redirect_uri", f"{uri}: {problem}")
        await self.store.oauth_clients.create(
            client_info.client_id,
            client_info.model_dump(mode="json", exclude_none=True),
            registered_from=self.client_address,
            unused_until=unused_until(),
        )

    # Authorization requests ----------------------------------------------------------------

    async def authorize(
        self,
        client: OAuthClientInformationFull,
        params: AuthorizationParams,
        *,
        ask_consent: bool = False,
    ) -> str:
        """Send the user to the sign-in page, carrying the request signed."""
        pending = PendingRequest(
            **params.model_dump(),
            client_id=str(client.client_id),
            client_name=client.client_name,
            expires_at=time.time() + PENDING_TTL.total_seconds(),
            ask_consent=ask_consent,
        )
        if not pending.scopes:
            pending.scopes = (client.scope or "").split() or ["all"]
        return f"{self.sign_in_path}?request={self.seal(pending)}"

    def seal(self, pending: PendingRequest) -> str:
        return self.keyring.sign(REQUEST_PURPOSE, pending.model_dump_json().encode())

    def unseal(self, sealed: str) -> PendingRequest | None:
        """The pending request of a page's hidden field, or None when forged or expired."""
        try:
            pending = PendingRequest.model_validate_json(
                self.keyring.verify(REQUEST_PURPOSE, sealed)
            )
        except (InvalidToken, ValidationError, ValueError):
            return None
        return pending if pending.expires_at > time.time() else None

    async def grant_code(
        self,
        pending: PendingRequest,
        user_id: str,
        workspace_id: str,
        scopes: list[str] | None = None,
    ) -> str:
        """The user consented: a single-use code for the client, for ``scopes`` (default: the
        ones it asked for)."""
        code = CODE_PREFIX + secrets.token_urlsafe(32)
        expires_at, _ = _expiry(CODE_TTL)
        await self.store.oauth_codes.create(
            code,
            {
                "clientId": pending.client_id,
                "userId": user_id,
                "workspaceId": workspace_id,
                "scopes": pending.scopes if scopes is None else scopes,
                "codeChallenge": pending.code_challenge,
                "redirectUri": str(pending.redirect_uri),
                "redirectUriExplicit": pending.redirect_uri_provided_explicitly,
                "resource": pending.resource,
                "familyId": new_id("fam"),
            },
            expires_at,
        )
        await self.store.oauth_clients.mark_used(pending.client_id)
        return code

    # Codes ---------------------------------------------------------------------------------

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> FincapCode | None:
        record = await self.store.oauth_codes.get(authorization_code)
        if record is None or record["clientId"] != client.client_id:
            return None
        if record["usedAt"] is not None:
            # A code exchanged twice: whoever holds it now may be an attacker, so the tokens
            # of the first exchange end too (RFC 6749 §4.1.2).
            await self.revoke_family(record["familyId"])
            return None
        return FincapCode(
            code=authorization_code,
            scopes=record["scopes"],
            expires_at=float(epoch(record["expiresAt"])),
            client_id=record["clientId"],
            code_challenge=record["codeChallenge"],
            redirect_uri=AnyUrl(record["redirectUri"]),
            redirect_uri_provided_explicitly=record["redirectUriExplicit"],
            resource=record.get("resource"),
            subject=record["userId"],
            user_id=record["userId"],
            workspace_id=record["workspaceId"],
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: FincapCode
    ) -> OAuthToken:
        record = await self.store.oauth_codes.consume(authorization_code.code)
        if record is None:  # exchanged by a concurrent request a moment ago
            raise TokenError("invalid_grant", "authorization code was already used")
        return await self._issue(record, record["scopes"])

    # Tokens --------------------------------------------------------------------------------

    async def _issue(self, grant: dict[str, Any], scopes: list[str]) -> OAuthToken:
        access = ACCESS_PREFIX + secrets.token_urlsafe(32)
        refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
        bound = {
            "familyId": grant["familyId"],
            "clientId": grant["clientId"],
            "userId": grant["userId"],
            "workspaceId": grant["workspaceId"],
            "scopes": list(scopes),
            "resource": grant.get("resource"),
        }
        access_expires, _ = _expiry(ACCESS_TOKEN_TTL)
        refresh_expires, _ = _expiry(REFRESH_TOKEN_TTL)
        await self.store.oauth_tokens.create(access, "access", bound, access_expires)
        await self.store.oauth_tokens.create(refresh, "refresh", bound, refresh_expires)
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=int(ACCESS_TOKEN_TTL.total_seconds()),
            refresh_token=refresh,
            scope=" ".join(scopes),
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> FincapRefreshToken | None:
        if not refresh_token.startswith(REFRESH_PREFIX):
            return None
        record = await self.store.oauth_tokens.find(refresh_token, "refresh")
        if record is None or record["clientId"] != client.client_id:
            return None
        if record["rotatedAt"] is not None:
            # Reuse of a rotated refresh token: two parties hold the family. End it.
            await self.revoke_family(record["familyId"])
            return None
        if record["revokedAt"] is not None:
            return None
        return FincapRefreshToken(token=refresh_token, **bound_fields(record))

    async def exchange_refresh_token(
        self,
        client: OAuthClientInformationFull,
        refresh_token: FincapRefreshToken,
        scopes: list[str],
    ) -> OAuthToken:
        if not await self.store.oauth_tokens.rotate(refresh_token.token):
            await self.revoke_family(refresh_token.family_id)
            raise TokenError("invalid_grant", "refresh token was already used")
        grant = {
            "familyId": refresh_token.family_id,
            "clientId": refresh_token.client_id,
            "userId": refresh_token.user_id,
            "workspaceId": refresh_token.workspace_id,
            "resource": refresh_token.resource,
        }
        return await self._issue(grant, scopes)

    async def load_access_token(self, token: str) -> FincapAccessToken | None:
        return await find_access_token(self.store, token)

    async def exchange_identity_assertion(
        self, client: OAuthClientInformationFull, params: IdentityAssertionParams
    ) -> OAuthToken:
        """Enterprise identity assertions (SEP-990) are not offered: the grant is not
        advertised, and the SDK refuses it before calling here."""
        raise TokenError("unsupported_grant_type", "identity assertions are not supported")

    async def revoke_token(self, token: FincapAccessToken | FincapRefreshToken) -> None:
        """Revoking a grant also takes back the remembered consent: the next sign-in through
        this client asks again. Not for the dashboard: its revocation is a person signing out,
        and their next sign-in goes back to the workspace they chose (the dashboard asks with
        ``prompt=consent`` to choose another one)."""
        await self.revoke_family(token.family_id)
        if token.client_id != DASHBOARD_CLIENT_ID:
            await self.store.oauth_consents.forget(token.user_id, token.client_id)
