"""The outbound policy on real sockets: every notation of a non-public address is refused
before a byte is sent, the allow-list admits what it names, the address checked is the
address dialed (a resolver that changes its answer cannot redirect the connection), TLS still
names the host, and every refusal or failure reads the same."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from app.host.config import ConfigError, Settings
from engines.connectors.errors import ConnectorError
from engines.connectors.imap import ImapMailbox
from engines.outbound import OutboundPolicy, Unreachable, unreachable_text
from tests.outbound import FAILURES, resolving, target


@dataclass
class Site:
    """A local HTTP server recording the Host header and TLS server name of each request."""

    address: str
    port: int
    name: str  # what it answers with
    hosts: list[str] = field(default_factory=list)
    server_names: list[str | None] = field(default_factory=list)


@contextmanager
def site(
    address: str, name: str, port: int = 0, context: ssl.SSLContext | None = None
) -> Iterator[Site]:
    state = Site(address, port, name)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.hosts.append(self.headers.get("Host", ""))
            body = name.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer((address, port), Handler)
    state.port = server.server_address[1]
    if context is not None:
        context.sni_callback = lambda sock, server_name, ctx: state.server_names.append(server_name)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    # shutdown() returns at the server's next poll: every 50 ms, not the default 0.5 s.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def loopback_site() -> Iterator[Site]:
    with site("127.0.0.1", "inside") as served:
        yield served


# Every spelling below reaches this machine, its network, or no public host at all.
NOT_PUBLIC = [
    "127.0.0.1",
    "127.1",
    "2130706433",
    "0x7f.1",
    "0x7f000001",
    "0177.0.0.1",
    "0",
    "0.0.0.0",
    "localhost",
    "LOCALHOST.",
    "::1",
    "[::1]",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "::127.0.0.1",
    "2002:7f00:1::1",  # 6to4 wrapping of 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 wrapping of 169.254.169.254
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "224.0.0.1",
    "239.255.255.250",
    "255.255.255.255",
    "240.0.0.1",
    "192.0.2.10",
    "198.18.0.1",
    "fe80::1",
    "fc00::1",
    "fec0::1",
    "2001:db8::1",
]


@pytest.mark.parametrize("host", NOT_PUBLIC)
async def test_every_notation_of_a_non_public_address_is_refused(
    host: str, loopback_site: Site
) -> None:
    policy = OutboundPolicy()
    port = loopback_site.port
    with pytest.raises(Unreachable) as refused:
        policy.checked_addresses(host, port)
    assert str(refused.value) == unreachable_text(host.strip("[]"), port)
    with pytest.raises(OSError):
        policy.connect(host, port, timeout=2)
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    async with policy.http_client(timeout=2) as client:
        try:
            await client.get(f"http://{shown}:{port}/")
        except httpx.InvalidURL:
            pass  # httpx itself refuses a few notations (0177.0.0.1) before connecting
        except httpx.ConnectError as failed:
            assert str(failed) == unreachable_text(host.strip("[]").lower(), port)
        else:
            raise AssertionError(f"{host} was reached")
    # Refused before any connection: the server on loopback heard nothing.
    assert loopback_site.hosts == []


def test_a_save_time_check_reads_every_notation_without_dns() -> None:
    policy = OutboundPolicy()
    for host in NOT_PUBLIC:
        assert policy.literal_refusal(host) is not None, host
    assert policy.literal_refusal("hooks.example.com") is None  # a name: checked on connect
    assert policy.literal_refusal("93.184.215.14") is None
    assert policy.literal_refusal("2606:4700::1111") is None
    assert OutboundPolicy.allowing(["127.0.0.1"]).literal_refusal("127.1") is None


def test_public_answers_pass_and_one_private_answer_refuses_the_host() -> None:
    resolver = resolving(
        {
            "public.test": ["93.184.215.14", "2606:4700::1111"],
            "mixed.test": ["93.184.215.14", "10.1.2.3"],
            "mapped.test": ["::ffff:10.1.2.3"],
        }
    )
    policy = OutboundPolicy(resolver=resolver)
    assert policy.checked_addresses("public.test", 443) == ["93.184.215.14", "2606:4700::1111"]
    for host in ("mixed.test", "mapped.test", "unknown.test"):
        with pytest.raises(Unreachable, match=f"^could not connect to {host}:443$"):
            policy.checked_addresses(host, 443)


async def test_the_allow_list_lets_a_named_fake_through(loopback_site: Site) -> None:
    url = f"http://127.0.0.1:{loopback_site.port}/"
    async with OutboundPolicy().http_client(timeout=2) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(url)
    for entries in (["127.0.0.1"], ["127.0.0.0/8"], ["localhost"]):
        admitted = OutboundPolicy.allowing(entries)
        target = url.replace("127.0.0.1", "localhost") if entries == ["localhost"] else url
        async with admitted.http_client(timeout=2) as client:
            answer = await client.get(target)
        assert answer.status_code == 200 and answer.text == "inside"
    # Admitting one address admits no other: 127.0.0.2 is still loopback.
    with pytest.raises(Unreachable):
        OutboundPolicy.allowing(["127.0.0.1"]).checked_addresses("127.0.0.2", 80)


def test_the_allow_list_setting_is_validated_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    policy = Settings(outbound_allow="10.0.0.0/8, mail.internal ,::1").outbound_policy()
    assert policy.admits("anything", policy_address("10.9.8.7"))
    assert policy.admits("MAIL.internal.", policy_address("192.168.1.1"))
    assert not policy.admits("other.internal", policy_address("192.168.1.1"))
    monkeypatch.setenv("FINCAP_OUTBOUND_ALLOW", "10.0.0.0/8,mail_server!")
    with pytest.raises(ConfigError, match=r"FINCAP_OUTBOUND_ALLOW.*'mail_server!'"):
        Settings.from_env()


def policy_address(text: str) -> Any:
    from ipaddress import ip_address

    return ip_address(text)


async def test_the_connection_goes_to_the_checked_address_when_the_answer_changes() -> None:
    """DNS rebinding: the name answers an admitted address when it is checked and a refused
    one afterwards; the connection still goes to the first (nothing resolves it twice)."""
    with site("127.0.0.2", "checked") as checked, site("127.0.0.1", "rebound") as rebound:
        answers = iter([["127.0.0.2"]])

        def rebinding(host: str, port: int) -> list[str]:
            return next(answers, ["127.0.0.1"])  # every later answer: the refused address

        policy = OutboundPolicy.allowing(["127.0.0.2"], resolver=rebinding)
        async with policy.http_client(timeout=5) as client:
            answer = await client.get(f"http://rebind.test:{checked.port}/")
        assert answer.text == "checked"
        assert checked.hosts == [f"rebind.test:{checked.port}"]  # Host still names the name
        assert rebound.hosts == []
        # The same holds for the sockets IMAP and SMTP use.
        answers = iter([["127.0.0.2"]])
        with policy.connect("rebind.test", checked.port, timeout=5) as sock:
            assert sock.getpeername()[0] == "127.0.0.2"


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for ``pinned.test`` (its own CA)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "pinned.test")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("pinned.test")]), False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .sign(key, hashes.SHA256())
    )
    folder = tmp_path_factory.mktemp("tls")
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def test_tls_names_the_host_while_the_socket_goes_to_the_checked_address(
    certificate: tuple[Path, Path],
) -> None:
    cert_path, key_path = certificate
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_path, key_path)
    trust = ssl.create_default_context(cafile=str(cert_path))
    with site("127.0.0.1", "secure", context=server_context) as secure:
        resolver = resolving({"pinned.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
        policy = OutboundPolicy.allowing(["127.0.0.1"], resolver=resolver)
        async with policy.http_client(timeout=5, verify=trust) as client:
            answer = await client.get(f"https://pinned.test:{secure.port}/")
            assert answer.text == "secure"
            # Same address, another name: the certificate is checked against the name.
            with pytest.raises(httpx.ConnectError) as mismatch:
                await client.get(f"https://other.test:{secure.port}/")
        assert str(mismatch.value) == unreachable_text("other.test", secure.port)
        assert secure.server_names[0] == "pinned.test"
        assert secure.hosts == [f"pinned.test:{secure.port}"]


# -- one text for every failure ----------------------------------------------------------------


async def test_http_failures_read_the_same_whatever_happened() -> None:
    policy = OutboundPolicy.allowing(["127.0.0.1"])
    texts = {}
    for kind in FAILURES:
        with target(kind) as (host, port):
            async with policy.http_client(timeout=1) as client:
                with pytest.raises(httpx.ConnectError) as failed:
                    await client.get(f"http://{host}:{port}/")
            texts[kind] = str(failed.value).replace(f"{host}:{port}", "HOST:PORT")
    assert set(texts.values()) == {"could not connect to HOST:PORT"}, texts


async def test_imap_failures_read_the_same_whatever_happened() -> None:
    policy = OutboundPolicy.allowing(["127.0.0.1"])
    texts = {}
    for kind in FAILURES:
        for security in ("tls", "none"):
            with target(kind) as (host, port):
                mailbox = ImapMailbox(host, port, security, "u", "p", timeout_s=1, outbound=policy)  # type: ignore[arg-type]
                with pytest.raises(ConnectorError) as failed:
                    await asyncio.wait_for(mailbox.check(), 10)
            texts[kind, security] = failed.value.message.replace(f"{host}:{port}", "HOST:PORT")
    assert set(texts.values()) == {"could not connect to HOST:PORT"}, texts
