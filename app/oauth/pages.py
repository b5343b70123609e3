"""The authorization pages people see: sign in, then choose a workspace and consent.

Plain HTML forms (no JavaScript), labelled fields, one heading per page, and every value
escaped. The forms carry the signed pending request and a CSRF token (``app.oauth.endpoints``).
"""

from __future__ import annotations

from html import escape
from typing import Any
from urllib.parse import urlsplit

from resolvers.framework.registry import CONSENT_TEXT

STYLE = """
body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;
color:#1a1a1a;line-height:1.5}
h1{font-size:1.5rem}label{display:block;margin-top:1rem;font-weight:600}
input[type=email],input[type=password]{width:100%;padding:.5rem;font-size:1rem;
box-sizing:border-box}
fieldset{margin-top:1rem;border:1px solid #bbb;padding:.5rem 1rem}
legend{font-weight:600}.radio{font-weight:normal;margin-top:.25rem}
button{margin-top:1.5rem;margin-right:.5rem;padding:.6rem 1.2rem;font-size:1rem}
.error{color:#a00000;font-weight:600}.client{font-weight:600}
"""


def page(title: str, body: str) -> str:
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · fincap</title><style>{STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>"
    )


def hidden(name: str, value: str) -> str:
    return f'<input type="hidden" name="{escape(name)}" value="{escape(value)}">'


def sign_in_page(
    *, action: str, request: str, csrf: str, client: str, email: str = "", error: str = ""
) -> str:
    problem = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    return page(
        "Sign in",
        f"<h1>Sign in to fincap</h1>"
        f'<p><span class="client">{escape(client)}</span> asks to use your fincap account.</p>'
        f"{problem}"
        f'<form method="post" action="{escape(action)}">'
        f"{hidden('request', request)}{hidden('csrf', csrf)}"
        '<label for="email">Email</label>'
        f'<input id="email" name="email" type="email" autocomplete="username" required '
        f'value="{escape(email)}">'
        '<label for="password">Password</label>'
        '<input id="password" name="password" type="password" '
        'autocomplete="current-password" required>'
        '<button type="submit">Sign in</button></form>',
    )


def destination_of(redirect_uri: str) -> str:
    """Where the browser goes after the consent page, as a person reads it: the host (and a
    port that is not the scheme's own) of a web address, the scheme of an app's own URI."""
    parts = urlsplit(redirect_uri)
    if parts.scheme in ("http", "https") and parts.hostname:
        default = 443 if parts.scheme == "https" else 80
        port = f":{parts.port}" if parts.port and parts.port != default else ""
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return f"{host}{port}"
    return f"the app that opens {parts.scheme}: links"


def consent_page(
    *,
    action: str,
    request: str,
    csrf: str,
    client: str,
    destination: str,
    email: str,
    scopes: list[str],
    workspaces: list[dict[str, Any]],
    error: str = "",
) -> str:
    problem = f'<p class="error" role="alert">{escape(error)}</p>' if error else ""
    if not workspaces:
        return page(
            "No workspace",
            "<h1>No workspace to share</h1>"
            f"<p>You are signed in as {escape(email)}, but you are not a member of any "
            "workspace. Ask a workspace owner to add you, then try again.</p>",
        )
    choices = "".join(
        f'<label class="radio"><input type="radio" name="workspace" '
        f'value="{escape(w["id"])}"{" checked" if i == 0 else ""} required> '
        f"{escape(w['name'])} <small>({escape(w['id'])}, {escape(w['role'])})</small></label>"
        for i, w in enumerate(workspaces)
    )
    allowed = "".join(
        f"<li>{escape(CONSENT_TEXT.get(s, s))} <code>{escape(s)}</code></li>" for s in scopes
    )
    return page(
        "Allow access",
        f"<h1>Allow {escape(client)}?</h1>"
        f"<p>Signed in as {escape(email)}.</p>{problem}"
        f'<form method="post" action="{escape(action)}">'
        f"{hidden('request', request)}{hidden('csrf', csrf)}"
        f"<fieldset><legend>Workspace it may act in</legend>{choices}</fieldset>"
        f"<p>It will be able to:</p><ul>{allowed}</ul>"
        "<p>To act in another workspace later, it must ask you again.</p>"
        f'<p>Allow or deny, you go back to <strong class="destination">{escape(destination)}'
        "</strong>. If that is not the application you were using, deny.</p>"
        '<button type="submit" name="decision" value="allow">Allow</button>'
        '<button type="submit" name="decision" value="deny">Deny</button></form>',
    )


def problem_page(title: str, message: str) -> str:
    return page(title, f"<h1>{escape(title)}</h1><p>{escape(message)}</p>")
