"""What an assistant pays before its first question: the size of ``tools/list`` on ``/mcp``.

Lists the tools the way a client does (``POST /mcp`` with ``tools/list``, no token: the full
listing, everything a full-scope token may call) through the MCP face on an in-process ASGI
app, and prints per tool its bytes (compact JSON, as sent) and the share of the input schema,
the output schema and the description, then the median tool and the whole response body. Sizes
are deterministic; the load average is printed anyway, as beside every figure.

    .venv/bin/python bench/mcp_tools.py                     # the default listing
    .venv/bin/python bench/mcp_tools.py --toolsets documents,files
    .venv/bin/python bench/mcp_tools.py --save sizes.json   # keep per-tool bytes
    .venv/bin/python bench/mcp_tools.py --before bench/mcp_tools_before.json  # side by side

A token of about 4 bytes is the usual rule of thumb for JSON; the "≈ tokens" column uses it.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import httpx
from starlette.applications import Starlette

# Run as a script, sys.path[0] is bench/; the project root is what the imports need.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from app.mcp import mcp_routes
from resolvers import build_registry

ACCEPT = {"Accept": "application/json, text/event-stream"}
BYTES_PER_TOKEN = 4


def compact(value: Any) -> int:
    """Bytes of ``value`` as compact UTF-8 JSON (what a client stores and an LLM reads)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


async def listing(toolsets: str | None) -> tuple[list[dict[str, Any]], int]:
    """The tools of ``tools/list`` and the bytes of the whole response body."""
    app = Starlette(routes=mcp_routes(build_registry()))
    query = f"?toolsets={toolsets}" if toolsets else ""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        response = await http.post(
            f"/mcp{query}",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers=ACCEPT,
        )
    response.raise_for_status()
    body = response.json()
    if "error" in body:
        raise SystemExit(f"tools/list failed: {body['error']}")
    return body["result"]["tools"], compact(body)


def row(name: str, *cells: object) -> str:
    return f"  {name:<34}" + "".join(f"{cell!s:>9}" for cell in cells)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--toolsets", help="comma-separated toolsets (the ?toolsets= query)")
    parser.add_argument("--save", type=Path, help="write {tool: bytes, _total: bytes} here")
    parser.add_argument("--before", type=Path, help="a --save file to print beside (before)")
    options = parser.parse_args()

    tools, total = asyncio.run(listing(options.toolsets))
    sizes = {tool["name"]: compact(tool) for tool in tools}
    before: dict[str, int] = json.loads(options.before.read_text()) if options.before else {}

    print(f"tools/list on /mcp{'?toolsets=' + options.toolsets if options.toolsets else ''}")
    print(f"  load {' '.join(f'{value:.2f}' for value in os.getloadavg())}")
    header = ["bytes", "input", "output", "descr"] + (["before", "after/b"] if before else [])
    print(row("tool", *header))
    for tool in sorted(tools, key=lambda t: -sizes[t["name"]]):
        name = tool["name"]
        cells: list[object] = [
            sizes[name],
            compact(tool.get("inputSchema", {})),
            compact(tool["outputSchema"]) if "outputSchema" in tool else "-",
            len(tool.get("description", "").encode()),
        ]
        if before:
            old = before.get(name)
            cells += [old or "-", f"{sizes[name] / old:.2f}" if old else "-"]
        print(row(name, *cells))
    median = statistics.median(sizes.values())
    print(row("median tool", f"{median:.0f}", *(["", "", "", ""] if not before else [])), end="")
    if before:
        old_median = statistics.median(v for k, v in before.items() if not k.startswith("_"))
        print(f"{'':>27}{old_median:>9.0f}{median / old_median:>9.2f}", end="")
    print()
    print(row("tools", len(tools)))
    print(row("whole response", total, f"≈{total // BYTES_PER_TOKEN} tokens"), end="")
    if before.get("_total"):
        print(f"  (before {before['_total']}, ratio {total / before['_total']:.2f})", end="")
    print()
    if options.save:
        options.save.write_text(json.dumps({**sizes, "_total": total}, indent=1) + "\n")


if __name__ == "__main__":
    main()
