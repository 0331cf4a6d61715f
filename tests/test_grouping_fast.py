"""The faster Ambiguity/PriView group constructions (issue 27) give the groups the earlier code gave.

``tests/grouping_reference.py`` holds :func:`build_groups`,
:func:`_place_residue` and :func:`build_exact_groups` as they were before
the speed-up; each test builds the same grouping both ways from the same
seed and compares them record for record (releases are pinned byte for byte
by ``tests/test_release_corpus.py`` as well).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import grouping_reference as ref
from core.mechanisms import ambiguity_algorithm as amb
from core.table import load_dataset

BOUNDS = st.sampled_from([0.05, 0.1, 1 / 7, 0.2, 0.25, 1 / 3, 0.5, 1.0])


@st.composite
def tables(draw):
    n = draw(st.integers(0, 400))
    d = draw(st.integers(0, 4))
    domains = [draw(st.integers(1, 7)) for _ in range(d)]
    m = draw(st.integers(1, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    skew = draw(st.booleans())  # a dominant value: residue, dissolved groups, the extension path
    p = None
    if skew and m > 1:
        p = np.full(m, 0.5 / (m - 1))
        p[0] = 0.5
    qi = [rng.integers(0, dom, n) for dom in domains]
    sa = rng.choice(m, size=n, p=p) if n else np.zeros(0, np.int64)
    return qi, domains, sa, m


def _same(a: amb.Grouping, b: amb.Grouping) -> None:
    assert np.array_equal(a.group, b.group)
    assert (a.n_groups, a.residue, a.residue_placed, a.dissolved) == \
        (b.n_groups, b.residue, b.residue_placed, b.dissolved)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), BOUNDS, BOUNDS, st.sampled_from(["ambiguity", "priview"]), st.integers(1, 40),
       st.sampled_from([3, 16, 1024]), st.integers(0, 1000))
@pytest.mark.slow
def test_build_groups_same_as_before(table, alpha, beta, kind, candidates, batch, seed):
    qi, domains, sa, m = table
    args = (qi, domains, sa, m, beta, alpha)
    old = ref.build_groups(*args, kind=kind, candidates=candidates, rng=np.random.default_rng(seed), batch=batch)
    new = amb.build_groups(*args, kind=kind, candidates=candidates, rng=np.random.default_rng(seed), batch=batch)
    _same(old, new)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), BOUNDS, BOUNDS, st.integers(1, 40), st.booleans(), st.integers(0, 1000), st.data())
def test_build_exact_groups_same_as_before(table, alpha, beta, candidates, extend, seed, data):
    qi, domains, sa, m = table
    if not qi:
        return
    split = data.draw(st.integers(0, len(qi) - 1))
    args = (qi, domains, sa, m, split, alpha, beta, candidates)
    old = ref.build_exact_groups(*args, rng=np.random.default_rng(seed), extend=extend)
    new = amb.build_exact_groups(*args, rng=np.random.default_rng(seed), extend=extend)
    _same(old, new)


def test_the_reference_is_the_earlier_code_and_not_a_copy_of_the_new():
    # the comparison above could not fail if both names led to one function
    assert ref.build_groups is not amb.build_groups and ref.build_exact_groups is not amb.build_exact_groups
    assert ref._place_residue is not amb._place_residue


@pytest.mark.slow
def test_adult_groups_same_as_before():
    alpha, beta = 0.1, 0.1  # the Sanitize page's defaults
    data = load_dataset("adult", "occupation")
    args = (data.qi_codes, data.domains, data.sa_codes, data.m, beta, alpha)
    for kind in ("ambiguity", "priview"):
        _same(ref.build_groups(*args, kind=kind, rng=np.random.default_rng(7)),
              amb.build_groups(*args, kind=kind, rng=np.random.default_rng(7)))
    for split in amb.exact_split_candidates(data.domains, data.qi_codes, alpha)[:1]:
        exact = (data.qi_codes, data.domains, data.sa_codes, data.m, split, alpha, beta, data.n)
        _same(ref.build_exact_groups(*exact, rng=np.random.default_rng(7)),
              amb.build_exact_groups(*exact, rng=np.random.default_rng(7)))


def _release_bytes(release):
    from core.release import manifest_bytes

    cols = {f"{t}/{c}": np.asarray(v).tobytes() for t, tab in release.tables.items() for c, v in tab.columns.items()}
    return cols, manifest_bytes(release)


@pytest.mark.parametrize("construction", ["paper", "exact"])
def test_priview_groups_kept_between_alphas_give_the_same_release(app_memo, monkeypatch, construction):
    """PriView's groups are kept between slider moves of alpha within one group size (issue 27): each release is
    the one made without the memo, byte for byte, and the memo is hit (the second alpha computes nothing)."""
    from core import mechanisms
    from core.engine import memo as record_memo
    from core.table import bind, load_table

    cached, lru, _ = app_memo
    data = bind(load_table("census:3000"), "occupation", ["age", "sex", "race", "education"])
    alphas = [0.1, 0.105, 0.11, 0.115]  # ceil(1/alpha): 10, 10, 10, 9
    calls = []
    real = amb.build_groups if construction == "paper" else amb._exact_blocks
    monkeypatch.setattr(amb, real.__name__, lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    with_memo = [mechanisms.sanitize(data, "priview", {"alpha": a, "beta": 0.1, "construction": construction}, 5)
                 for a in alphas]
    splits = 1 if construction == "paper" else len(amb.exact_split_candidates(data.domains, data.qi_codes, 0.1))
    assert len(calls) == splits + (1 if construction == "paper" else
                                   len(amb.exact_split_candidates(data.domains, data.qi_codes, 0.115)))
    monkeypatch.setattr(record_memo, "RECORD_MEMO", None)
    without = [mechanisms.sanitize(data, "priview", {"alpha": a, "beta": 0.1, "construction": construction}, 5)
               for a in alphas]
    for x, y in zip(with_memo, without):
        assert _release_bytes(x) == _release_bytes(y)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.lists(BOUNDS, min_size=1, max_size=4), BOUNDS, st.integers(1, 40), st.sampled_from([3, 16, 1024]),
       st.integers(0, 1000))
@pytest.mark.slow
def test_ambiguity_groups_kept_between_alphas_are_build_groups(table, alphas, beta, candidates, batch, seed):
    """For a run of alphas on one table, the kept step 2 gives :func:`build_groups`'s grouping record for record,
    and the generator is left where :func:`build_groups` leaves it (the next draw is the same)."""
    qi, domains, sa, m = table
    kept = {}

    def memo(key, compute):
        if key not in kept:
            kept[key] = compute()
        return kept[key]

    for alpha in alphas:
        r_old, r_new = np.random.default_rng(seed), np.random.default_rng(seed)
        old = amb.build_groups(qi, domains, sa, m, beta, alpha, kind="ambiguity", candidates=candidates, rng=r_old,
                               batch=batch)
        calls = []
        real = amb.build_groups
        amb.build_groups = lambda *a, **k: (calls.append(1), real(*a, **k))[1]
        try:
            new = amb.ambiguity_groups(qi, domains, sa, m, beta, alpha, candidates=candidates, rng=r_new, memo=memo,
                                       batch=batch)
        finally:
            amb.build_groups = real
        _same(old, new)
        assert r_old.random() == r_new.random()


def test_the_kept_ambiguity_groups_take_both_paths():
    """Not vacuous: on fixed tables (a dominant value makes some groups fail), alphas that every group passes
    use the kept step 2 and alphas some group fails build the construction again, each equal to build_groups."""
    paths = {"kept": 0, "built": 0}
    real = amb.build_groups
    for seed in range(12):
        gen = np.random.default_rng(seed)
        n, domains, m = 300, [6, 7, 8], 5
        qi = [gen.integers(0, k, n) for k in domains]
        sa = gen.choice(m, size=n, p=[0.5, 0.2, 0.1, 0.1, 0.1])
        kept = {}

        def memo(key, compute):
            if key not in kept:
                kept[key] = compute()
            return kept[key]

        for alpha in (0.95, 0.7, 0.5, 0.03, 0.01):
            old = real(qi, domains, sa, m, 1 / 3, alpha, kind="ambiguity", candidates=4,
                       rng=np.random.default_rng(seed), batch=16)
            calls = []
            amb.build_groups = lambda *a, **k: (calls.append(1), real(*a, **k))[1]
            try:
                new = amb.ambiguity_groups(qi, domains, sa, m, 1 / 3, alpha, candidates=4,
                                           rng=np.random.default_rng(seed), memo=memo, batch=16)
            finally:
                amb.build_groups = real
            _same(old, new)
            paths["built" if calls else "kept"] += 1
    assert paths["kept"] >= 10 and paths["built"] >= 10, paths


@pytest.mark.slow
def test_ambiguity_groups_kept_between_alphas_give_the_same_release(app_memo, monkeypatch):
    """On Adult, slider moves of alpha use the kept step 2 (the construction runs once) and each release is the
    one made without the memo, byte for byte."""
    from core import mechanisms
    from core.engine import memo as record_memo

    data = load_dataset("adult", "occupation")
    alphas = [0.1, 0.105, 0.11, 0.2]
    calls = []
    real = amb._greedy
    monkeypatch.setattr(amb, "_greedy", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    with_memo = [mechanisms.sanitize(data, "ambiguity", {"alpha": a, "beta": 0.1}, 5) for a in alphas]
    assert len(calls) == 1
    monkeypatch.setattr(record_memo, "RECORD_MEMO", None)
    without = [mechanisms.sanitize(data, "ambiguity", {"alpha": a, "beta": 0.1}, 5) for a in alphas]
    assert len(calls) == 1 + len(alphas)
    for x, y in zip(with_memo, without):
        assert _release_bytes(x) == _release_bytes(y)


def test_smallest_size_is_the_first_size_the_presence_test_passes():
    import math

    for alpha in (0.01, 0.05, 0.1, 0.105, 1 / 7, 0.2, 1 / 3, 0.5, 0.999, 1.0):
        s = amb._smallest_size(alpha, 1000)
        log_alpha = math.log(alpha) + amb._TOL
        assert -np.log(float(s)) <= log_alpha
        assert s == 1 or not -np.log(float(s - 1)) <= log_alpha


def _sorted_schedule(remaining, slots, batch):
    """The bucket schedule as the paper's loop writes it: sort every count, largest first, for each group."""
    rem = list(map(int, remaining))
    rows = []
    while len(rows) < batch and sum(1 for r in rem if r) >= slots:
        top = sorted(range(len(rem)), key=lambda v: -rem[v])[:slots]
        rows.append(top)
        for v in top:
            rem[v] -= 1
    return np.array(rows, dtype=np.int64).reshape(-1, slots)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 60), min_size=1, max_size=14), st.integers(1, 14), st.integers(1, 100),
       st.integers(0, 400))
def test_heap_schedule_is_the_sorted_loop(counts, slots, batch, dominant):
    """The heap's schedule (issue 27) is the sorted loop's, row for row, ties by the smaller value; with one
    value far larger than the others (the dominant phase) and with level counts (the rotating phase)."""
    slots = min(slots, len(counts))
    counts = np.array(counts, dtype=np.int64)
    counts[0] += dominant
    got = amb._schedule(counts, slots, batch)
    assert np.array_equal(got, _sorted_schedule(counts, slots, batch))
