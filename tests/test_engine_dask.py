"""The Dask engine (core/engine/dask.py): the local engine's release, byte for byte, and one sentence per failure.

A table of a few thousand rows, written as a Parquet dataset of three files
with small row groups and missing values, is sanitized by both engines
through the command line; the release folders (part files and manifest)
must be identical.  The parts are made small (PART_ROWS_LOG2 patched) so
that a release has several parts and the shuffle by order key is
exercised.  One test runs on a real ``dask scheduler`` with two
``dask worker`` processes started here on loopback and stopped by PID.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from core import cli
from core.engine import dask as dk
from core.engine import local
from core.mechanisms import MECHANISMS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
QI = "age,sex,edu,region"
PLANNED = [m.name for m in MECHANISMS.values() if getattr(m, "planned", False)]
UNPLANNED = [m.name for m in MECHANISMS.values() if not getattr(m, "planned", False)]


def _frame(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sex = rng.choice(["M", " F", "?"], n, p=[0.48, 0.48, 0.04]).astype(object)
    sex[rng.random(n) < 0.02] = None
    return pd.DataFrame({
        "age": rng.integers(17, 80, n),
        "sex": sex,
        "edu": rng.choice(["1", "2", "3", "10", "12"], n),
        "region": rng.choice([f"r{i}" for i in range(9)], n),
        "dx": rng.choice([f"d{i:02d}" for i in range(12)], n, p=np.r_[[0.2, 0.15], np.full(10, 0.065)]),
    })


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("dask") / "census"
    folder.mkdir()
    frame = _frame(3000, 5)
    for i, (lo, hi) in enumerate([(0, 1100), (1100, 1101), (1101, 3000)]):
        pq.write_table(pa.Table.from_pandas(frame.iloc[lo:hi], preserve_index=False),
                       folder / f"part-{i}.parquet", row_group_size=300)
    return folder


@pytest.fixture(scope="module")
def cluster():
    from distributed import LocalCluster

    dk.quiet()
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as c:
        yield c.scheduler_address


@pytest.fixture
def small_parts(monkeypatch):
    """About 1,000 records a part, so a few thousand rows make several parts on both engines."""
    monkeypatch.setattr(local, "PART_ROWS_LOG2", 10)


def _cli(capsys, *args) -> tuple[int, str, str]:
    rc = cli.main([str(a) for a in args])
    got = capsys.readouterr()
    return rc, got.out, got.err


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.name != "_run.json"}


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if p.name.startswith(".")]


def _sanitize(capsys, data, out, mech, *extra):
    return _cli(capsys, "sanitize", data, "--sa", "dx", "--qi", QI, "--mechanism", mech, "--seed", 11,
                "--out", out, *extra)


@pytest.mark.parametrize("mech", PLANNED)
def test_same_release_on_both_engines(table_dir, cluster, tmp_path, capsys, small_parts, mech):
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "local", mech)
    assert rc == 0, err
    rc, out, err = _sanitize(capsys, table_dir, tmp_path / "dask", mech, "--engine", "dask", "--scheduler", cluster,
                             "--partition-rows", 500)
    assert rc == 0, err
    assert "engine: dask" in out
    want, got = _files(tmp_path / "local"), _files(tmp_path / "dask")
    assert list(got) == list(want)
    for name in want:
        assert got[name] == want[name], f"{mech}: {name} differs between the engines"
    run = json.loads((tmp_path / "dask" / "_run.json").read_text())
    assert run["engine"] == "dask" and run["partitions"] >= 7 and run["workers"] == 2
    parts = [n for n in got if n.startswith("part-")]
    manifest = json.loads(got["_manifest.json"])
    assert len(parts) == run["parts"]
    if parts and "parts" in manifest["output"]:  # one per-record table: parts cut by order key, every record once
        assert len(parts) == manifest["output"]["parts"] >= 2
        frame = pd.concat([pd.read_parquet(tmp_path / "dask" / n) for n in parts])
        assert len(frame) == manifest["output"]["rows"] > 2000
    assert not _leftovers(tmp_path)


def test_banded_qis_same_release_on_both_engines(table_dir, cluster, tmp_path, capsys):
    bands = ["--band", "age=q4", "--band", "edu=5"]
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "local", "mondrian", *bands)
    assert rc == 0, err
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "dask", "mondrian", *bands, "--engine", "dask",
                           "--scheduler", cluster, "--partition-rows", 500)
    assert rc == 0, err
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")
    manifest = json.loads((tmp_path / "dask" / "_manifest.json").read_text())
    assert manifest["input"]["bands"] == {"age": {"method": "quantiles", "count": 4},
                                          "edu": {"method": "width", "width": 5}}


def test_release_does_not_depend_on_partitions(table_dir, cluster, tmp_path, capsys, small_parts):
    for rows in (300, 100_000):
        rc, _, err = _sanitize(capsys, table_dir, tmp_path / f"p{rows}", "uniform", "--engine", "dask",
                               "--scheduler", cluster, "--partition-rows", rows)
        assert rc == 0, err
    assert _files(tmp_path / "p300") == _files(tmp_path / "p100000")
    runs = [json.loads((tmp_path / f"p{r}" / "_run.json").read_text())["partitions"] for r in (300, 100_000)]
    assert runs == [12, 3]


@pytest.mark.parametrize("processes", ["", "1"])
def test_embedded_cluster_same_release(table_dir, tmp_path, capsys, small_parts, monkeypatch, processes):
    # the default embedded cluster (one worker of two threads in this process) and worker processes
    # (WORKBENCH_DASK_PROCESSES=1) write local's bytes; Mondrian's guarantee reads the written parts back
    monkeypatch.delenv("WORKBENCH_DASK_MEMORY", raising=False)
    monkeypatch.setenv("WORKBENCH_DASK_PROCESSES", processes)
    for mech in ("uniform", "mondrian"):
        rc, _, err = _sanitize(capsys, table_dir, tmp_path / f"local-{mech}", mech)
        assert rc == 0, err
        rc, out, err = _sanitize(capsys, table_dir, tmp_path / f"dask-{mech}", mech, "--engine", "dask",
                                 "--partition-rows", 500)
        assert rc == 0, err
        assert _files(tmp_path / f"dask-{mech}") == _files(tmp_path / f"local-{mech}")
        run = json.loads((tmp_path / f"dask-{mech}" / "_run.json").read_text())
        if processes:
            assert run["scheduler"] == "embedded LocalCluster on 127.0.0.1" and run["workers"] == 2
        else:
            assert run["scheduler"] == "embedded LocalCluster in this process" and run["threads"] == 2
    assert not _leftovers(tmp_path)


def test_release_table_reads_its_parts_back(table_dir, tmp_path, small_parts):
    # the Dask release's per-record table is the part files, read back in published order when asked for
    from core import mechanisms as M
    from core.table import load_dataset

    outcome = dk.sanitize(str(table_dir), "dx", QI.split(","), "uniform", None, 5, tmp_path / "dask",
                          partition_rows=500)
    table = outcome.release.tables["release"]
    assert isinstance(table, dk.PartsTable) and table.folder == tmp_path / "dask"
    data = load_dataset(str(table_dir), "dx", QI.split(","))
    want = M.sanitize(data, "uniform", None, 5).tables["release"]
    assert len(table) == len(want) and list(table.columns) == list(want.columns)
    for c in want.columns:
        assert np.array_equal(table.columns[c], want.columns[c]), c
    pd.testing.assert_frame_equal(table.to_frame(limit=50), want.to_frame(limit=50))


def test_bad_processes_setting_is_one_sentence(table_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("WORKBENCH_DASK_PROCESSES", "many")
    rc, out, err = _sanitize(capsys, table_dir, tmp_path / "out", "uniform", "--engine", "dask")
    assert rc == 2 and out == "" and err.count("\n") == 1 and "WORKBENCH_DASK_PROCESSES takes 1 or 0" in err
    assert not (tmp_path / "out").exists() and not _leftovers(tmp_path)


@pytest.mark.parametrize("mech", PLANNED)
def test_evaluate_same_answers_on_both_engines(table_dir, cluster, capsys, mech):
    base = ["evaluate", table_dir, "--sa", "dx", "--qi", QI, "--mechanism", mech, "--seed", 4,
            "--queries", 400, "--json"]
    rc, out, err = _cli(capsys, *base)
    assert rc == 0, err
    want = json.loads(out)
    rc, out, err = _cli(capsys, *base, "--engine", "dask", "--scheduler", cluster)
    assert rc == 0, err
    got = json.loads(out)
    assert got.pop("run")["engine"] == "dask"
    assert got == want
    assert sum(b["queries"] for b in got["bands"]) > 300


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start(args, folder: Path, log: str):
    """``dask ARGS`` as an operator starts it: from ``folder`` (not the checkout), no PYTHONPATH; output to ``log``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    with open(folder / log, "wb") as out:
        return subprocess.Popen([str(Path(sys.executable).parent / "dask"), *args], cwd=folder, env=env,
                                stdout=out, stderr=subprocess.STDOUT)


def _stop(procs):
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@pytest.fixture
def real_cluster(tmp_path_factory):
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (free port); stopped by their PIDs.

    Started from a temporary folder with PYTHONPATH unset, so the workers
    cannot import the checkout's ``core``: the engine must ship it.  Yields
    ``(address, scheduler process, folder of the logs)``.
    """
    from distributed import Client

    folder = tmp_path_factory.mktemp("cluster")
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    sched = _start(["scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], folder, "scheduler.log")
    workers = [_start(["worker", address, "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"], folder,
                      f"worker-{i}.log") for i in range(2)]
    try:
        dk.quiet()
        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=90)
            # the workers cannot import the checkout's core before the engine ships it
            assert client.run(importlib.util.find_spec, "core") == dict.fromkeys(client.scheduler_info()["workers"])
        yield address, sched, folder
    finally:
        _stop([*workers, sched])
    assert all(p.poll() is not None for p in [sched, *workers])


def _logged_errors(folder: Path) -> list[str]:
    return [f"{p.name}: {line}" for p in sorted(folder.glob("*.log"))
            for line in p.read_text(errors="replace").splitlines()
            if " - ERROR - " in line or " - WARNING - " in line or "Traceback" in line or "AssertionError" in line]


def test_real_scheduler_and_workers(table_dir, real_cluster, tmp_path, capsys, small_parts, monkeypatch):
    """Workers started from elsewhere without the checkout on their path get the code shipped; nothing logged."""
    address, _, logs = real_cluster
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "local", "uniform")
    assert rc == 0, err
    monkeypatch.chdir(table_dir.parent)  # relative paths: the workers run in another folder
    for run_no in range(2):  # the second run finds the code already shipped
        rc, out, err = _sanitize(capsys, f"./{table_dir.name}", tmp_path / f"dask{run_no}", "uniform",
                                 "--engine", "dask", "--scheduler", address, "--partition-rows", 700)
        assert rc == 0, err
        assert _files(tmp_path / f"dask{run_no}") == _files(tmp_path / "local")
        run = json.loads((tmp_path / f"dask{run_no}" / "_run.json").read_text())
        assert run["scheduler"] == address and run["workers"] == 2
    assert _logged_errors(logs) == []


def test_a_cluster_of_this_process_is_sent_nothing(cluster):
    """The fixture's LocalCluster has its scheduler here: shipping would put the zip on this process's path."""
    import core

    before = (list(sys.path), core.__file__)
    with dk.connect(cluster) as client:
        assert not any(n.startswith("workbench-core-") for n in client.scheduler_info().get("plugins", []) or [])
    assert (list(sys.path), core.__file__) == before


def test_ship_names_the_code_by_its_content():
    """The zip holds every module of ``core`` and the reloader; its name changes with its content."""
    import io
    import zipfile

    name, data = dk.package_zip()
    names = zipfile.ZipFile(io.BytesIO(data)).namelist()
    assert "core/engine/dask.py" in names and "core/mechanisms/__init__.py" in names
    assert f"{dk.RELOADER}.py" in names and not any("__pycache__" in n for n in names)
    assert name.startswith("workbench-core-") and name.endswith(".zip")
    assert dk.package_zip() == (name, data)


def test_reloader_drops_modules_of_another_copy(tmp_path, monkeypatch):
    """A ``core`` module loaded from elsewhere is dropped by the reloader; one loaded from its own folder stays."""
    import types

    here = tmp_path / "new"
    here.mkdir()
    (here / f"{dk.RELOADER}.py").write_text(dk._RELOADER_SOURCE)
    stale, fresh = types.ModuleType("core.stale_x"), types.ModuleType("core.fresh_x")
    stale.__file__ = str(tmp_path / "old" / "core" / "stale_x.py")
    fresh.__file__ = str(here / "core" / "fresh_x.py")
    monkeypatch.setitem(sys.modules, "core.stale_x", stale)
    monkeypatch.setitem(sys.modules, "core.fresh_x", fresh)
    saved = {k: v for k, v in sys.modules.items() if k == "core" or k.startswith("core.")}
    monkeypatch.syspath_prepend(str(here))
    try:
        __import__(dk.RELOADER)
        assert "core.stale_x" not in sys.modules and sys.modules["core.fresh_x"] is fresh
    finally:
        sys.modules.pop(dk.RELOADER, None)
        sys.modules.update(saved)  # the test's own process keeps its core


class _FakeClient:
    """A client whose workers lack pyarrow: shipping works, the warm-up's import fails."""

    def __init__(self, *args, **kwargs):
        self.plugins = []

    def register_plugin(self, plugin, name=None):
        self.plugins.append(name)

    def run(self, function, *args, **kwargs):
        raise ModuleNotFoundError("No module named 'pyarrow'", name="pyarrow")

    def run_on_scheduler(self, function, *args, **kwargs):
        return -1  # another process

    def close(self, timeout=None):
        pass


def test_workers_lacking_a_module_is_one_sentence(monkeypatch):
    import distributed

    monkeypatch.setattr(distributed, "Client", _FakeClient)
    monkeypatch.setattr(dk, "probe_scheduler", lambda *a, **k: None)  # the fake answers as a scheduler would
    with pytest.raises(dk.EngineError) as err:
        with dk.connect("tcp://127.0.0.1:1"):
            pass
    assert str(err.value) == ("The workers of the Dask scheduler at 'tcp://127.0.0.1:1' lack the Python module "
                              "'pyarrow'; install requirements.txt in the workers' Python environment.")


def test_a_module_missing_here_too_is_not_blamed_on_the_workers():
    with pytest.raises(ModuleNotFoundError):
        with dk.failures("tcp://127.0.0.1:1", 1000):
            raise ModuleNotFoundError("No module named 'no_such_module_here'", name="no_such_module_here")
    with pytest.raises(dk.EngineError, match="lack the Python module 'numpy'"):
        with dk.failures("tcp://127.0.0.1:1", 1000):
            raise ModuleNotFoundError("No module named 'numpy'", name="numpy")


def test_scheduler_dies_mid_run(table_dir, real_cluster, tmp_path, capsys, monkeypatch):
    address, sched, _ = real_cluster
    monkeypatch.setattr(dk, "CONNECT_TIMEOUT", 2)
    bind = dk.bind

    def bind_then_kill(*args, **kwargs):
        out = bind(*args, **kwargs)
        sched.kill()
        sched.wait()
        return out

    monkeypatch.setattr(dk, "bind", bind_then_kill)
    rc, out, err = _sanitize(capsys, table_dir, tmp_path / "dask", "uniform", "--engine", "dask",
                             "--scheduler", address)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1 and "Lost contact with the Dask scheduler" in err and "nothing was written" in err
    assert not (tmp_path / "dask").exists() and not _leftovers(tmp_path)


# ---------------------------------------------------------------- bad input: one sentence, exit 2, nothing left
def _refused(capsys, tmp_path, *args, expect: str):
    rc, out, err = _cli(capsys, *args)
    assert rc == 2 and out == "", err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert expect in err, err
    assert not (tmp_path / "out").exists() and not _leftovers(tmp_path)
    return err


def test_glob_matching_nothing(tmp_path, capsys):
    _refused(capsys, tmp_path, "sanitize", tmp_path / "nowhere" / "*.parquet", "--sa", "dx", "--qi", "age",
             "--mechanism", "uniform", "--out", tmp_path / "out", "--engine", "dask",
             expect="matches no file")


def test_partitions_with_different_schemas(table_dir, tmp_path, capsys):
    folder = tmp_path / "mixed"
    folder.mkdir()
    frame = _frame(200, 1)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / "a.parquet")
    other = frame.assign(dx=np.arange(200))
    pq.write_table(pa.Table.from_pandas(other, preserve_index=False), folder / "b.parquet")
    _refused(capsys, tmp_path, "sanitize", folder, "--sa", "dx", "--qi", "age", "--mechanism", "uniform",
             "--out", tmp_path / "out", "--engine", "dask", expect="schema")


def test_column_missing_in_some_partitions(tmp_path, capsys):
    folder = tmp_path / "missing"
    folder.mkdir()
    frame = _frame(200, 2)
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), folder / "a.parquet")
    pq.write_table(pa.Table.from_pandas(frame.drop(columns="region"), preserve_index=False), folder / "b.parquet")
    err = _refused(capsys, tmp_path, "sanitize", folder, "--sa", "dx", "--qi", "age,region", "--mechanism",
                   "uniform", "--out", tmp_path / "out", "--engine", "dask", expect="region")
    assert "b.parquet" in err or "some parts" in err


def test_scheduler_unreachable(table_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(dk, "CONNECT_TIMEOUT", 2)
    address = f"tcp://127.0.0.1:{_free_port()}"
    t0 = time.perf_counter()
    err = _refused(capsys, tmp_path, "sanitize", table_dir, "--sa", "dx", "--qi", QI, "--mechanism", "uniform",
                   "--out", tmp_path / "out", "--engine", "dask", "--scheduler", address, expect="cannot be reached")
    assert address in err and time.perf_counter() - t0 < 30


def test_worker_out_of_memory(table_dir, tmp_path):
    # the embedded cluster's workers get less memory than a Python process with numpy needs: the nanny kills them.
    # Run as a command with a time limit: a run that waited on its workers for good must fail here, not hang CI.
    env = {**os.environ, "WORKBENCH_DASK_MEMORY": "120MB"}
    done = subprocess.run([sys.executable, "-m", "core", "sanitize", str(table_dir), "--sa", "dx", "--qi", QI,
                           "--mechanism", "uniform", "--out", str(tmp_path / "out"), "--engine", "dask",
                           "--partition-rows", "4000"], capture_output=True, text=True, env=env, timeout=240,
                          cwd=Path(__file__).resolve().parents[1])
    err = done.stderr
    assert done.returncode == 2 and done.stdout == "", err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "out of memory" in err and "--partition-rows 1,000" in err
    assert not (tmp_path / "out").exists() and not _leftovers(tmp_path)


def _distributed_level() -> int:
    import logging

    return logging.getLogger("distributed.worker").getEffectiveLevel()


def test_worker_processes_stay_quiet_after_a_restart():
    # a worker the nanny restarts (after killing it for its memory) logs as it starts and stops: in CI a run
    # printed 52 lines of "distributed.worker - INFO" before its one sentence. Its level must come from its own
    # start, not from the silence the first workers got.
    import logging

    with dk.connect(processes=True, workers=1) as client:
        client.wait_for_workers(1, timeout=300)
        assert set(client.run(_distributed_level).values()) == {logging.CRITICAL}
        # under load a restart can outlast distributed's default wait: wait on the condition (the worker is
        # back), with a generous limit that is a safety net, not a timing assertion
        client.restart(timeout=300, wait_for_workers=True)
        client.wait_for_workers(1, timeout=300)
        levels = client.run(_distributed_level)
        assert len(levels) == 1 and set(levels.values()) == {logging.CRITICAL}


@pytest.mark.skipif(not UNPLANNED, reason="every mechanism has a plan")
def test_mechanism_without_plan_is_refused(table_dir, tmp_path, capsys):
    mech = MECHANISMS[UNPLANNED[0]]
    err = _refused(capsys, tmp_path, "sanitize", table_dir, "--sa", "dx", "--qi", QI, "--mechanism", mech.name,
                   "--out", tmp_path / "out", "--engine", "dask", expect="cannot run on the Dask engine")
    assert mech.title in err and "--engine local" in err


def test_dask_flags_need_the_dask_engine(table_dir, tmp_path, capsys):
    _refused(capsys, tmp_path, "sanitize", table_dir, "--sa", "dx", "--qi", QI, "--mechanism", "uniform",
             "--out", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:1", expect="--scheduler is for --engine dask")


def test_out_with_an_extension_is_refused(table_dir, tmp_path, capsys):
    _refused(capsys, tmp_path, "sanitize", table_dir, "--sa", "dx", "--qi", QI, "--mechanism", "uniform",
             "--out", tmp_path / "out.parquet", "--engine", "dask", expect="folder name without an extension")


@pytest.mark.parametrize("mech", PLANNED)
def test_evaluate_counts_the_release_on_its_distinct_rows(table_dir, capsys, monkeypatch, mech):
    """Dask evaluate never expands the release to one row per record (that cost 64 bytes a row at 100M)."""
    base = ["evaluate", table_dir, "--sa", "dx", "--qi", QI, "--mechanism", mech, "--seed", 4, "--queries", 400,
            "--json"]
    rc, out, err = _cli(capsys, *base)
    assert rc == 0, err
    want = json.loads(out)
    expanded = []
    real = dk.SummaryTable._expand
    monkeypatch.setattr(dk.SummaryTable, "_expand", lambda t, name: expanded.append(name) or real(t, name))
    rc, out, err = _cli(capsys, *base, "--engine", "dask")
    assert rc == 0, err
    got = json.loads(out)
    got.pop("run")
    assert got == want
    assert expanded == []


def test_embedded_cluster_allocates_arrow_memory_with_the_system_allocator(monkeypatch):
    """The in-process cluster's tasks free Arrow buffers to glibc (whose settings lean_allocators fixes)."""
    import pyarrow as pa

    monkeypatch.delenv("WORKBENCH_DASK_PROCESSES", raising=False)
    monkeypatch.delenv("WORKBENCH_DASK_MEMORY", raising=False)
    pa.set_memory_pool(pa.mimalloc_memory_pool())
    try:
        with dk.connect():
            assert pa.default_memory_pool().backend_name == "system"
    finally:
        pa.set_memory_pool(pa.mimalloc_memory_pool())


def test_merge_distinct_adds_the_counts_of_equal_rows():
    """The sort-based merge of partitions' distinct rows equals a group-by of all their records."""
    rng = np.random.default_rng(3)
    names = ["a", "b", "c"]
    frames, parts = [], []
    for n in [500, 0, 1200, 7]:
        rows = {"a": rng.integers(0, 30, n).astype(np.uint8), "b": rng.integers(0, 3, n).astype(np.uint8),
                "c": rng.integers(0, 300, n).astype(np.uint16)}
        frames.append(pd.DataFrame(rows))
        parts.append(dk.distinct_rows(rows, names))
    distinct, count = dk.merge_distinct(parts, names)
    want = pd.concat(frames).groupby(names).size().reset_index()
    for c in names:
        assert distinct[c].dtype == parts[0][0][c].dtype
        np.testing.assert_array_equal(distinct[c], want[c].to_numpy())
    np.testing.assert_array_equal(count, want[0].to_numpy())
    assert count.dtype == np.int64 and count.sum() == 1707


def test_combos_merged_from_partitions_are_the_whole_tables():
    """Combos.merge (integer counts merged by a stable sort) gives the combinations of all the records at once."""
    from core.engine.combos import Combos

    rng = np.random.default_rng(4)
    doms, m = (9, 3, 40), 5
    qi = [rng.integers(0, d, 3000).astype(np.uint8) for d in doms]
    sa = rng.integers(0, m, 3000).astype(np.uint8)
    whole = Combos.from_codes(qi, sa, doms, m)
    cuts = [0, 1000, 1000, 2999, 3000]
    merged = Combos.merge([Combos.from_codes([c[a:b] for c in qi], sa[a:b], doms, m) for a, b in zip(cuts, cuts[1:])])
    for got, want in zip((*merged.qi, merged.sa, merged.count), (*whole.qi, whole.sa, whole.count)):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _alternate_forms(monkeypatch):
    """Make part_task keep its parts in turn as distinct rows and as columns (both forms in one table)."""
    calls = []

    def kept(cols, names):
        calls.append(1)
        return dk.distinct_rows(cols, names) if len(calls) % 2 else ({c: cols[c] for c in names}, None)

    monkeypatch.setattr(dk, "kept_rows", kept)
    return calls


@pytest.mark.parametrize("form", ["columns", "distinct", "mixed"])
@pytest.mark.parametrize("mech", ["anatomy", "bucketization"])
def test_a_table_written_as_csv_is_neither_merged_nor_expanded_on_the_client(table_dir, tmp_path, capsys,
                                                                              monkeypatch, small_parts, mech, form):
    """Several tables (CSV each): the client keeps each part as it is, its columns or its distinct rows and
    counts (Anatomy's QIT at 100M rows cost 19 GB sorted and grouped again, then expanded for the manifest),
    never merged or expanded, and writes the local engine's files, manifest (and its verdict) included."""
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "local", mech)
    assert rc == 0, err
    calls = []
    if form == "mixed":
        calls = _alternate_forms(monkeypatch)
    else:  # no part is distinct enough for its columns / every part is
        monkeypatch.setattr(dk, "DISTINCT_SHARE", 1.0 if form == "distinct" else -1.0)
    merged, expanded, kept = [], [], []
    real_merge, real_item, real_joined = dk.merge_distinct, dk.SummaryTable._expand, dk.joined_table
    monkeypatch.setattr(dk, "merge_distinct", lambda *a, **k: merged.append(1) or real_merge(*a, **k))
    monkeypatch.setattr(dk.SummaryTable, "_expand", lambda t, n: expanded.append(n) or real_item(t, n))
    monkeypatch.setattr(dk, "joined_table", lambda *a: kept.append(real_joined(*a)) or kept[-1])
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "dask", mech, "--engine", "dask", "--partition-rows", 500)
    assert rc == 0, err
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")
    assert merged == [] and expanded == []
    ((table, bounds),) = kept
    qit = pd.read_csv(tmp_path / "local" / "qit.csv")
    assert len(table) == len(qit) == bounds[-1] > 2000 and len(bounds) > 3
    if form == "columns":  # the local engine's table: its columns in published order
        assert not isinstance(table, dk.SummaryTable)
        for c in qit.columns:
            labels = table.labels.get(c)
            got = np.asarray(labels)[table.columns[c]] if labels is not None else table.columns[c]
            assert pd.Series(got).astype(str).tolist() == qit[c].astype(str).tolist(), c
        return
    # distinct rows with their counts: every record once, its rows distinct within each part only
    assert isinstance(table, dk.SummaryTable) and int(table.count.min()) >= 1
    assert form != "mixed" or len(calls) == len(bounds) - 1 >= 3  # parts in both forms
    rows = pd.DataFrame({c: table.distinct[c] for c in table.names})
    labelled = {c: np.asarray(table.labels[c])[rows[c]] if table.labels.get(c) is not None else rows[c]
                for c in table.names}
    got = pd.DataFrame(labelled).assign(n=table.count).groupby(table.names)["n"].sum().sort_index()
    want = qit.astype(str).groupby(table.names).size().sort_index()
    got.index = got.index.set_levels([lv.astype(str) for lv in got.index.levels])
    assert got.sort_index().tolist() == want.tolist()


@pytest.mark.parametrize("mech", ["anatomy", "sdr", "splu"])
def test_plans_ranking_by_sa_value_count_no_combinations(table_dir, tmp_path, capsys, monkeypatch, mech):
    """Ranks by SA value need the SA codes only: counting the QI x SA combinations on the cluster first (as the
    local engine never did) was a pass over every record, 51 s of CPU for Anatomy at 100M rows."""
    counted = []  # (a spy on the task itself would run on a pickled copy)
    real = dk.ClusterCombos.combos
    monkeypatch.setattr(dk.ClusterCombos, "combos", property(lambda c: counted.append(1) or real.fget(c)))
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "local", mech)
    assert rc == 0, err
    rc, _, err = _sanitize(capsys, table_dir, tmp_path / "dask", mech, "--engine", "dask", "--partition-rows", 500)
    assert rc == 0, err
    assert counted == []
    assert _files(tmp_path / "dask") == _files(tmp_path / "local")


def test_each_bucket_owns_its_memory():
    """A partition's buckets are arrays of their own, not views of one gathered array, so each goes as soon as its
    part is written (at 100M rows Anatomy held every partition's result until the last part: 78 bytes a row)."""
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 2**63, 5000, dtype=np.uint64) * np.uint64(2)
    cols = {"a": rng.integers(0, 9, 5000).astype(np.uint8), "gid": np.arange(5000, dtype=np.int32)}
    buckets = dk.split_buckets(keys, cols, 3)
    assert len(buckets) == 8 and sum(len(b["_key"]) for b in buckets) == 5000
    for i, b in enumerate(buckets):
        assert (b["_key"] >> np.uint64(61) == i).all() and (np.diff(b["gid"]) > 0).all()  # input order kept
        assert np.array_equal(b["a"], cols["a"][b["gid"]]) and b["a"].dtype == np.uint8
        for other in buckets[i + 1:]:
            assert not any(np.shares_memory(b[c], other[c]) for c in b)


@pytest.mark.parametrize("kernel", [True, False])
def test_parts_are_appended_whole(tmp_path, monkeypatch, kernel):
    """A table's CSV parts joined into one file: in the kernel (copy_file_range) or, where it fails, by copying."""
    if not kernel:
        monkeypatch.setattr(os, "copy_file_range", lambda *a: (_ for _ in ()).throw(OSError(18, "cross-device")))
    rng = np.random.default_rng(5)
    parts = [rng.bytes(n) for n in (0, 1, 70_000, 3 << 20)]
    target = tmp_path / "t.csv"
    with open(target, "wb") as fh:
        fh.write(b"head\n")
        for i, data in enumerate(parts):
            path = tmp_path / f"p{i}"
            path.write_bytes(data)
            dk.append_file(path, fh)
    assert target.read_bytes() == b"head\n" + b"".join(parts)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_one_small_file_gives_the_same_manifest_whichever_reader(tmp_path, cluster, capsys, monkeypatch, fmt):
    """Issue 24 §5: a file under the column-by-column threshold is read whole by the local engine, and column by
    column by Dask (Parquet) or past the threshold (CSV); every reader names it by its bytes' hash (what
    ``sha256sum`` prints), so release and manifest are the same bytes."""
    import core.table

    frame = _frame(1500, 9)
    path = tmp_path / f"clinic.{fmt}"
    if fmt == "parquet":
        pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path)
    else:
        frame.to_csv(path, index=False)
    rc, _, err = _sanitize(capsys, path, tmp_path / "whole", "uniform")
    assert rc == 0, err
    if fmt == "parquet":
        rc, _, err = _sanitize(capsys, path, tmp_path / "columns", "uniform", "--engine", "dask",
                               "--scheduler", cluster)
    else:
        monkeypatch.setattr(core.table, "COLUMNAR_ROWS", 100)
        rc, _, err = _sanitize(capsys, path, tmp_path / "columns", "uniform")
    assert rc == 0, err
    want, got = _files(tmp_path / "whole"), _files(tmp_path / "columns")
    assert got == want
    manifest = json.loads(next(v for k, v in want.items() if k.endswith("manifest.json")))
    assert manifest["input"]["content_hash"] == hashlib.sha256(path.read_bytes()).hexdigest()[:16]
