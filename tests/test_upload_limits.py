"""What an upload may be is written once (``domain/uploads.py``) and every door reads it:
files.upload's schema, inbound email's attachments, WhatsApp media, the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

from app.host.config import Settings
from domain.uploads import MAX_UPLOAD_BYTES, UPLOAD_MIME_TYPES
from engines import mail
from engines.connectors import whatsapp
from resolvers.resources.files import MAX_BASE64_CHARS
from schema.files import UploadFile

ROOT = Path(__file__).resolve().parents[1]
SERVICE = ("app", "resolvers", "schema", "persistence", "engines", "domain")
HOME = ROOT / "domain" / "uploads.py"
# Lists that hold the upload types for another reason, on purpose: what extraction can read
# (text and type aliases too), and what a browser may show inline (a type uploads accept later
# must not become inline by accident).
WIDER_ON_PURPOSE = {
    ROOT / "engines/extraction/text_extraction.py",
    ROOT / "app/http/security_headers.py",
}


def test_the_contract_lists_the_domain_types() -> None:
    mime = UploadFile.model_json_schema()["properties"]["mimeType"]
    listed = {value for branch in mime["anyOf"] for value in branch.get("enum", [])}
    assert listed == UPLOAD_MIME_TYPES


def test_other_doors_take_the_same_types_and_size() -> None:
    assert mail.RECEIPT_TYPES == UPLOAD_MIME_TYPES
    assert mail.MAX_ATTACHMENT_BYTES == MAX_UPLOAD_BYTES
    assert whatsapp.MAX_MEDIA_BYTES == MAX_UPLOAD_BYTES


def test_the_default_request_limit_holds_the_largest_upload() -> None:
    """files.upload sends the file in base64 inside JSON: a larger upload limit without a larger
    request limit would answer the largest files 413 before the limit's own message."""
    json_around = 64 * 1024  # the other fields, the names, the braces: far less than this
    assert MAX_BASE64_CHARS >= MAX_UPLOAD_BYTES * 4 // 3
    assert Settings().max_body_bytes >= MAX_BASE64_CHARS + json_around


def copies_in(path: Path) -> list[str]:
    """Where ``path`` writes the limit or the type list again: the number 10 MB (as a product
    or a literal), or a literal collection holding three or more of the upload types."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and node.value == MAX_UPLOAD_BYTES:
            found.append(f"{path.name}:{node.lineno} the number {MAX_UPLOAD_BYTES}")
        elif isinstance(node, ast.BinOp) and _is_ten_megabytes(node):
            found.append(f"{path.name}:{node.lineno} 10 * 1024 * 1024")
        elif isinstance(node, ast.Set | ast.List | ast.Tuple):
            strings = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            if len(strings & UPLOAD_MIME_TYPES) >= 3:
                found.append(f"{path.name}:{node.lineno} a list of upload types")
    return found


def _is_ten_megabytes(node: ast.BinOp) -> bool:
    """``10 * 1024 * 1024`` or any other product of small integer constants equal to it."""
    factors: list[ast.expr] = [node]
    product = 1
    while factors:
        item = factors.pop()
        if isinstance(item, ast.BinOp) and isinstance(item.op, ast.Mult):
            factors += [item.left, item.right]
        elif isinstance(item, ast.Constant) and type(item.value) is int:
            product *= item.value
        else:
            return False
    return product == MAX_UPLOAD_BYTES


def test_no_module_writes_them_again() -> None:
    copies = [
        copy
        for package in SERVICE
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != HOME and path not in WIDER_ON_PURPOSE
        for copy in copies_in(path)
    ]
    assert copies == []


def test_the_scan_sees_a_copy(tmp_path: Path) -> None:
    copied = tmp_path / "copied.py"
    copied.write_text(
        'LIMIT = 10 * 1024 * 1024\nTYPES = ("image/png", "image/jpeg", "application/pdf")\n'
    )
    assert len(copies_in(copied)) == 2
