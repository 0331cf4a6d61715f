"""core.lru: the byte-bounded cache the pages keep tables, datasets and releases in."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core import lru
from core.lru import BUDGET_MB, ByteLRU, budget_bytes, give_back_memory, nbytes
from core.table import Dataset, Table, bind, load_dataset, load_table


def test_nbytes_counts_arrays_once_and_views_not_at_all():
    a = np.zeros(1000, dtype=np.float64)
    assert nbytes(a) == 8000
    assert nbytes({"a": a, "b": a, "view": a[:10]}) == 8000 + nbytes("a") + nbytes("b") + nbytes("view")
    assert nbytes([a, np.ones(10, dtype=np.int32)]) == 8040


def test_nbytes_estimates_object_columns_from_a_sample():
    frame = pd.DataFrame({"x": np.arange(100_000), "s": [f"value {i % 7}" for i in range(100_000)]})
    exact = int(frame.memory_usage(index=True, deep=True).sum())
    assert nbytes(frame) == pytest.approx(exact, rel=0.05)


def test_nbytes_skips_the_table_behind_a_dataset_below_the_top():
    table = load_table("adult")
    data = bind(table, "occupation", ("age", "sex"))
    whole, own = nbytes(data), nbytes(data, skip=(Table, Dataset))
    assert own < whole
    assert whole - own == pytest.approx(nbytes(table), rel=0.01)
    assert own >= data.sa_codes.nbytes + sum(c.nbytes for c in data.qi_codes)


def test_byte_budget_evicts_least_recently_used():
    lru = ByteLRU(budget=10_000)
    for k in "abc":
        lru.get_or_compute(k, lambda: np.zeros(400, dtype=np.float64))  # 3200 bytes each
    lru.get_or_compute("a", lambda: pytest.fail("a is kept"))  # a is now the most recent
    lru.get_or_compute("d", lambda: np.zeros(400, dtype=np.float64))
    assert "b" not in lru and {"a", "c", "d"} <= set(lru._data)
    assert lru.total == 9600 <= lru.budget and lru.evictions == 1


def test_one_value_over_budget_is_kept_alone_then_goes_first():
    lru = ByteLRU(budget=1000)
    lru.get_or_compute("small", lambda: np.zeros(10))
    lru.get_or_compute("big", lambda: np.zeros(1000))
    assert list(lru._data) == ["big"] and lru.total == 8000
    lru.get_or_compute("small", lambda: np.zeros(10))
    assert list(lru._data) == ["small"] and lru.total == 80


def test_remeasure_sees_a_value_grow():
    lru = ByteLRU(budget=10**6)
    state: dict = {}
    lru.get_or_compute("r", lambda: state, remeasure=True)
    assert lru.total == 0
    state["index"] = np.zeros(100, dtype=np.int64)
    lru.get_or_compute("r", lambda: None, remeasure=True)
    assert lru.total == 800 + nbytes("index")


def test_purge_drops_one_scope_only():
    lru = ByteLRU(budget=10**6)
    lru.get_or_compute(("x", "s1"), lambda: np.zeros(10), scope="s1", kind="releases")
    lru.get_or_compute(("x", "s2"), lambda: np.zeros(20), scope="s2", kind="releases")
    lru.get_or_compute(("x", None), lambda: np.zeros(30), kind="tables")
    assert lru.purge("s1") == 1
    assert set(lru._data) == {("x", "s2"), ("x", None)}
    assert lru.stats() == {"releases": {"entries": 1, "bytes": 160}, "tables": {"entries": 1, "bytes": 240}}
    lru.clear()
    assert len(lru) == 0 and lru.total == 0


def test_a_key_is_computed_once_by_concurrent_callers_and_errors_are_not_kept():
    lru = ByteLRU(budget=10**6)
    calls = []

    def slow():
        calls.append(1)
        time.sleep(0.05)
        return np.zeros(3)

    threads = [threading.Thread(target=lru.get_or_compute, args=("k", slow)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1

    def fail():
        raise ValueError("no")

    with pytest.raises(ValueError):
        lru.get_or_compute("bad", fail)
    assert "bad" not in lru and not lru._computing


def test_negative_budget_is_refused_and_give_back_memory_runs():
    with pytest.raises(ValueError, match="0 or more"):
        ByteLRU(-1)
    give_back_memory()


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.setenv("WORKBENCH_CACHE_MB", "1.5")
    assert budget_bytes() == 1.5 * 2**20
    monkeypatch.delenv("WORKBENCH_CACHE_MB")
    assert budget_bytes() == BUDGET_MB * 2**20
    for bad in ("lots", "-1", "inf", "nan"):
        monkeypatch.setenv("WORKBENCH_CACHE_MB", bad)
        with pytest.raises(ValueError, match="WORKBENCH_CACHE_MB must be a number of megabytes"):
            budget_bytes()


def test_sticky_entries_go_after_every_other_entry():
    """A base entry (a table) is evicted only once no derived entry is left: evicting it first frees nothing."""
    lru = ByteLRU(300, size=lambda v: v.nbytes)
    lru.get_or_compute("table", lambda: np.zeros(150, dtype=np.uint8), sticky=True)
    lru.get_or_compute("release 1", lambda: np.zeros(100, dtype=np.uint8))
    lru.get_or_compute("release 2", lambda: np.zeros(100, dtype=np.uint8))  # the table is the oldest
    assert "table" in lru and "release 1" not in lru and "release 2" in lru
    assert lru.total <= 300
    lru.get_or_compute("big", lambda: np.zeros(250, dtype=np.uint8))  # only then does the table go
    assert "table" not in lru and "release 2" not in lru and lru.total == 250


@pytest.mark.parametrize("raw", ["lots", "0", "-5", "40000", "1.5"])
def test_a_bad_mmap_threshold_setting_names_the_variable(monkeypatch, raw):
    monkeypatch.setenv("WORKBENCH_MMAP_KB", raw)
    with pytest.raises(ValueError, match="WORKBENCH_MMAP_KB must be a whole number of KiB from 1 to 32768"):
        lru.fix_mmap_threshold()


def test_the_mmap_threshold_setting_is_used(monkeypatch):
    import sys

    monkeypatch.setenv("WORKBENCH_MMAP_KB", "256")
    try:
        assert lru.fix_mmap_threshold() is sys.platform.startswith("linux")
    finally:
        monkeypatch.delenv("WORKBENCH_MMAP_KB")
        lru.fix_mmap_threshold()  # back to the default for the rest of the run


def test_large_tables_raise_the_mmap_threshold_while_they_are_computed_on(thresholds):
    """Raised once for any number of concurrent large computations, put back at rest when the last ends."""
    calls = thresholds
    with lru.large_arrays(lru.LARGE_ROWS - 1):
        assert calls == []  # a small table: nothing changes
    with lru.large_arrays(5_000_000):
        assert calls == [lru.LARGE_MMAP_KB * 1024]
        with lru.large_arrays(2_000_000):
            assert calls == [lru.LARGE_MMAP_KB * 1024]
        assert calls == [lru.LARGE_MMAP_KB * 1024]
        lru.fix_mmap_threshold(256 * 1024)  # a new resting value while raised: applied when the last ends
        assert calls == [lru.LARGE_MMAP_KB * 1024]
    assert calls == [lru.LARGE_MMAP_KB * 1024, 256 * 1024]
    with pytest.raises(RuntimeError):
        with lru.large_arrays(5_000_000):
            raise RuntimeError("a failed computation")
    assert calls[-1] == 256 * 1024 and lru._LARGE == [0]  # put back after a failure too


def test_free_heap_is_handed_back_when_large_computations_pause(monkeypatch, thresholds):
    """malloc_trim(0) IDLE_TRIM_SECONDS after the last large computation ends; not for a small table, not mid-run."""
    import threading

    trimmed = threading.Event()
    monkeypatch.setattr(lru, "_TRIM", lambda pad: trimmed.set())
    monkeypatch.setattr(lru, "_IDLE_TIMER", [None])
    monkeypatch.setattr(lru, "IDLE_TRIM_SECONDS", 60.0)
    with lru.large_arrays(lru.LARGE_ROWS - 1):
        pass
    assert lru._IDLE_TIMER[0] is None  # a small table: nothing to give back
    with lru.large_arrays(5_000_000):
        assert lru._IDLE_TIMER[0] is None and not lru.trim_if_idle()  # not while it runs
    first = lru._IDLE_TIMER[0]
    assert first is not None and not first.finished.is_set()
    with lru.large_arrays(5_000_000):  # the next move within the pause: the pending give-back waits for its end
        pass
    second = lru._IDLE_TIMER[0]
    assert first.finished.is_set() and second is not first and not trimmed.is_set()
    second.cancel()
    monkeypatch.setattr(lru, "IDLE_TRIM_SECONDS", 0.01)
    with lru.large_arrays(5_000_000):
        pass
    assert trimmed.wait(30)  # handed back once the pause is long enough
    trimmed.clear()
    assert lru.trim_if_idle() and trimmed.is_set()


def test_the_pages_cache_computes_on_a_large_table_with_the_threshold_raised(monkeypatch, thresholds):
    from pages.ui import cached

    calls = thresholds
    calls.clear()  # (importing the pages' cache the first time fixes the resting threshold)
    data = load_dataset("adult")
    monkeypatch.setattr(lru, "LARGE_ROWS", data.n + 1)  # this table is small: nothing changes
    cached.release(data, data.key, "uniform", cached.items({"p": 0.31}), 5)
    assert calls == []
    monkeypatch.setattr(lru, "LARGE_ROWS", data.n)  # now it counts as large
    cached.release(data, data.key, "uniform", cached.items({"p": 0.32}), 5)
    assert calls == [lru.LARGE_MMAP_KB * 1024, 128 * 1024]


def test_the_pages_keep_one_release_of_a_large_table(monkeypatch):
    """On a table of LARGE_ROWS records or more, a slider moved through three settings keeps the last release
    only (issue 27's memory: census 5M kept nine, 640 MB); on a smaller table all three stay."""
    from pages.ui import cached

    data = load_dataset("adult")
    cached.store().clear()
    for p in (0.41, 0.42, 0.43):
        cached.release(data, data.key, "uniform", cached.items({"p": p}), 5)
    assert cached.store().stats()["releases"]["entries"] == 3
    cached.store().clear()
    monkeypatch.setattr(lru, "LARGE_ROWS", data.n)  # Adult counts as large
    keys = [cached.release.key(data, data.key, "uniform", cached.items({"p": p}), 5) for p in (0.41, 0.42, 0.43)]
    for p in (0.41, 0.42, 0.43):
        cached.release(data, data.key, "uniform", cached.items({"p": p}), 5)
    stats = cached.store().stats()
    assert "releases" not in stats and stats["releases of large tables"]["entries"] == cached.LARGE_RELEASES == 1
    assert [k in cached.store() for k in keys] == [False, False, True]


def test_the_page_cache_counts_an_evaluation_without_its_shared_workload():
    """Each cached evaluation holds the workload it answered, which is cached once under its own key: counted in
    every evaluation, a map of 47 settings on Adult charged the budget about 230 MB for one 5 MB workload."""
    from core import evaluate, mechanisms
    from pages.ui.cached import NOT_OWNED

    data = load_dataset("adult")
    wl = evaluate.make_workload(data, "seed000", queries=2000, seed=1)
    ev = evaluate.evaluate_release(mechanisms.sanitize(data, "uniform", None, 1), wl)
    whole, shared = nbytes(ev), nbytes(wl)
    assert shared > 1_000_000
    assert nbytes(ev, skip=NOT_OWNED) <= whole - shared + 1_000
    assert nbytes(wl, skip=NOT_OWNED) == shared  # the workload's own entry is counted in full


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_the_app_turns_transparent_huge_pages_off_for_its_process():
    """``pages.ui.cached`` (imported by every page) calls :func:`core.lru.no_huge_pages`: the server's process
    then reads PR_GET_THP_DISABLE as 1, where it read 0 before the import."""
    import subprocess

    probe = ("import ctypes, sys\n"
             "libc = ctypes.CDLL(None)\n"
             "libc.prctl(41, 0, 0, 0, 0)\n"  # on, whatever the parent (a test that imported the pages) left
             "before = libc.prctl(42, 0, 0, 0, 0)\n"
             "import pages.ui.cached\n"
             "print(before, libc.prctl(42, 0, 0, 0, 0))\n")
    got = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).resolve().parents[1],
                         capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.split() == ["0", "1"]


def test_at_most_so_many_entries_of_a_kind_are_kept_whatever_the_budget():
    """``most``: storing one more entry of the kind evicts its least recently used one, not the others' kinds."""
    lru = ByteLRU(10**9, size=lambda v: 1)
    lru.get_or_compute("t", lambda: "table", kind="tables")
    for k in ("a", "b"):
        lru.get_or_compute(k, lambda k=k: k, kind="big", most=2)
    lru.get_or_compute("a", lambda: "again")  # a hit: now b is the least recently used
    lru.get_or_compute("c", lambda: "c", kind="big", most=2)
    assert "b" not in lru and {"a", "c", "t"} <= set(lru._data) and lru.evictions == 1
    lru.get_or_compute("d", lambda: "d", kind="big", most=1)
    assert [k for k, e in lru._data.items() if e.kind == "big"] == ["d"] and "t" in lru


def test_at_most_so_many_bytes_of_a_kind_are_kept_whatever_the_budget():
    """``most_bytes``: the kind's least recently used entries go until it fits; other kinds and the new one stay."""
    lru = ByteLRU(10**9, size=len)
    lru.get_or_compute("t", lambda: "x" * 500, kind="tables")
    for k in ("a", "b", "c"):
        lru.get_or_compute(k, lambda: "x" * 40, kind="draws", most_bytes=100)
    assert [k for k, e in lru._data.items() if e.kind == "draws"] == ["b", "c"] and lru.evictions == 1
    lru.get_or_compute("b", lambda: "again")  # a hit: now c is the least recently used
    lru.get_or_compute("d", lambda: "x" * 60, kind="draws", most_bytes=100)
    assert [k for k, e in lru._data.items() if e.kind == "draws"] == ["b", "d"] and "t" in lru and lru.total == 600
    lru.get_or_compute("e", lambda: "x" * 150, kind="draws", most_bytes=100)  # larger than the cap: kept alone
    assert [k for k, e in lru._data.items() if e.kind == "draws"] == ["e"] and lru.total == 650


def test_the_pages_keep_a_bounded_share_of_per_record_draws(monkeypatch):
    """The record memo the pages install keeps at most RECORD_DRAWS_MB of draws, the most recent ones."""
    import numpy as np

    from core.engine import memo as record_memo
    from pages.ui import cached

    monkeypatch.setattr(cached, "RECORD_DRAWS_MB", 1)
    data = load_dataset("adult")
    memo = record_memo.RECORD_MEMO(data)
    for i in range(4):
        memo(("test/draws", i), lambda: np.zeros(300_000, dtype=np.uint8))  # 0.29 MB each
    kept = [k[1] for k, e in cached.store()._data.items() if e.kind == "per-record draws" and k[0] == "test/draws"]
    assert kept == [1, 2, 3]


class _ScanModel:
    """The cache as it was written first: every cap scans all entries.  The reference for the per-kind index."""

    def __init__(self, budget: int):
        from collections import OrderedDict

        self.budget, self.data = budget, OrderedDict()  # key -> (size, kind, sticky)

    def total(self) -> int:
        return sum(v[0] for v in self.data.values())

    def get(self, key) -> bool:
        if key in self.data:
            self.data.move_to_end(key)
            return True
        return False

    def put(self, key, size, kind, sticky, most, most_bytes) -> None:
        self.data.pop(key, None)
        self.data[key] = (size, kind, sticky)
        while self.total() > self.budget and len(self.data) > 1:
            oldest = next((k for k, v in self.data.items() if k != key and not v[2]), None)
            if oldest is None:
                oldest = next(k for k in self.data if k != key)
            del self.data[oldest]
        same = [k for k, v in self.data.items() if v[1] == kind and k != key]
        if most is not None:
            for k in same[:max(0, len(same) + 1 - max(1, most))]:
                del self.data[k]
            same = [k for k in same if k in self.data]
        if most_bytes is not None:
            held = sum(self.data[k][0] for k in same) + size
            for k in same:
                if held <= most_bytes:
                    break
                held -= self.data.pop(k)[0]


@pytest.mark.slow
def test_the_per_kind_caps_keep_what_a_scan_of_every_entry_keeps():
    # random stores and hits on four kinds, with and without caps, against the scanning reference
    from hypothesis import given, settings, strategies as st

    op = st.tuples(st.integers(0, 30), st.integers(1, 40), st.sampled_from("abcd"), st.booleans(),
                   st.sampled_from([None, 1, 3]), st.sampled_from([None, 50, 120]), st.booleans())

    @settings(max_examples=60, deadline=None)
    @given(st.integers(60, 400), st.lists(op, min_size=1, max_size=40))
    def check(budget, ops):
        cache, model = ByteLRU(budget, size=lambda v: v[0]), _ScanModel(budget)
        for key, size, kind, sticky, most, most_bytes, look in ops:
            if look:
                if model.get(key):  # a hit moves the key to the recent end of the whole cache and of its kind
                    cache.get_or_compute(key, lambda: pytest.fail("computed on a hit"))
                continue
            # a store: a kept key is purged first, so that the cache computes it again (the model drops it too)
            if key in cache:
                model.data.pop(key)
                cache.purge(("k", key))  # each key is its own scope
            model.put(key, size, kind, sticky, most, most_bytes)
            cache.get_or_compute(key, lambda: (size, kind), scope=("k", key), kind=kind, sticky=sticky,
                                 most=most, most_bytes=most_bytes)
            assert list(cache._data) == list(model.data)
            assert cache.total == model.total()
            per_kind = {k: sum(v[0] for v in model.data.values() if v[1] == k) for k in "abcd"}
            assert {k: cache._kind_bytes.get(k, 0) for k in "abcd"} == per_kind
            assert {k: list(cache._kinds.get(k, ())) for k in "abcd"} == \
                {k: [key for key, v in model.data.items() if v[1] == k] for k in "abcd"}

    check()
