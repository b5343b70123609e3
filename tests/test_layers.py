"""Imports point one way (docs/architecture/layout.md): the import-linter contracts of
``pyproject.toml`` hold for the code, and each would fail on an arrow the wrong way.

The same contracts run as ``lint-imports``; here they run with the unit tests, on one graph
(grimp, without a cache) that the second test adds forbidden imports to.
"""

from __future__ import annotations

import ast
import copy
from pathlib import Path
from typing import Any

import grimp
import pytest
from importlinter import configuration
from importlinter.application.use_cases import read_user_options
from importlinter.contracts.forbidden import ForbiddenContract
from importlinter.contracts.independence import IndependenceContract
from importlinter.contracts.layers import LayersContract
from importlinter.domain.contract import Contract

configuration.configure()  # the library's own settings (its contracts time their checks)
ROOT = Path(__file__).resolve().parents[1]
# Read by the library's own reader, so the options mean here what they mean to lint-imports.
OPTIONS = read_user_options(str(ROOT / "pyproject.toml"))
SESSION: dict[str, Any] = OPTIONS.session_options
CONTRACT_TYPES: dict[str, type[Contract]] = {
    "layers": LayersContract,
    "forbidden": ForbiddenContract,
    "independence": IndependenceContract,
}
CONTRACTS = {options["id"]: options for options in OPTIONS.contracts_options}

# One import the wrong way per contract: each must break exactly the contract it names.
WRONG_WAY = {
    "layers": ("persistence.documents", "schema.documents"),
    "resolvers-rooms": ("resolvers.framework.invoke", "resolvers.services.processing.pipeline"),
    "outbound-one-way": ("engines.outbound.http", "engines.outbound.policy"),
    "service-rooms": (
        "resolvers.services.documents.document_views",
        "resolvers.services.rules.rule_runner",
    ),
    "resources-apart": ("resolvers.resources.integrations", "resolvers.resources.exports"),
    "faces-apart": ("app.rest.capabilities", "app.graphql.face"),
    "cli-client-light": ("app.cli.commands", "resolvers.framework.registry"),
    "faces-below-the-root": ("app.http.envelope", "app.host.main"),
    "schema-alone": ("schema.documents", "engines.currency"),
    "documents-surface": ("resolvers.resources.files", "persistence.documents.records"),
}


def graph() -> grimp.ImportGraph:
    return grimp.build_graph(
        *SESSION["root_packages"],
        exclude_type_checking_imports=SESSION.get("exclude_type_checking_imports") == "True",
        cache_dir=None,
    )


def contract(contract_id: str) -> Contract:
    options = CONTRACTS[contract_id]
    return CONTRACT_TYPES[options["type"]](
        name=options["name"], session_options=SESSION, contract_options=options
    )


@pytest.fixture(scope="module")
def code_graph() -> grimp.ImportGraph:
    return graph()


@pytest.mark.parametrize("contract_id", sorted(CONTRACTS))
def test_the_code_keeps_the_contract(code_graph: grimp.ImportGraph, contract_id: str) -> None:
    check = contract(contract_id).check(copy.deepcopy(code_graph), verbose=False)
    assert check.kept, f"{CONTRACTS[contract_id]['name']}: {check.metadata}"


@pytest.mark.parametrize("contract_id", sorted(WRONG_WAY))
def test_an_arrow_the_wrong_way_breaks_it(code_graph: grimp.ImportGraph, contract_id: str) -> None:
    importer, imported = WRONG_WAY[contract_id]
    for module in (importer, imported):
        assert code_graph.find_modules_directly_imported_by(module) is not None  # exists
    bent = copy.deepcopy(code_graph)
    bent.add_import(
        importer=importer, imported=imported, line_number=1, line_contents=f"import {imported}"
    )
    check = contract(contract_id).check(bent, verbose=False)
    assert not check.kept
    assert importer in str(check.metadata)


def test_type_hints_count(code_graph: grimp.ImportGraph) -> None:
    """An import under ``TYPE_CHECKING`` is an arrow like any other (``Context`` names the
    services container only so): a session that left them out would hide a hint pointing up."""
    assert code_graph.direct_import_exists(
        importer="resolvers.framework.context", imported="resolvers.framework.services"
    )


def test_every_contract_has_a_wrong_way_case() -> None:
    """A contract nobody has seen fail may check nothing: each gets its counter-example."""
    assert set(WRONG_WAY) == set(CONTRACTS)


def documents_internals_imported(root: Path) -> list[str]:
    """Imports of a ``persistence.documents`` module (not its package) under ``resolvers`` and
    ``app``, as ``path:line``, those under ``TYPE_CHECKING`` included."""
    found = []
    for package in ("resolvers", "app"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                elif isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                else:
                    continue
                if any(name.startswith("persistence.documents.") for name in names):
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_no_import_of_documents_internals_even_for_types() -> None:
    """A type hint must name the surface too (the contracts count imports under
    ``TYPE_CHECKING`` now; this reads the source, whatever the session says)."""
    assert documents_internals_imported(ROOT) == []


def test_an_internal_import_for_types_is_found(tmp_path: Path) -> None:
    module = tmp_path / "resolvers" / "hinted.py"
    module.parent.mkdir()
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from persistence.documents.records import StoredDocument\n"
        "from persistence.documents import Documents\n"
    )
    assert documents_internals_imported(tmp_path) == ["resolvers/hinted.py:3"]


def record_mappings_used(root: Path) -> list[str]:
    """Where code under ``resolvers`` and ``app`` names ``from_record`` (an import, a call, an
    attribute), as ``path:line``: mapping a stored record to the API's values is persistence's."""
    found = []
    for package in ("resolvers", "app"):
        for path in sorted((root / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names: list[str] = []
                if isinstance(node, ast.ImportFrom | ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.Name):
                    names = [node.id]
                elif isinstance(node, ast.Attribute):
                    names = [node.attr]
                if "from_record" in names:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    return found


def test_the_record_mapping_stays_in_persistence() -> None:
    """Reads return the API's values (``reads.document(s)``, a ``Page``'s documents, a
    ``Loaded``'s ``document``); nothing above persistence maps a record, nor can import the
    mapping from the package's surface."""
    import persistence.documents

    assert "from_record" not in persistence.documents.__all__
    assert not hasattr(persistence.documents, "from_record")
    assert record_mappings_used(ROOT) == []


def test_a_record_mapping_above_persistence_is_found(tmp_path: Path) -> None:
    module = tmp_path / "app" / "mapped.py"
    module.parent.mkdir()
    module.write_text(
        "from persistence.documents import records\n"
        "def shown(record):\n"
        "    return records.from_record(record)\n"
    )
    assert record_mappings_used(tmp_path) == ["app/mapped.py:3"]
