"""Every bad input of ``tests/bad_inputs.py``: its exit code, its message, never a traceback.

Inputs are refused with exit code 2 *before* any metric is computed (``evaluate`` is replaced by
a stand-in that fails the case if it is reached); unusual but valid inputs reach the review.
The table in ``docs/bad_inputs.md`` is written from the same cases by
``scripts/bad_inputs_table.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bad_inputs import ACCEPTED, CASES, run_case

ROOT = Path(__file__).resolve().parents[1]


def test_cases_have_unique_names_and_there_are_at_least_60():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    assert len(CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input(case, tmp_path):
    outcome = run_case(case, tmp_path)
    assert not outcome.traceback, outcome.output
    assert outcome.code == case.expect, outcome.output or outcome.notices
    if case.expect == ACCEPTED:
        assert any(re.search(case.match, n) for n in outcome.notices or [""]), outcome.notices
    else:
        assert re.match(r"(synthreview( review)?: )?error: ", outcome.message), outcome.output
        assert re.search(case.match, outcome.message), outcome.message


@pytest.mark.slow
@pytest.mark.parametrize("name", ["missing_real", "inf_real"])
def test_module_entry_point_gives_the_same_exit_code(name, tmp_path):
    """``python -m synthreview review`` (not only main()) exits 2 with one error line."""
    case = next(c for c in CASES if c.name == name)
    argv = [*case.build(tmp_path), "--out", str(tmp_path / "out")]
    done = subprocess.run(
        [sys.executable, "-m", "synthreview", "review", *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert re.search(case.match, done.stderr)
