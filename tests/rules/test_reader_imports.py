"""The rule grammar's child process stays light: reading a sentence loads no HTTP client, no
server, no database and no wire contract.

``resolvers.services.rules.rule_reading`` reads sentences in a child process of its own so parsing
never holds the interpreter lock the API serves with; that child imports the grammar (and,
through its lexicon, every accounting connector's declaration for the products' names). A
declaration that imported its HTTP client, or a lexicon that reached for the server, would
make every reading process load them. Checked in a fresh interpreter, as the child starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("httpx", "starlette", "fastapi", "pydantic", "motor", "pymongo")
OURS_ABOVE = ("app", "resolvers", "persistence", "schema")

PROBE = """
import json, sys
from engines.rules.parser import read_rule
draft = read_rule("When an invoice from Google arrives, send it to QuickBooks")
print(json.dumps({"modules": sorted(sys.modules), "rule": draft.rule}))
"""


def loaded_by_reading() -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_reading_a_rule_loads_no_client_no_server_and_no_contract() -> None:
    found = loaded_by_reading()
    modules = {str(name) for name in found["modules"]}  # type: ignore[attr-defined]
    roots = {name.split(".")[0] for name in modules}
    assert roots.isdisjoint(HEAVY), sorted(roots & set(HEAVY))
    assert roots.isdisjoint(OURS_ABOVE), sorted(roots & set(OURS_ABOVE))
    # The connectors' declarations were read (the sentence names one) and their clients not.
    assert "engines.connectors.quickbooks" in modules
    assert not any(name.endswith(".client") for name in modules if "connectors" in name)
    assert "engines.connectors.base" not in modules
    rule = found["rule"]
    assert isinstance(rule, dict)
    assert rule["actions"] == [{"type": "send-to-integration", "integration": "quickbooks"}]
