"""The app's memo of per-record draws (core.engine.memo.RECORD_MEMO, pages/ui/cached._record_memo) and
SPLU-Gen's written-out layout (splu.LayoutTables): the same releases byte for byte with and without them.

Issue 15: a slider move on census 5M keeps what does not depend on the moved parameter (SDR's dealing
positions, SPLU-Gen's run positions, RP's draws); an upload's entries are private to its session.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from core import mechanisms
from core.engine import local
from core.engine import memo as record_memo
from core.engine.combos import LazyCombos
from core.mechanisms import MECHANISMS as MECHS
from core.mechanisms import splu
from core.release import manifest_bytes
from core.table import bind, load_table


def _bytes(release):
    cols = {f"{t}/{c}": np.asarray(v).tobytes() for t, tab in release.tables.items() for c, v in tab.columns.items()}
    return cols, manifest_bytes(release)


def _same_bytes_without_the_memo(monkeypatch, data, name, settings, with_memo) -> None:
    """Without the memo, in 1,500-record batches or in one, each setting's release is the memo's byte for byte."""
    monkeypatch.setattr(record_memo, "RECORD_MEMO", None)
    without = [mechanisms.sanitize(data, name, raw, 7, batch_rows=1500) for raw in settings]
    one_batch = [mechanisms.sanitize(data, name, raw, 7) for raw in settings]
    for x, y, z in zip(with_memo, without, one_batch):
        assert _bytes(x) == _bytes(y) == _bytes(z)


def _entries(lru):
    return [(k, e.scope) for k, e in lru._data.items() if e.kind == "per-record draws"]


SLIDES = [("splu", [{"gamma": 4}, {"gamma": 5}, {"gamma": 5, "p": 0.5}], ["age", "sex", "race"]),
          ("sdr", [{}, {"rho2": 0.3}, {"rho2": 0.4}], ["age", "sex", "race"]),
          # on two QIs RP resamples 3, 4 and 6 of the 18 micro groups (0 at lambda 0.1: plain UP)
          ("reconstruction", [{"lambda": 0.3}, {"lambda": 0.5}, {"lambda": 0.7}, {"lambda": 0.1}], ["sex", "race"])]


@pytest.mark.parametrize("name, settings, qi", SLIDES)
def test_remembered_draws_give_the_same_release_byte_for_byte(app_memo, monkeypatch, name, settings, qi):
    cached, lru, _ = app_memo
    data = bind(load_table("census:4000"), "occupation", qi)
    # small batches: several entries per purpose, each batch's own
    with_memo = [mechanisms.sanitize(data, name, raw, 7, batch_rows=1500) for raw in settings]
    kept = _entries(lru)
    assert kept, "the memo kept nothing"
    if name in ("sdr", "splu"):  # one entry for the whole table and seed
        assert [k[:2] for k, _ in kept] == [("sdr/places" if name == "sdr" else "splu/runs", 7)]
    else:
        batches = [k for k, _ in kept if k[0] == "rp/up"]
        assert {k[2] for k in batches} == {0, 1500, 3000}  # one entry per batch (key: purpose, seed, start, ...)
    for raw in settings:  # moving back and forth adds nothing: every setting reads the same entries
        mechanisms.sanitize(data, name, raw, 7, batch_rows=1500)
    assert len(_entries(lru)) == len(kept)
    _same_bytes_without_the_memo(monkeypatch, data, name, settings, with_memo)
    assert _bytes(with_memo[0]) != _bytes(with_memo[1])
    if name == "reconstruction":  # the groups' ranks came from the memo, not from the engine's batches
        assert [r.privacy["resampled_groups"] for r in with_memo] == [3, 4, 6, 0]
        assert any(k[0] == "rp/qi-ranks" for k, _ in kept)


def test_another_seed_or_dataset_is_another_entry(app_memo):
    cached, lru, _ = app_memo
    table = load_table("census:2000")
    one = bind(table, "occupation", ["age", "sex"])
    mechanisms.sanitize(one, "sdr", None, 1)
    first = len(_entries(lru))
    mechanisms.sanitize(one, "sdr", None, 2)
    assert len(_entries(lru)) == 2 * first
    other = bind(table, "education", ["age", "sex"])  # another SA: another Dataset object, its own entries
    got = mechanisms.sanitize(other, "sdr", None, 1)
    assert len(_entries(lru)) == 3 * first
    assert _bytes(got) != _bytes(mechanisms.sanitize(one, "sdr", None, 1))


def test_an_uploads_draws_stay_in_its_session_and_leave_with_it(app_memo):
    cached, lru, session = app_memo
    raw = load_table("census:1500").frame.to_csv(index=False).encode()
    a = bind(load_table(raw, "mine.csv"), "occupation", ["age", "sex"])  # an upload: not a bundled sample
    mechanisms.sanitize(a, "sdr", None, 3)
    assert {scope for _, scope in _entries(lru)} == {"session-a"}
    session["id"] = "session-b"  # another session uploads the same bytes: its own dataset, its own entries
    b = bind(load_table(raw, "mine.csv"), "occupation", ["age", "sex"])
    mechanisms.sanitize(b, "sdr", None, 3)
    assert {scope for _, scope in _entries(lru)} == {"session-a", "session-b"}
    lru.purge("session-a")  # session a ends
    assert {scope for _, scope in _entries(lru)} == {"session-b"}
    # a bundled sample's draws are shared
    sample = load_table("census:1000")
    cached._SAMPLE_TABLES.add(sample)  # as cached.sample_table registers the samples it loads
    mechanisms.sanitize(bind(sample, "occupation", ["age"]), "sdr", None, 3)
    assert None in {scope for _, scope in _entries(lru)}


def test_the_scope_is_the_planning_sessions_even_when_batches_run_on_other_threads(app_memo, monkeypatch):
    """The apply threads have no Streamlit session: the memo is bound (and scoped) when the plan is made."""
    cached, lru, session = app_memo
    monkeypatch.setattr(local, "APPLY_THREADS", 2)
    raw = load_table("census:3000").frame.to_csv(index=False).encode()
    data = bind(load_table(raw, "mine.csv"), "occupation", ["age", "sex"])
    mechanisms.sanitize(data, "reconstruction", None, 3, batch_rows=700)
    scopes = [scope for k, scope in _entries(lru) if k[0] == "rp/up"]  # UP's draws, kept by the apply threads
    assert len(scopes) == 5 and set(scopes) == {"session-a"}


@pytest.mark.parametrize("name", ["splu", "sdr", "reconstruction"])
def test_a_plan_with_a_memo_pickles_without_it(app_memo, name):
    data = bind(load_table("census:1000"), "occupation", ["age", "sex"])
    mech = MECHS[name]
    plan = mech.plan(LazyCombos(data), mech.resolve({}), 5)
    again = pickle.loads(pickle.dumps(plan))
    if name == "sdr":  # the kept places replace the engine's ranks; pickled, the engine ranks again
        assert plan.places is not None and plan.rank_by is None
        assert again.places is None and again.dealt is None and again.rank_by == "sa"
    elif name == "splu":
        assert plan.ranked is not None and plan.rank_by is None
        assert again.ranked is None and again.rank_by == "sa" and again.layout._tables is None
    else:
        assert plan.memo is not None and again.memo is None


@pytest.mark.parametrize("n, gamma", [(3001, 4), (4000, 7), (2999, 5), (257 * 6 + 5, 6)])
def test_splu_layout_tables_are_the_per_record_functions_written_out(n, gamma):
    data = bind(load_table(f"census:{n}"), "occupation", ["age", "sex"])
    lay = splu.DecoyLayout(np.bincount(data.sa_codes, minlength=data.m), gamma, 11, True)
    assert lay.mixed
    tab = lay.tables(threads=2)
    pos = np.arange(lay.n)
    group, slot = lay.group_and_slot(pos)
    assert np.array_equal(tab.group, group)
    assert np.array_equal(tab.extra[group] + gamma, lay.sizes(group))
    for s in range(gamma + 1):
        g = np.arange(lay.r) if s < gamma else lay.residual_rows
        assert np.array_equal(tab.values[s * lay.r + g], lay.member_values(g, np.full(len(g), s)))
    # each column's rows are a permutation of the groups (so the written-out inverse is the inverse)
    for c in range(gamma):
        assert np.array_equal(np.sort(tab.group[c * lay.r:(c + 1) * lay.r]), np.arange(lay.r))


@pytest.mark.parametrize("raw", [{"gamma": 4}, {"gamma": 6, "p": 0.4}, {"gamma": 3, "partition": "sorted"}])
def test_splu_release_is_the_same_with_and_without_the_tables(monkeypatch, raw):
    data = bind(load_table("census:5003"), "occupation", ["age", "sex"])
    fast = mechanisms.sanitize(data, "splu", raw, 2, batch_rows=999)
    plan = MECHS["splu"].plan(LazyCombos(data), MECHS["splu"].resolve(raw), 2)
    assert plan.use_tables == (raw.get("partition", "random") == "random")
    monkeypatch.setattr(splu, "TABLE_ROWS", 0)  # the per-record path (as on Dask or above the size cap)
    assert not MECHS["splu"].plan(LazyCombos(data), MECHS["splu"].resolve(raw), 2).use_tables
    slow = mechanisms.sanitize(data, "splu", raw, 2, batch_rows=999)
    assert _bytes(fast) == _bytes(slow)


GROUP_SLIDES = [("bucketization", [{"theta": 4.0}, {"theta": 4.5}, {"theta": 8.0, "max_bucket": 60}],
                 [("bucket/slot", 7), ("bucket/slot/published", 7)]),
                # every record's QI combination, and it and the SA codes in published order (MondrianPlan.in_order)
                ("mondrian", [{"beta": 0.1}, {"beta": 0.105}, {"beta": 0.2, "k": 30}],
                 [("qi-groups",), ("qi-groups/published", 7), ("sa/published", 7)])]


@pytest.mark.parametrize("name, settings, entries", GROUP_SLIDES)
def test_group_mechanisms_keep_their_records_places_and_publish_the_same_bytes(app_memo, monkeypatch, name,
                                                                                 settings, entries):
    """Bucketization's dealing slots (in input and in published order) and Mondrian's QI combinations are kept
    (whole-table entries made once for the three settings)."""
    cached, lru, _ = app_memo
    data = bind(load_table("census:4000"), "occupation", ["age", "sex", "race", "education"])
    with_memo = [mechanisms.sanitize(data, name, raw, 7, batch_rows=1500) for raw in settings]
    kept = [k for k, _ in _entries(lru)]
    assert sorted(k[:len(e)] for k, e in zip(kept, entries)) == sorted(entries) and len(kept) == len(entries)
    plan = MECHS[name].plan(LazyCombos(data), MECHS[name].resolve(settings[0]), 7)
    assert plan.rank_by is None  # the engine ranks nothing: the places come from the memo
    shipped = pickle.loads(pickle.dumps(plan))  # the Dask engine's copy holds no per-record array
    assert all(not (isinstance(v, np.ndarray) and len(v) == data.n) for v in vars(shipped).values())
    _same_bytes_without_the_memo(monkeypatch, data, name, settings, with_memo)
    assert _bytes(with_memo[0]) != _bytes(with_memo[2])
    shipped_out = local.run(data, shipped, 1500)  # the pickled plan (no memo) publishes the same table
    direct = local.run(data, plan, 1500)
    for t, tab in direct.tables.items():
        for c, v in tab.columns.items():
            assert np.array_equal(v, shipped_out.tables[t].columns[c]) and v.dtype == shipped_out.tables[t].columns[c].dtype


@pytest.mark.parametrize("per", [1, 3, 1 << 11])
def test_rp_duplicates_order_is_lexsorts(monkeypatch, per):
    """RP's scaling ranks a group's sampled records by their uniform with one integer sort: lexsort's order,
    ties (equal uniforms) by position, also for floats off the 53-bit grid (lexsort itself)."""
    from core.mechanisms import reconstruction as rp

    monkeypatch.setattr(rp, "_GROUPS_PER_SORT", per)
    gen = np.random.default_rng(5)
    for trial in range(60):
        k = int(gen.integers(1, 2000))
        group = np.sort(gen.integers(0, int(gen.integers(1, 400)), k))
        u = [gen.random(k), gen.integers(0, 3, k) / 4.0, gen.random(k) * 0.5 + 1e-20][trial % 3]
        new = np.ones(k, dtype=bool)
        new[1:] = group[1:] != group[:-1]
        first, gid = np.flatnonzero(new), np.cumsum(new) - 1
        assert np.array_equal(rp._by_group_then(u, gid, first), np.lexsort((u, group)))
