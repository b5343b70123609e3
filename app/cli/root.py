"""The ``fincap`` command line: ``serve`` and the operator's ``admin`` commands."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import click

from app.cli.account import auth, doctor, workspace
from app.cli.commands import CapabilityGroup
from app.cli.statements import import_statement
from app.cli.upload import upload
from app.host.config import ConfigError, Settings

# The server side (store, resolvers, extraction engines) is imported inside the commands that
# need it: importing it costs about a second, which every client command would otherwise pay.
if TYPE_CHECKING:
    from persistence.store import Store


# Seconds `fincap serve` lets requests in flight finish after SIGTERM.
SERVE_GRACE_S = 2


def settings_from_env(**overrides: Any) -> Settings:
    """The environment's settings, or a usage error naming the variable that does not fit."""
    try:
        return Settings.from_env(**overrides)
    except ConfigError as exc:
        raise click.ClickException(f"configuration: {exc}") from None


def accounts() -> Any:
    """``resolvers.services.auth.accounts``, imported when an admin or demo command runs."""
    from resolvers.services.auth import accounts as module

    return module


def run_on_store(action: Callable[[Store], Awaitable[dict[str, Any]]]) -> None:
    """Run ``action`` on the configured store and print its result as JSON.

    On the embedded store this joins a running ``fincap serve`` on the same data directory,
    or starts a private server for the duration of the command.
    """

    from app.host.database import open_store
    from persistence.embedded import EmbeddedServerMissing
    from persistence.errors import store_error_of
    from resolvers.framework.errors import CapabilityError

    settings = settings_from_env()

    async def main() -> dict[str, Any]:
        async with open_store(settings, publish=False) as store:
            return await action(store)

    try:
        result = asyncio.run(main())
    except EmbeddedServerMissing as exc:
        raise click.ClickException(str(exc)) from None
    except CapabilityError as exc:
        click.echo(f"error: {exc.message}", err=True)
        sys.exit(2 if exc.status < 500 else 1)
    except Exception as exc:
        if store_error_of(exc) is None:
            raise
        raise click.ClickException(unreachable_store(settings)) from None
    click.echo(json.dumps(result))


def unreachable_store(settings: Settings) -> str:
    """What a server command says when its database does not answer (never the driver's
    text, which names hosts and its topology)."""
    where = "MONGODB_URI" if settings.mongodb_uri else f"the embedded store in {settings.data_dir}"
    return (
        f"the database ({where}) does not answer within {settings.store_timeout_s:g} s; "
        "check that it runs and is reachable, then try again"
    )


@click.group(cls=CapabilityGroup)
@click.version_option(package_name="fincap", prog_name="fincap", message="%(prog)s %(version)s")
def main() -> None:
    """fincap: financial documents in, searchable records out.

    Server commands (serve, worker, admin, demo) run the service; every capability is a
    command too (fincap RESOURCE ACTION), called over HTTP on the server named by --host,
    FINCAP_HOST or ~/.fincap/config.json. Exit codes: 0 ok, 1 some files failed, 2 usage or
    invalid request, 3 authentication or permission, 4 not found, 5 server or network.
    """


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind.")
@click.option("--port", default=8000, show_default=True, type=int, help="Port to listen on.")
def serve(host: str, port: int) -> None:
    """Serve the API (on the embedded store unless MONGODB_URI is set)."""
    from app.host.main import create_app
    from app.host.observability import configure_logging
    from app.host.serving import Server

    settings = settings_from_env(host=host, port=port)
    if not settings.mongodb_uri:
        # Before anything binds or loads: the install line, not a traceback from the lifespan.
        from persistence.embedded import EmbeddedServerMissing, require_embedded_server

        try:
            require_embedded_server()
        except EmbeddedServerMissing as exc:
            raise click.ClickException(str(exc)) from None
    configure_logging(settings.log_level)
    # ``Server`` ends the live event streams first when it stops (app.host.serving).
    Server(server_config(create_app(settings), settings)).run()


def server_config(app: Any, settings: Settings) -> Any:
    """uvicorn's configuration for ``fincap serve``."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        # Requests still open when SIGTERM comes get this long; the whole stop (workers, the
        # last usage flush, the embedded store) stays within 10 s, store up or down.
        timeout_graceful_shutdown=SERVE_GRACE_S,
        # The server never holds a longer WebSocket message (app.graphql.sockets bounds it
        # again before parsing, lower until the socket has said who it is).
        ws_max_size=settings.ws_message_bytes,
        # uvicorn believes X-Forwarded-For from loopback peers by default; the app reads it
        # from FINCAP_TRUSTED_PROXIES only (app.http.request_context.client_address).
        proxy_headers=False,
    )


@main.command()
@click.option(
    "--concurrency",
    default=1,
    show_default=True,
    type=int,
    help="Jobs processed at the same time by this process.",
)
def worker(concurrency: int) -> None:
    """Process queued jobs (uploads) until stopped; run as many as the load needs."""
    import signal

    from app.host.database import open_store
    from app.host.observability import configure_logging
    from app.host.processing import running_workers
    from app.host.secret_key import load_keyring
    from persistence.embedded import running_server_uri
    from persistence.errors import store_error_of
    from resolvers.framework.usage_meter import flushing

    settings = settings_from_env(workers=concurrency)
    configure_logging(settings.log_level)
    if not settings.mongodb_uri and running_server_uri(settings.data_dir.resolve()) is None:
        # The embedded store belongs to `fincap serve`; a worker that started it would take it
        # down with itself. (With MONGODB_URI, workers run anywhere.)
        raise click.ClickException(
            "no running `fincap serve` on this data directory; start it first or set MONGODB_URI"
        )

    async def serve_jobs() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        main_task = asyncio.current_task()
        serving = False

        def on_signal() -> None:
            # Serving: leave the block, which finishes (within its grace) the jobs in hand.
            # Still starting (the store slow or away): nothing is in hand, stop right there.
            stop.set()
            if not serving and main_task is not None:
                main_task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, on_signal)
        async with (
            open_store(settings, publish=True) as store,
            running_workers(
                store, settings, count=concurrency, keyring=load_keyring(settings)
            ) as pool,
            # Automation rules run capabilities here: their API calls are counted and flushed.
            flushing(
                pool.services.api_calls, store.usage, settings.usage_flush_s, settings.data_dir
            ),
        ):
            serving = True
            await stop.wait()

    try:
        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(serve_jobs())
    except Exception as exc:
        if store_error_of(exc) is None:
            raise
        raise click.ClickException(unreachable_store(settings)) from None


@main.group()
def admin() -> None:
    """Operator commands: users, workspaces and API keys."""


@admin.command()
@click.option("--email", required=True, help="The user's email (created if new).")
@click.option("--workspace", "workspace", required=True, help="Name of the first workspace.")
def bootstrap(email: str, workspace: str) -> None:
    """Create a user, a workspace they own and an API key; prints {userId, orgId, apiKey,
    signInUrl}: signInUrl opens the dashboard signed in, once, within 15 minutes.

    On a terminal it also asks for the password the dashboard's sign-in takes (Enter skips;
    ``fincap admin set-password`` sets it later), and says where to sign in."""
    from resolvers.services.auth import oauth, sign_in_links

    settings = settings_from_env()
    plans = settings.plan_catalog()
    person = on_a_terminal()  # a script gets the JSON alone (no prompt, no hint)
    password = dashboard_password() if person else None

    async def create(store: Store) -> dict[str, Any]:
        created = await accounts().bootstrap(store, email, workspace, plans)
        if password:
            await oauth.set_password(store, email, password)
        link = await sign_in_links.issue(store, email, created["orgId"])
        created["signInUrl"] = sign_in_links.link_url(settings.base_url, link["secret"])
        return {**created, "passwordSet": bool(password)} if person else created

    run_on_store(create)
    if not person:
        return
    click.echo(
        "Open signInUrl in a browser to sign in to the dashboard (once, within 15 minutes; "
        "FINCAP_PUBLIC_URL sets the address it names).",
        err=True,
    )
    if password:
        click.echo(f"Later, sign in at /app/ on the server as {email}.", err=True)
    else:
        click.echo(
            f"To sign in later with a password, set one: fincap admin set-password --email {email}",
            err=True,
        )


@admin.command("sign-in-link")
@click.option("--email", required=True, help="The person's email.")
@click.option("--org", "org_id", default=None, help="The workspace to open (default: their first).")
def sign_in_link(email: str, org_id: str | None) -> None:
    """A one-time link that opens the dashboard signed in as this person (once, within 15
    minutes); prints {signInUrl, expiresAt, orgId}."""
    from resolvers.services.auth import sign_in_links

    settings = settings_from_env()

    async def issue(store: Store) -> dict[str, Any]:
        link = await sign_in_links.issue(store, email, org_id)
        return {
            "signInUrl": sign_in_links.link_url(settings.base_url, link["secret"]),
            "expiresAt": link["expiresAt"].isoformat(),
            "orgId": link["orgId"],
        }

    run_on_store(issue)


def on_a_terminal() -> bool:
    """Whether a person types the input (prompts make sense), not a script or a pipe."""
    return sys.stdin.isatty()


def dashboard_password() -> str | None:
    """A password for the dashboard's sign-in, asked twice; None when the person skips."""
    from resolvers.services.auth import oauth

    while True:
        password = click.prompt(
            "Password for the dashboard's sign-in (Enter to skip)",
            hide_input=True,
            default="",
            show_default=False,
            err=True,
        )
        if not password:
            return None
        problem = oauth.password_problem(password)
        if problem is not None:
            click.echo(problem, err=True)
            continue
        if click.prompt("Repeat it", hide_input=True, err=True) == password:
            return str(password)
        click.echo("The two did not match; again.", err=True)


@admin.command("create-workspace")
@click.option("--email", required=True, help="The owner's email (created if new).")
@click.option("--name", required=True, help="Workspace name.")
def create_workspace(email: str, name: str) -> None:
    """Create a workspace owned by the user; prints {orgId}."""
    plans = settings_from_env().plan_catalog()
    run_on_store(lambda store: accounts().create_workspace(store, email, name, plans))


@admin.command("create-user")
@click.option("--email", required=True, help="The new user's email.")
def create_user(email: str) -> None:
    """Create an account with no workspace (for an invited person) and an API key; prints
    {userId, apiKey}."""
    run_on_store(lambda store: accounts().create_user(store, email))


@admin.command("create-key")
@click.option("--email", required=True, help="An existing user's email.")
@click.option("--restrict-to", default=None, help="Make the key usable in this workspace only.")
def create_key(email: str, restrict_to: str | None) -> None:
    """Issue an API key (shown once); prints {apiKey, keyId}."""
    run_on_store(lambda store: accounts().create_key(store, email, restrict_to))


@admin.command("set-plan")
@click.option("--org", required=True, help="The workspace (org_…).")
@click.option("--plan", "plan_id", required=True, help="A plan id of the billing catalog.")
def set_plan(org: str, plan_id: str) -> None:
    """Move a workspace to another billing plan (prorated like billing.change-plan); prints
    {orgId, planId, pendingPlanId}."""
    plans = settings_from_env().plan_catalog()
    run_on_store(lambda store: accounts().set_plan(store, org, plan_id, plans))


@admin.command("charge")
@click.option("--email", required=True, help="The billing account's owner.")
@click.option("--amount", required=True, help="Decimal amount, e.g. 49.00 (negative: a credit).")
@click.option("--description", required=True, help="What the charge is for (shown in history).")
@click.option("--org", default=None, help="A workspace the user owns that the charge concerns.")
def charge(email: str, amount: str, description: str, org: str | None) -> None:
    """Record a one-off charge on a user's billing account; prints {chargeId, userId, total}."""
    plans = settings_from_env().plan_catalog()
    run_on_store(lambda store: accounts().charge(store, email, amount, description, org, plans))


@admin.command("rebuild-rollups")
@click.option(
    "--org", "orgs", multiple=True, help="A workspace to recount (default: every stale one)."
)
def rebuild_rollups(orgs: tuple[str, ...]) -> None:
    """Recount the dashboard rollups of workspaces from their documents (after an upgrade or a
    failed rollup write; run it while nothing writes to them); prints {rebuilt: {orgId: rows}}."""
    run_on_store(lambda store: accounts().rebuild_rollups(store, list(orgs)))


@admin.command("reindex")
@click.option(
    "--org", "orgs", multiple=True, help="A workspace to embed (default: every one with documents)."
)
@click.option(
    "--all", "redo_all", is_flag=True, help="Embed every document again, not only those missing."
)
def reindex(orgs: tuple[str, ...], redo_all: bool) -> None:
    """Embed documents for ranking by meaning: those written before embeddings existed or by
    another model (a progress bar on stderr); prints {reindexed: {orgId: documents}, model}."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from resolvers.services.documents.search_indexes import reindex as embed_documents

    console = Console(stderr=True, highlight=False)
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        disable=not console.is_terminal,
        transient=True,
    ) as bar:
        tasks: dict[str, Any] = {}

        def progress(org: str, done: int, total: int) -> None:
            if org not in tasks:
                tasks[org] = bar.add_task(f"embedding {org}", total=total)
            bar.update(tasks[org], completed=done, total=total)

        run_on_store(
            lambda store: embed_documents(store, list(orgs), redo_all=redo_all, progress=progress)
        )


@admin.command("set-password")
@click.option("--email", required=True, help="An existing user's email.")
def set_password(email: str) -> None:
    """Set a user's password for the OAuth sign-in page (read from stdin or a prompt);
    prints {userId, passwordSet}."""
    if sys.stdin.isatty():
        password = click.prompt("New password", hide_input=True, confirmation_prompt=True)
    else:
        password = sys.stdin.readline().rstrip("\r\n")
    from resolvers.services.auth import oauth

    run_on_store(lambda store: oauth.set_password(store, email, password))


@main.group()
def demo() -> None:
    """Demo data for trying fincap out."""


@demo.command("load")
@click.option("--org", required=True, help="Workspace to fill (org_…).")
@click.option("--count", default=500, show_default=True, type=int, help="How many documents.")
@click.option("--seed", default=7, show_default=True, type=int, help="Seed of the generator.")
def demo_load(org: str, count: int, seed: int) -> None:
    """Load realistic demo documents: merchants, currencies, two years of dates, line items,
    some archived, recurring bills and duplicate pairs; prints {orgId, inserted}."""
    run_on_store(lambda store: accounts().load_demo(store, org, count, seed))


main.add_command(auth)
main.add_command(workspace)
main.add_command(doctor)
main.custom_actions = {
    "files": {"upload": upload},
    "statements": {"import": import_statement},
}
