"""The index table of the scaling page is what start-up creates (``scripts/index_reference.py``)."""

from __future__ import annotations

from scripts import index_reference


async def test_the_index_table_is_generated_from_the_declarations() -> None:
    """Every index ``Store.ensure_indexes`` creates, as created; regenerate with
    `python scripts/index_reference.py` after changing an index declaration."""
    rows = await index_reference.indexes()
    page = index_reference.PAGE.read_text()
    assert index_reference.with_table(page, rows) == page, "run: python scripts/index_reference.py"
    # The fair claim's index and a TTL, as declared in persistence/jobs.py and persistence/oauth.py.
    assert (
        "| `jobs` | `workspace_status_run_after` | `workspaceId 1, status 1, runAfter 1` |  |"
        in page
    )
    assert "| `oauth_codes` | `code_ttl` | `expiresAt 1` | TTL 3600 s after the date |" in page
