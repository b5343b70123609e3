"""Hostile files as the tester built them: tiny on disk, huge once decoded or rendered."""

from __future__ import annotations

import struct
import zlib


def blank_pdf(width_pt: float, height_pt: float, pages: int = 1) -> bytes:
    """A valid PDF of ``pages`` empty pages of the given size (no text layer: it is rendered)."""
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode())
    for _ in range(pages):
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {width_pt} {height_pt}] >>".encode()
        )
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n".encode() + body + b"\nendobj\n"
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return bytes(out)


def png_bomb(side: int = 13000) -> bytes:
    """A one-bit greyscale PNG of ``side`` × ``side`` white pixels: ~21 KB for 13000²."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    row = b"\x00" + b"\xff" * ((side + 7) // 8)  # filter byte, then 1 bit per pixel
    compressor = zlib.compressobj(9)
    idat = b"".join(compressor.compress(row) for _ in range(side)) + compressor.flush()
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
    )


def many_recipients_mail(to: str, count: int, message_id: str = "<many@example.com>") -> bytes:
    """A small message to ``to`` whose To header also names ``count`` other addresses, folded
    every 20 (SMTP lines stay under 1,000 characters): 40,000 cost 12.9 s to parse."""
    others = ",\r\n ".join(
        ", ".join(f"user{n}@example.org" for n in range(start, min(count, start + 20)))
        for start in range(0, count, 20)
    )
    return (
        f"From: mallory@example.com\r\nTo: {to},\r\n {others}\r\nSubject: hello\r\n"
        f"Message-ID: {message_id}\r\n\r\nNothing to see.\r\n"
    ).encode()


def nested_mail(
    to: str, depth: int, *, forwarded: bool = False, message_id: str = "<nested@example.com>"
) -> bytes:
    """A message whose parts nest ``depth`` levels: multiparts, or forwarded messages."""
    lines = [
        "From: mallory@example.com",
        f"To: {to}",
        "Subject: nested",
        f"Message-ID: {message_id}",
        "MIME-Version: 1.0",
    ]
    if forwarded:
        for _ in range(depth):
            lines += ["Content-Type: message/rfc822", "", "From: a@example.com", "Subject: fwd"]
        lines += ["Content-Type: text/plain", "", "deep"]
    else:
        for level in range(depth):
            lines += [f'Content-Type: multipart/mixed; boundary="b{level}"', "", f"--b{level}"]
        lines += ["Content-Type: text/plain", "", "deep"]
        lines += [f"--b{level}--" for level in reversed(range(depth))]
    return "\r\n".join(lines).encode() + b"\r\n"
