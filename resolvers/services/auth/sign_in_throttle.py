"""The sign-in throttle: password guessing slows down per account and per address.

Failures are counted per account (the e-mail typed, whether or not such an account exists, so
the answer does not tell) and per client address (``client_addresses``). Up to
``ACCOUNT_FREE_FAILURES`` (account) or ``ADDRESS_FREE_FAILURES`` (address; shared offices sit
behind one address) failures in a row cost nothing; each further one makes the key wait twice
as long as the last, from 1 second up to ``MAX_WAIT``. While a key waits, a sign-in is answered
429 with the time to try again, before any password is hashed. A successful sign-in ends the
account's run; a run also ends ``RUN_FORGOTTEN_AFTER`` after its last failure. An address's run
is not ended by one success (an attacker's own account would otherwise reset it).

The cost for a guesser: 5 free guesses, then 1 + 2 + 4 + … seconds; after 15 failures one
guess per quarter of an hour. The cost for the account's owner under such an attack: at most a
quarter of an hour's wait, never a lock-out.

It holds under concurrency: an attempt is counted, and the wait it would start is set, in one
compare-and-set write per key *before* its password is hashed (``SignInFailures.admit``); a
success gives the count back. So 100 guesses sent at once are 5 hashed and 95 answered 429 (they
were all hashed, the lock being read before the hash and the failures counted after). The wait
is bounded before it is computed (``2 ** n`` seconds overflowed from the 52nd failure).
"""

from __future__ import annotations

import functools
import hashlib
import math
from datetime import datetime, timedelta

from persistence.ids import utcnow
from persistence.sign_in_failures import Admission
from persistence.store import Store

ACCOUNT_FREE_FAILURES = 5
ADDRESS_FREE_FAILURES = 20
MAX_WAIT = timedelta(minutes=15)
RUN_FORGOTTEN_AFTER = timedelta(hours=1)


class SignInThrottled(Exception):
    """Too many failed sign-ins: wait until ``until`` (``retry_after`` seconds from now)."""

    def __init__(self, until: datetime) -> None:
        self.until = until
        self.retry_after = max(1, math.ceil((until - utcnow()).total_seconds()))
        super().__init__(f"too many failed sign-ins; try again in {self.retry_after} seconds")


def account_key(email: str) -> str:
    return "account:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


def address_key(address: str) -> str:
    return "address:" + address


def wait_after(failures: int, free: int) -> timedelta | None:
    """How long a key waits after its ``failures``-th failure in a row."""
    if failures < free:
        return None
    # 2 ** 10 seconds is past MAX_WAIT already: the exponent is bounded before it is used.
    return min(MAX_WAIT, timedelta(seconds=2 ** min(failures - free, 20)))


async def admit(store: Store, email: str, address: str) -> list[Admission]:
    """Count this attempt against the account and the address before its password is hashed;
    ``SignInThrottled`` (nothing counted) while either must wait."""
    admitted: list[Admission] = []
    for key, free in (
        (account_key(email), ACCOUNT_FREE_FAILURES),
        (address_key(address), ADDRESS_FREE_FAILURES),
    ):
        outcome = await store.sign_in_failures.admit(
            key, RUN_FORGOTTEN_AFTER, functools.partial(wait_after, free=free)
        )
        if isinstance(outcome, datetime):
            for admission in admitted:
                await store.sign_in_failures.give_back(admission)
            raise SignInThrottled(outcome)
        admitted.append(outcome)
    return admitted


async def failed(store: Store, admitted: list[Admission]) -> None:
    """The password was wrong: the waits this attempt set start now (after the hash)."""
    for admission in admitted:
        await store.sign_in_failures.failed(admission)


async def succeeded(store: Store, email: str, admitted: list[Admission]) -> None:
    """The account's owner signed in: its run of failures ends, and the address gets this
    attempt's count back (its run goes on: an attacker's own account must not reset it)."""
    await store.sign_in_failures.forget(account_key(email))
    for admission in admitted:
        if admission.key != account_key(email):
            await store.sign_in_failures.give_back(admission)
