"""Email messages for the tests, built with the standard library."""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import make_msgid

ORDER_CONFIRMATION_HTML = """<html><head><style>td {padding: 2px}</style></head><body>
<h1>Thanks for your order!</h1>
<p>Order confirmation from Contoso Books Ltd</p>
<p>Order number: CB-889120 &middot; Date: 12 March 2024</p>
<table>
<tr><td>The Pragmatic Programmer</td><td>1</td><td>GBP 38.50</td></tr>
<tr><td>Clean Code</td><td>1</td><td>GBP 29.99</td></tr>
<tr><td>Subtotal</td><td></td><td>GBP 68.49</td></tr>
<tr><td>Shipping</td><td></td><td>GBP 4.00</td></tr>
<tr><td><b>Total</b></td><td></td><td><b>GBP 72.49</b></td></tr>
</table>
<p>Paid with Visa ending 4242</p>
</body></html>"""


def message(
    *,
    to: str,
    subject: str = "Fwd: your invoice",
    sender: str = "Carol Payer <carol@example.org>",
    text: str = "Please find the invoice attached.",
    html: str | None = None,
    attachments: list[tuple[str, str, bytes]] = (),  # type: ignore[assignment]
    message_id: str | None = None,
) -> EmailMessage:
    mail = EmailMessage()
    mail["From"] = sender
    mail["To"] = to
    mail["Subject"] = subject
    mail["Date"] = "Tue, 12 Mar 2024 10:00:00 +0000"
    mail["Message-ID"] = message_id or make_msgid(domain="example.org")
    mail.set_content(text)
    if html is not None:
        mail.add_alternative(html, subtype="html")
    for name, mime, data in attachments:
        maintype, subtype = mime.split("/")
        mail.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return mail


def malformed_multipart(to: str) -> bytes:
    """A multipart message cut off before its first boundary: its parts are missing."""
    return (
        f"From: carol@example.org\r\nTo: {to}\r\nSubject: broken\r\n"
        "Message-ID: <broken-1@example.org>\r\nMIME-Version: 1.0\r\n"
        'Content-Type: multipart/mixed; boundary="XYZ"\r\n\r\n'
        "This is the preamble but the parts never arrive.\r\n"
    ).encode()
