"""Issue 24, item 6: the conftest check fails an unmarked test that uses more than its CPU limit, not a marked one.

The child runs with a limit of 0.4 s (the default is 1 s): the burner's
fixed work is about 2 s at a quiet pace, five times the limit, so the
check's allowance for a loaded machine (its CPU divided by how much slower
a reference piece of work runs now) cannot excuse it.  With the 1 s
default, a full CI run let the burner pass: its CPU, divided by the
slowdown the check measured at that moment, came under 1 s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

BURN = '''
import time
import pytest


def _burn():
    """A fixed piece of work, not a fixed CPU time (about 2 s on a quiet machine, more under load): the check
    charges a test at the machine's quiet pace."""
    total = 0
    for i in range(40_000_000):
        total += i
    return total


def test_unmarked_burner():
    _burn()


@pytest.mark.slow
def test_marked_burner():
    _burn()


def test_sleeper():
    time.sleep(1.5)  # wall time, no CPU: a loaded machine must not fail it


def test_quick():
    assert True
'''


@pytest.mark.slow  # runs pytest in a child on tests that burn about 4 s of CPU
def test_the_check_fails_only_the_unmarked_burner(tmp_path):
    shutil.copy(ROOT / "tests" / "conftest.py", tmp_path / "conftest.py")
    (tmp_path / "test_burn.py").write_text(BURN)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow\n    browser: browser\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT), "WORKBENCH_TEST_CPU_LIMIT": "0.4"},
                          capture_output=True, text=True,
                          timeout=600)
    out = proc.stdout
    assert "1 failed, 3 passed" in out, out[-2000:]
    assert "FAILED test_burn.py::test_unmarked_burner" in out
    assert "s of CPU (more than 0.4 s;" in out and "without @pytest.mark.slow" in out
