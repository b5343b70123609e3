"""The pages people read: the landing page and the API reference rendered from OpenAPI.

Server-rendered HTML with no script at all (the dashboard is the only page with JavaScript);
every value from the OpenAPI document is escaped. Styles come from one stylesheet served by
``app.web`` so the pages can forbid inline styles and scripts alike.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

STYLESHEET = "/app/assets/site.css"


def page(title: str, body: str, *, nav: bool = True) -> str:
    """A whole HTML page in fincap's frame (header navigation, one main region)."""
    links = (
        '<nav aria-label="Site"><a href="/">fincap</a><a href="/app/">Dashboard</a>'
        '<a href="/v1/graphql">GraphiQL</a><a href="/api">API reference</a>'
        '<a href="/help">Help</a></nav>'
        if nav
        else ""
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title>"
        '<link rel="icon" href="/favicon.svg" type="image/svg+xml">'
        f'<link rel="stylesheet" href="{STYLESHEET}"></head>'
        f'<body class="doc"><a class="skip" href="#main">Skip to content</a>'
        f'<header class="site">{links}</header><main id="main">{body}</main></body></html>'
    )


def landing_page(capability_count: int) -> str:
    """What fincap is, where to go next, and how to get an API key."""
    return page(
        "fincap: receipts and invoices, searchable",
        f"""
<h1>fincap</h1>
<p class="lead">A self-hosted home for receipts and invoices. Upload a photo or a PDF; fincap
reads the merchant, date, amounts, tax and currency, files it under a category, converts it to
your currency, finds duplicates, and lets you search and total it all.</p>
<p>Every one of its {capability_count} operations is a capability, the same through REST,
GraphQL, MCP (for AI assistants) and the <code>fincap</code> command line.</p>
<ul class="cards">
<li><a href="/app/"><strong>Dashboard</strong></a><span>Spend by month and category, search,
corrections, uploads and your API keys.</span></li>
<li><a href="/v1/graphql"><strong>GraphiQL</strong></a><span>Try the GraphQL API in the
browser; it opens on a dashboard query.</span></li>
<li><a href="/api"><strong>API reference</strong></a><span>Every capability with its input and
output (the <a href="/openapi.json">OpenAPI document</a> for tools).</span></li>
<li><a href="/help"><strong>Help center</strong></a><span>Guides and answers.</span></li>
</ul>
<h2 id="api-keys">Getting an API key</h2>
<ol>
<li>The operator creates your account and first workspace once:
<pre><code>fincap admin bootstrap --email you@example.com --workspace "My business"</code></pre>
On a terminal it asks for the password you sign in to the dashboard with (or set it
later: <code>fincap admin set-password --email you@example.com</code>), and prints an API key
(<code>sk_…</code>), the workspace id (<code>org_…</code>) and <code>signInUrl</code>, a link that
signs you in to the dashboard once, within 15 minutes (<code>fincap admin sign-in-link --email
you@example.com</code> prints another).</li>
<li>Signed in to the <a href="/app/#/keys">dashboard</a>, create more keys under
<em>API keys</em> (one per program, so each can be revoked alone). The secret is shown once.</li>
<li>Send the key with every call:
<pre><code>curl -H "Authorization: Bearer sk_…" -H "X-Service-Org-Id: org_…" \\
  -d '{{"limit": 5}}' http://this-server/v1/capabilities/documents.search</code></pre>
</li>
</ol>
<p>Want example data? <code>fincap demo load --org org_… --count 500</code> adds realistic
documents to a workspace.</p>
""",
    )


# -- the API reference ---------------------------------------------------------------------

REF_PREFIX = "#/components/schemas/"


def _schema_name(schema: dict[str, Any]) -> str | None:
    ref = schema.get("$ref")
    return ref[len(REF_PREFIX) :] if isinstance(ref, str) and ref.startswith(REF_PREFIX) else None


def _type_label(schema: dict[str, Any]) -> str:
    """A short human label for a JSON Schema: ``string``, ``[Document]``, ``A | null``."""
    if name := _schema_name(schema):
        return f'<a href="#schema-{escape(name)}">{escape(name)}</a>'
    if "anyOf" in schema or "oneOf" in schema:
        return " | ".join(_type_label(s) for s in schema.get("anyOf", schema.get("oneOf", [])))
    if "enum" in schema:
        return " | ".join(f"<code>{escape(json.dumps(v))}</code>" for v in schema["enum"])
    if "const" in schema:
        return f"<code>{escape(json.dumps(schema['const']))}</code>"
    kind = schema.get("type", "any")
    if kind == "array":
        return f"[{_type_label(schema.get('items', {}))}]"
    if isinstance(kind, list):
        return " | ".join(escape(str(k)) for k in kind)
    return escape(str(kind)) + (f" ({escape(schema['format'])})" if "format" in schema else "")


CONSTRAINTS = (
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "maxItems",
    "pattern",
)


def _properties_table(schema: dict[str, Any]) -> str:
    properties: dict[str, Any] = schema.get("properties") or {}
    if not properties:
        return "<p>No properties.</p>"
    required = set(schema.get("required") or [])
    rows = []
    for name, prop in properties.items():
        notes = [f"{key} {escape(json.dumps(prop[key]))}" for key in CONSTRAINTS if key in prop]
        if "default" in prop:
            notes.append(f"default {escape(json.dumps(prop['default']))}")
        rows.append(
            f"<tr><th scope=row><code>{escape(name)}</code>"
            f"{' <span class=req>required</span>' if name in required else ''}</th>"
            f"<td>{_type_label(prop)}</td>"
            f"<td>{escape(prop.get('description', ''))}"
            f"{'<br><small>' + ', '.join(notes) + '</small>' if notes else ''}</td></tr>"
        )
    return (
        '<div class="scroll"><table><thead><tr><th scope=col>Field</th><th scope=col>Type</th>'
        f"<th scope=col>Description</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _result_schema(operation: dict[str, Any]) -> dict[str, Any] | None:
    """The ``data.result`` schema of an operation's 200 envelope."""
    try:
        envelope = operation["responses"]["200"]["content"]["application/json"]["schema"]
        result: dict[str, Any] = envelope["properties"]["data"]["properties"]["result"]
    except (KeyError, TypeError):
        return None
    return result


def api_reference_page(openapi: dict[str, Any]) -> str:
    """Every operation of ``openapi`` (grouped by tag), then every schema it names."""
    info = openapi.get("info", {})
    server = (openapi.get("servers") or [{}])[0].get("url", "")
    sections: dict[str, list[str]] = {}
    for path, item in openapi.get("paths", {}).items():
        for method, operation in item.items():
            tag = (operation.get("tags") or ["service"])[0]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            input_schema = body.get("schema")
            result = _result_schema(operation)
            anchor = escape(operation.get("operationId", path))
            parts = [
                f'<section class="op" id="{anchor}" aria-labelledby="{anchor}-h">'
                f'<h3 id="{anchor}-h"><span class="method">{escape(method.upper())}</span> '
                f"<code>{escape(path)}</code></h3>",
                "".join(
                    f"<p>{escape(paragraph)}</p>"
                    for paragraph in (
                        operation.get("description") or operation.get("summary", "")
                    ).split("\n\n")
                ),
            ]
            if input_schema:
                parts.append(f"<p><strong>Body</strong>: {_type_label(input_schema)}</p>")
            if result:
                parts.append(f"<p><strong>Result</strong> (data.result): {_type_label(result)}</p>")
            statuses = ", ".join(
                f"{escape(code)} {escape(r.get('description', ''))}"
                for code, r in operation.get("responses", {}).items()
            )
            parts.append(f"<details><summary>Responses</summary><p>{statuses}</p></details>")
            sections.setdefault(tag, []).append("".join(parts) + "</section>")
    toc = "".join(
        f'<li><a href="#tag-{escape(tag)}">{escape(tag)}</a></li>' for tag in sorted(sections)
    )
    operations = "".join(
        f'<h2 id="tag-{escape(tag)}">{escape(tag)}</h2>{"".join(items)}'
        for tag, items in sorted(sections.items())
    )
    schemas = "".join(
        f'<section class="schema" id="schema-{escape(name)}"><h3>{escape(name)}</h3>'
        f"<p>{escape(schema.get('description', ''))}</p>{_properties_table(schema)}</section>"
        for name, schema in sorted(openapi.get("components", {}).get("schemas", {}).items())
    )
    return page(
        f"{info.get('title', 'API')} reference",
        f"<h1>{escape(info.get('title', 'API'))} <small>{escape(info.get('version', ''))}</small>"
        f"</h1><p>{escape(info.get('description', ''))} Server: <code>{escape(server)}</code>. "
        "Authenticate with <code>Authorization: Bearer sk_…</code> and name the workspace with "
        '<code>X-Service-Org-Id</code>. Machine-readable: <a href="/openapi.json">/openapi.json'
        "</a>.</p>"
        f'<nav aria-label="Resources"><ul class="toc">{toc}<li><a href="#schemas">Schemas</a>'
        f"</li></ul></nav>{operations}<h2 id=schemas>Schemas</h2>{schemas}",
    )
