"""XML from outside, read safely: no entities, no DTD, no network, no huge trees.

A statement is untrusted input: an entity expansion (a "billion laughs") or an external entity
(a file of this machine, a URL) must never be resolved. lxml is told not to, and a document that
declares a DOCTYPE at all is refused, since no statement format fincap reads needs one.
"""

from __future__ import annotations

from lxml import etree

from engines.statements.model import StatementError

_PARSER_OPTIONS = {
    "resolve_entities": False,
    "no_network": True,
    "load_dtd": False,
    "dtd_validation": False,
    "huge_tree": False,
    "remove_comments": True,
    "remove_pis": True,
}


def parse_xml(data: bytes) -> etree._Element:
    """The root element, or a ``StatementError`` naming the line where the XML breaks."""
    if b"<!DOCTYPE" in data[:4096].upper() or b"<!ENTITY" in data.upper():
        raise StatementError("DOCTYPE", "a statement must not declare a DOCTYPE or entities")
    parser = etree.XMLParser(**_PARSER_OPTIONS)
    try:
        return etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        line = exc.position[0] if exc.position else exc.lineno
        raise StatementError(f"line {line}", f"not well-formed XML: {exc.msg}") from None


def local(element: etree._Element) -> str:
    """The element's name without its namespace."""
    return etree.QName(element).localname


def child(element: etree._Element, *names: str) -> etree._Element | None:
    """The first descendant along ``names`` (local names, any namespace)."""
    current: etree._Element | None = element
    for name in names:
        if current is None:
            return None
        current = next((c for c in current if isinstance(c.tag, str) and local(c) == name), None)
    return current


def children(element: etree._Element, name: str) -> list[etree._Element]:
    return [c for c in element if isinstance(c.tag, str) and local(c) == name]


def text(element: etree._Element, *names: str) -> str | None:
    found = child(element, *names)
    if found is None or found.text is None:
        return None
    return found.text.strip() or None
