"""Statements of any length in each format, generated: for the linear-work test and the bench."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import date, timedelta

START = date(2026, 1, 1)


def rows_of(lines: int, seed: int) -> list[tuple[date, int, str]]:
    rng = random.Random(seed)
    names = ["COFFEE ROASTERS", "SHELL 0815", "Bürobedarf Nord", "TAXI HANSA", "CLOUD AG"]
    return [
        (
            START + timedelta(days=i * 365 // lines),
            rng.randint(-50000, 20000) or 1,
            rng.choice(names),
        )
        for i in range(lines)
    ]


def _money(cents: int, comma: bool) -> str:
    text = f"{abs(cents) / 100:.2f}"
    return text.replace(".", ",") if comma else text


def csv_file(rows: list[tuple[date, int, str]]) -> bytes:
    out = [
        '"Buchungstag";"Betrag";"Waehrung";"Beguenstigter/Zahlungspflichtiger";"Verwendungszweck"'
    ]
    for n, (day, cents, name) in enumerate(rows):
        sign = "-" if cents < 0 else ""
        out.append(f'"{day:%d.%m.%Y}";"{sign}{_money(cents, True)}";"EUR";"{name}";"Ref {n}"')
    return "\n".join(out).encode("cp1252")


def mt940_file(rows: list[tuple[date, int, str]]) -> bytes:
    out = [":20:BENCH", ":25:10020030/1234567890", ":28C:1/1", ":60F:C251231EUR0,00"]
    for n, (day, cents, name) in enumerate(rows):
        mark = "D" if cents < 0 else "C"
        out.append(f":61:{day:%y%m%d}{day:%m%d}{mark}{_money(cents, True)}NMSCNONREF//B{n}")
        out += [f":86:106?00KARTENZAHLUNG?20{name}", f"?21Ref {n}"]
    out += [f":62F:C{rows[-1][0]:%y%m%d}EUR0,00", "-"]
    return "\r\n".join(out).encode()


def camt_file(rows: list[tuple[date, int, str]]) -> bytes:
    entries = "".join(
        f'<Ntry><Amt Ccy="EUR">{_money(cents, False)}</Amt>'
        f"<CdtDbtInd>{'DBIT' if cents < 0 else 'CRDT'}</CdtDbtInd><Sts><Cd>BOOK</Cd></Sts>"
        f"<BookgDt><Dt>{day.isoformat()}</Dt></BookgDt><AcctSvcrRef>R{n}</AcctSvcrRef>"
        f"<NtryDtls><TxDtls><RltdPties><Cdtr><Pty><Nm>{name}</Nm></Pty></Cdtr></RltdPties>"
        f"<RmtInf><Ustrd>Ref {n}</Ustrd></RmtInf></TxDtls></NtryDtls></Ntry>"
        for n, (day, cents, name) in enumerate(rows)
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<Document xmlns="urn:iso:std:iso:20022:tech:xsd:camt.053.001.08"><BkToCstmrStmt>'
        "<Stmt><Id>BENCH</Id><Acct><Id><IBAN>DE44500105175407324931</IBAN></Id></Acct>"
        f"{entries}</Stmt></BkToCstmrStmt></Document>"
    ).encode()


def ofx_file(rows: list[tuple[date, int, str]]) -> bytes:
    entries = "".join(
        f"<STMTTRN>\n<TRNTYPE>POS\n<DTPOSTED>{day:%Y%m%d}\n"
        f"<TRNAMT>{'-' if cents < 0 else ''}{_money(cents, False)}\n<FITID>F{n}\n<NAME>{name}\n"
        "</STMTTRN>\n"
        for n, (day, cents, name) in enumerate(rows)
    )
    return (
        "OFXHEADER:100\nDATA:OFXSGML\nVERSION:102\n\n<OFX>\n<BANKMSGSRSV1>\n<STMTTRNRS>\n"
        "<STMTRS>\n<CURDEF>USD\n<BANKACCTFROM>\n<ACCTID>4417\n</BANKACCTFROM>\n<BANKTRANLIST>\n"
        f"{entries}</BANKTRANLIST>\n</STMTRS>\n</STMTTRNRS>\n</BANKMSGSRSV1>\n</OFX>\n"
    ).encode("latin-1")


FORMATS: dict[str, Callable[[list[tuple[date, int, str]]], bytes]] = {
    "csv": csv_file,
    "mt940": mt940_file,
    "camt053": camt_file,
    "ofx": ofx_file,
}
