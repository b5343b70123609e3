"""Reading a statement is linear in its length: four times the lines, at most about four times
the Python calls (a place computed by counting siblings for every line made OFX and CAMT.053
quadratic: 20,000 OFX lines took minutes). Counted, not timed (``tests/work_budget.py``)."""

from __future__ import annotations

import pytest

from engines.statements import read_statement
from tests.statements.generated import FORMATS, rows_of
from tests.work_budget import call_budget


def calls_to_read(format: str, lines: int) -> int:
    data = FORMATS[format](rows_of(lines, seed=7))
    with call_budget(50_000_000) as counter:
        read = read_statement(data, max_lines=lines)
    assert len(read.statement.lines) == lines
    return counter.calls


@pytest.mark.parametrize("format", sorted(FORMATS))
def test_four_times_the_lines_is_about_four_times_the_work(format: str) -> None:
    small, large = calls_to_read(format, 500), calls_to_read(format, 2000)
    assert large <= 4.5 * small, (format, small, large)
