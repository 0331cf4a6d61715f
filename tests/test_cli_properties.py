"""Property test of the command line's contract (issue 12's harness).

Hypothesis draws small tables (odd column names included: commas, a
leading ``-``, ``--out=...``, spaces, Unicode) and ``sanitize`` argument
lists (known and unknown columns and mechanisms, valid and invalid
parameter values, seeds around the ends of their range, flags given twice,
good and bad output names).  Whatever it draws, the command either

* exits 0 with a release whose manifest's ``reproduce`` command, run in a
  fresh folder holding the same input file, writes the same files byte for
  byte; or
* exits 2 with exactly one line on stderr and writes nothing;

never another exit code, never a traceback.  The reproduce command is split
with :func:`shlex.split` (POSIX shell rules) and run in this process;
``test_cli.test_reproduce_command_survives_any_column_name`` runs it
through bash.
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from core.mechanisms import MAX_SEED, MECHANISMS
from core.params import format_value
from test_cli import run_inprocess

NAMES = ["age", "sex", "s", "a,b", "-dx", "--out=x.csv", "city name", "città", "x\\y", "=cmd", "--"]
VALUES = ["a", "b", "c", "d", "=1+1", "https://e.x", "é", "<b>x</b>"]


@st.composite
def tables(draw):
    names = draw(st.lists(st.sampled_from(NAMES), min_size=2, max_size=4, unique=True))
    rows = draw(st.integers(3, 30))
    columns = {}
    for name in names:
        domain = draw(st.lists(st.sampled_from(VALUES), min_size=1 if draw(st.integers(0, 5)) == 5 else 2,
                               max_size=5, unique=True))
        # every value of the domain occurs (a column drawn freely is often one value: a refused SA)
        columns[name] = draw(st.permutations([domain[i % len(domain)] for i in range(rows)]))
    return pd.DataFrame(columns)


def _qi_arg(name: str) -> str:
    return "--qi=" + name.replace("\\", "\\\\").replace(",", "\\,")


def _often(draw, usual, rare, odds: int = 4):
    """``usual`` (drawn) most of the time, ``rare`` (drawn) once in ``odds``: most commands should succeed."""
    # sampled_from shrinks towards its first element, so the usual case is also the simple one
    return draw(rare) if draw(st.sampled_from([False] * (odds - 1) + [True])) else draw(usual)


@st.composite
def commands(draw, frame: pd.DataFrame):
    cols = list(frame.columns)
    data = _often(draw, st.just("in.csv"), st.just("missing.csv"), odds=10)
    argv: list[str] = ["sanitize", data]
    sa = _often(draw, st.sampled_from(cols), st.just("nope"), odds=10)
    argv.append(f"--sensitive={sa}")
    if draw(st.booleans()):
        others = [c for c in cols if c != sa] or cols
        qi = _often(draw, st.lists(st.sampled_from(others), min_size=1, max_size=3, unique=True),
                    st.lists(st.sampled_from(cols + ["nope"]), min_size=1, max_size=3, unique=True), odds=6)
        argv += [_qi_arg(q) for q in qi]
    mech = _often(draw, st.sampled_from(["uniform", "dbr", "laplace", "reconstruction"]),
                  st.sampled_from(sorted(MECHANISMS) + ["nope"]), odds=3)
    argv += ["--mechanism", mech]
    if mech in MECHANISMS and MECHANISMS[mech].params and draw(st.booleans()):
        p = draw(st.sampled_from(MECHANISMS[mech].params))
        bad = [str(v) for v in p.invalid_examples()] + ["1e308", "x" * 200]
        good = [format_value(p.default)] if p.default is not None else ["auto"]
        value = _often(draw, st.sampled_from(good), st.sampled_from(bad), odds=2)
        argv += ["--param", f"{p.name}={value}"]
    seed = _often(draw, st.one_of(st.none(), st.sampled_from([0, 1, 7, MAX_SEED])),
                  st.sampled_from([-1, MAX_SEED + 1]), odds=8)
    if seed is not None:
        argv += ["--seed", str(seed)]
    several = mech in MECHANISMS and MECHANISMS[mech].publishes == "tables"
    out = _often(draw, st.just("release") if several else st.sampled_from(["release.csv", "release.parquet"]),
                 st.sampled_from(["release.txt", "release.csv", "release"]), odds=8)
    argv += ["--out", out]
    if draw(st.sampled_from([False] * 9 + [True])):  # a flag given twice
        argv += draw(st.sampled_from([["--out", "other.csv"], ["--seed", "3"], ["--mechanism", "uniform"]]))
    return argv


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_sanitize_exits_0_with_a_reproducible_release_or_2_with_one_line(data):
    frame = data.draw(tables())
    argv = data.draw(commands(frame))
    with tempfile.TemporaryDirectory() as tmp:
        first, again = Path(tmp, "first"), Path(tmp, "again")
        first.mkdir()
        again.mkdir()
        frame.to_csv(first / "in.csv", index=False)
        shutil.copy(first / "in.csv", again / "in.csv")
        proc = run_inprocess(*argv, cwd=first)
        assert proc.returncode in (0, 2), (argv, proc.returncode, proc.stderr)
        assert "Traceback" not in proc.stderr
        event(f"exit {proc.returncode}")
        if proc.returncode == 2:
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
            assert sorted(p.name for p in first.iterdir()) == ["in.csv"], "a refused command wrote a file"
            return
        written = _files(first)
        manifests = [k for k in written if k.endswith("manifest.json")]
        assert len(manifests) == 1, written.keys()
        command = json.loads(written[manifests[0]])["reproduce"]
        args = shlex.split(command)
        assert args[:4] == ["python", "-m", "core", "sanitize"], command
        # write under the names this run used, so the two folders can be compared file by file
        out = argv[argv.index("--out") + 1]  # given once: a second --out is refused
        args[args.index("--out") + 1] = out
        redo = run_inprocess(*args[3:], cwd=again)
        assert redo.returncode == 0, (command, redo.stderr)
        assert _files(again) == written, command
