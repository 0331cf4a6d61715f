"""Singling out (issue 22 §1, core/singling_out.py): exact checks on hand-made tables, brute-force twins of the
fast counting and enumeration, a statistical check with a fixed seed, and the wiring into the risk block."""

from itertools import combinations

import numpy as np
import pandas as pd
import pytest

from core import mechanisms, risk, singling_out as so
from core.table import bind, make_table


def _space(d, sizes, numeric=()):
    values = tuple(np.arange(sizes[j], dtype=float) * 3.0 if j in numeric else None for j in range(d))
    return so.Columns(tuple(f"q{j}" for j in range(d)), values, tuple(sizes))


def test_every_combination_unique_singles_out_everyone():
    # 24 people, every (a, b, c) combination once: each person's full combination isolates them
    rows = np.array([(a, b, c) for a in range(2) for b in range(3) for c in range(4)], np.int64)
    space = _space(3, (2, 3, 4))
    out = so.attack(rows, rows, rows[:0], space, attacks=24, seed=(1,), n_cols=3)
    assert out.available == 24 and out.predicates == 24 and out.train_singled == 24
    preds, _ = so.multivariate(rows, space, 24, 3, np.random.default_rng(0))
    # the predicates isolate 24 different people: everyone
    hit = [int(np.flatnonzero((rows == preds.codes[q]).all(axis=1))[0]) for q in range(len(preds))]
    assert sorted(hit) == list(range(24))
    assert out.train.share == 1.0 and out.control.share == 0.0 and out.risk > 0.9 and out.high == 1.0


@pytest.mark.parametrize("k", [2, 3])
def test_every_combination_k_times_singles_out_no_one(k):
    base = np.array([(a, b, c) for a in range(3) for b in range(2) for c in range(5)], np.int64)
    rows = np.repeat(base, k, axis=0)
    space = _space(3, (3, 2, 5), numeric=(2,))  # thresholds on the numeric QI cannot split a group either
    for n_cols in (1, 2, 3):
        out = so.attack(rows, rows, rows, space, attacks=50, seed=(0,), n_cols=n_cols)
        assert out.available == 0 and out.train_singled == 0 and out.risk == 0.0
    assert so.attack(rows, rows, rows, space, 50, (0,), mode="univariate").predicates == 0
    # every equality predicate on any set of QIs matches a multiple of k people, never exactly one
    for c in (1, 2, 3):
        for cols in combinations(range(3), c):
            p = so.Predicates(np.tile(cols, (len(base), 1)), np.zeros((len(base), c), np.int64), base[:, cols])
            assert (so.count_brute_force(rows, p, space) % k == 0).all()


def test_one_unique_person_among_duplicates_is_the_only_one_singled_out():
    rows = np.repeat(np.array([(0, 0), (0, 1), (1, 0)], np.int64), 2, axis=0)
    rows = np.vstack([rows, [(1, 1)]])  # the one person alone on (q0, q1)
    out = so.attack(rows, rows, rows[:0], _space(2, (2, 2)), attacks=10, seed=(0,), n_cols=2)
    assert out.available == 1 and out.train_singled == 1 and out.train.share == 0.1
    uni = so.univariate(rows, _space(2, (2, 2)), 10, np.random.default_rng(0))
    assert len(uni) == 0  # each value alone is shared


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_count_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    space = _space(4, (5, 3, 7, 2), numeric=(0, 2))
    rows = np.stack([rng.integers(0, s, 400) for s in space.sizes], axis=1)
    n = 300
    cols = np.sort(np.argsort(rng.random((n, 4)), axis=1)[:, :2], axis=1)
    codes = np.stack([rng.integers(0, np.array(space.sizes)[cols[:, i]]) for i in range(2)], axis=1)
    ops = np.where(np.isin(cols, (0, 2)), rng.integers(0, 6, (n, 2)), rng.integers(0, 2, (n, 2)))
    p = so.Predicates(cols, ops, codes)
    fast, (pq, pr) = so.count(rows, p, space, pairs=True)
    np.testing.assert_array_equal(fast, so.count_brute_force(rows, p, space))
    np.testing.assert_array_equal(np.bincount(pq, minlength=n), fast)  # the pairs are the matching rows
    q = int(np.argmax(fast))
    ok = np.ones(len(rows), bool)
    for j, op, c in zip(cols[q], ops[q], codes[q]):
        v = space.values[j]
        ok &= so._compare(int(op), rows[:, j] if v is None else v[rows[:, j]], c if v is None else v[c])
    assert sorted(pr[pq == q]) == list(np.flatnonzero(ok))


@pytest.mark.parametrize("seed", [0, 1])
def test_enumeration_matches_brute_force(seed):
    """Every (row, columns) predicate anonymeter's draw could keep, found by brute force."""
    rng = np.random.default_rng(seed)
    space = _space(4, (6, 3, 4, 9), numeric=(0, 3))  # two numeric QIs: both the fast path and the fallback
    rows = np.stack([rng.integers(0, s, 150) for s in space.sizes], axis=1)
    med = so._medians(rows, space)
    expect = set()
    for r in range(len(rows)):
        for cols in combinations(range(4), 3):
            ops = [so.EQ if space.values[j] is None else (so.GE if space.values[j][rows[r, j]] > med[j] else so.LE)
                   for j in cols]
            p = so.Predicates(np.array([cols]), np.array([ops]), rows[r, list(cols)][None, :])
            if so.count_brute_force(rows, p, space)[0] == 1:
                expect.add((r, cols))
    preds, available = so.multivariate(rows, space, 10_000, 3, np.random.default_rng(0))
    assert available == len(expect) == len(preds)
    got = {(int(np.flatnonzero((rows[:, preds.cols[q]] == preds.codes[q]).all(axis=1)
                               & _holds(rows, preds, q, space))[0]), tuple(preds.cols[q])) for q in range(len(preds))}
    assert got == expect


@pytest.mark.parametrize("dense", [True, False])
def test_both_ways_of_grouping_count_the_same(monkeypatch, dense):
    """Rows are grouped by one bincount over the key space when it is small beside the rows, by sorting their keys
    otherwise (``so._dense``; a survey table of 840 rows with three numeric QIs spent 0.7 s of a risk measurement
    zeroing and scanning 4M cells).  Either way: the same groups in the same order, and the counts and the
    enumeration brute force finds."""
    rng = np.random.default_rng(5)
    space = _space(4, (40, 3, 70, 2), numeric=(0, 2))
    rows = np.stack([rng.integers(0, s, 300) for s in space.sizes], axis=1)
    real = so._dense
    want = [so._groups(rows, cols, space) for cols in ((0, 2), (0, 1, 2, 3), (1,))]
    monkeypatch.setattr(so, "_dense", lambda cells, n: dense)
    for cols, expect in zip(((0, 2), (0, 1, 2, 3), (1,)), want):
        for a, b in zip(so._groups(rows, cols, space), expect):
            np.testing.assert_array_equal(a, b)
    test_count_matches_brute_force(0)
    test_enumeration_matches_brute_force(0)
    assert real(4_000_000, 840) is False and real(210, 400) is True and real(600_000, 100_000) is True


@pytest.mark.parametrize("seed", range(4))
def test_two_thresholds_isolate_exactly_the_rows_counting_finds(seed):
    """The quadrant rule for two numeric QIs (so._isolating_pair) against counting every predicate."""
    rng = np.random.default_rng(seed)
    sizes = (int(rng.integers(4, 12)), int(rng.integers(1, 4)), int(rng.integers(8, 30)), int(rng.integers(1, 5)))
    space = _space(4, sizes, numeric=(0, 2))
    if seed % 2:  # two codes with one value (labels "7" and "7.0"): equal as numbers
        space = so.Columns(space.names, (space.values[0], None, np.floor(np.arange(sizes[2]) / 2.0), None), sizes)
    n = int(rng.integers(40, 250))
    isolated = 0
    rows = np.stack([rng.integers(0, s, n) for s in space.sizes], axis=1)
    rows[: n // 10] = rows[n // 10: 2 * (n // 10)]  # exact duplicates: never isolated
    for cols in ((0, 2), (0, 1, 2), (0, 2, 3), (0, 1, 2, 3)):
        who = rng.choice(n, size=min(n, 120), replace=False)
        ops = np.where(np.isin(cols, (0, 2)), rng.choice([so.GE, so.LE], (len(who), len(cols))), so.EQ)
        numeric = [i for i, j in enumerate(cols) if j in (0, 2)]
        fast = so._isolating_pair(rows, who, cols, ops, space, numeric)
        p = so.Predicates(np.tile(np.asarray(cols), (len(who), 1)), ops, rows[who][:, list(cols)])
        np.testing.assert_array_equal(fast, so.count_brute_force(rows, p, space) == 1)
        assert (~fast).any()
        isolated += int(fast.sum())
    assert isolated > 0


def _holds(rows, preds, q, space):
    ok = np.ones(len(rows), bool)
    for j, op, c in zip(preds.cols[q], preds.ops[q], preds.codes[q]):
        v = space.values[j]
        ok &= so._compare(int(op), rows[:, j] if v is None else v[rows[:, j]], c if v is None else v[c])
    return ok


def _population(rng, n):
    """Five QIs, two skewed categorical and a numeric one with a long tail: many rare combinations."""
    return np.stack([rng.choice(8, n, p=np.r_[0.5, 0.2, 0.1, 0.08, 0.06, 0.03, 0.02, 0.01]),
                     rng.integers(0, 2, n), rng.choice(6, n, p=[0.4, 0.3, 0.15, 0.1, 0.04, 0.01]),
                     np.minimum(rng.geometric(0.08, n) - 1, 59), rng.integers(0, 3, n)], axis=1).astype(np.int64)


@pytest.mark.parametrize("seed", [2026, 1, 2])
def test_statistical_release_of_the_people_vs_release_of_others(seed):
    """Fixed seeds: a release of the training people's QIs singles them out far more than people held out; a
    release of *other* people from the same population (what a release teaches about the population only)
    singles out training and control people alike: with a control part as large as the training part (no size
    correction) its interval holds 0."""
    rng = np.random.default_rng(seed)
    space = so.Columns(tuple("abcde"), (None, None, None, np.arange(60, dtype=float), None), (8, 2, 6, 60, 3))
    train, control, other = _population(rng, 4000), _population(rng, 4000), _population(rng, 4000)
    own = so.attack(train, train, control, space, attacks=100, seed=(7,))
    assert own.predicates == 100 and own.train.share == 1.0 and own.low > 0.5
    alike = so.attack(other, train, control, space, attacks=100, seed=(7,))
    assert alike.correction is None and alike.low == 0.0 and alike.risk < 0.1, alike


def test_statistical_size_correction_with_a_small_control_part():
    """Seed 2026: a control part a quarter the size is corrected (anonymeter's fit) and the release of other
    people still shows no added risk; the uncorrected share would have shown one."""
    rng = np.random.default_rng(2026)
    space = so.Columns(tuple("abcde"), (None, None, None, np.arange(60, dtype=float), None), (8, 2, 6, 60, 3))
    train, control, other = _population(rng, 4000), _population(rng, 1000), _population(rng, 4000)
    alike = so.attack(other, train, control, space, attacks=100, seed=(7,))
    assert alike.correction is not None and alike.correction > 1.5
    assert alike.low == 0.0, alike
    raw = so.attack(other, train, control[:0], space, attacks=100, seed=(7,))  # no control people at all
    assert raw.risk > alike.risk


def test_probability_integral_matches_numerical_integration():
    from scipy.integrate import quad

    for n, lo, hi in [(100, 0.0, 0.05), (5000, 0.0, 1e-3), (40, 0.1, 0.9)]:
        num = quad(lambda w: n * w * (1 - w) ** (n - 1), lo, hi)[0]
        assert so.probability_integral(n, lo, hi) == pytest.approx(num, rel=1e-7)


# ---------------------------------------------------------------------- wiring: assess, the block, mechanisms
@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(5)
    n = 1500
    frame = pd.DataFrame({"age": rng.integers(18, 80, n), "job": rng.choice(list("abcdefg"), n),
                          "sex": rng.choice(["f", "m"], n), "s": rng.choice(list("uvwxyz"), n)})
    return bind(make_table(frame, "t"), "s", ["age", "job", "sex"])


def test_every_mechanism_declares_its_per_person_table(small):
    applicable = set()
    for name, mech in mechanisms.MECHANISMS.items():
        try:
            rel = mechanisms.sanitize(small, name, {}, 0)
        except Exception:  # not eligible on this table with its defaults
            continue
        if mech.record_table is None:
            assert so.published_qis(rel, small) is None
            continue
        rows, qis, _ = so.published_qis(rel, small)
        assert qis and len(rows) == len(rel.tables[mech.record_table].columns[small.qi[qis[0]]]) > 0
        applicable.add(name)
    assert mechanisms.MECHANISMS["laplace"].record_table is None
    assert mechanisms.MECHANISMS["ambiguity"].record_table is None
    assert {"uniform", "anatomy"} <= applicable


def test_assess_reports_singling_out_beside_the_signed_figure(small):
    a = risk.assess(small, "uniform", {}, 3, attacks=200)
    j = a.to_json()
    block = j["singling_out"]
    assert block["applicable"] and block["mode"] == "multivariate" and block["attacks"] == 200
    assert block["seed"] == [3, 0, so.SEED_TAG]
    assert j["risk"] == a.signed.risk  # the signed figure stays the attribute-inference one
    assert "singling out adds" in a.sentence(small.qi, small.sa)
    assert risk.assess(small, "uniform", {}, 3, attacks=200).to_json() == j  # same seeds, same figures
    lap = risk.assess(small, "laplace", {}, 3, attacks=200).to_json()["singling_out"]
    assert lap == {"applicable": False, "why": so.NOT_APPLICABLE}
    assert "Singling out: not applicable: the release publishes no records." in \
        risk.assess(small, "laplace", {}, 3, attacks=200).sentence(small.qi, small.sa)
    mon = risk.assess(small, "mondrian", {"k": 5, "beta": 0.5}, 3, attacks=200).to_json()["singling_out"]
    assert mon["applicable"] and mon["available"] == 0 and mon["risk"] == 0.0  # groups of >= k rows


def test_clause_words():
    on = {"applicable": True, "n_cols": 3, "attacks": 1000, "predicates": 917, "train_success": 0.761,
          "control_success": 0.125, "risk": 0.725, "interval": [0.694, 0.756]}
    assert so.clause(on) == ("Combining 3 of these facts as published, an attacker isolates exactly one person of "
                             "the table 76.1% of the time (1,000 tries; the rows yield only 917 such combinations, "
                             "the other tries fail) and one person not in it 12.5% of the time; singling out adds "
                             "0.725 of the possible risk (95% interval 0.694-0.756).")
    none = {**on, "predicates": 0, "train_success": 0.0, "control_success": 0.0, "risk": 0.0,
            "interval": [0.0, 0.003]}
    assert so.clause(none).startswith("No combination of 3 of these facts isolates a single published row")


def test_report_and_page_cells_show_it():
    from core.report import risk_html
    from pages.ui.risk import singling_short

    block = {"measured": True, "sentence": "S <b>", "attacks": 10, "split": {"train": 8, "control": 2, "seed": 0},
             "risk": 0.1, "interval": [0.0, 0.2],
             "singling_out": {"applicable": True, "risk": 0.998, "interval": [0.995, 1.0], "mode": "multivariate",
                              "n_cols": 3, "attacks": 1000, "predicates": 1000, "seed": [0, 0, 20742]}}
    html = risk_html(block)
    assert "<b>Singling out</b>: 0.998 (95% interval 0.995-1.000)" in html and "S &lt;b&gt;" in html
    assert singling_short(block) == "0.998 [0.995-1.000]"
    na = {**block, "singling_out": {"applicable": False, "why": so.NOT_APPLICABLE}}
    assert so.NOT_APPLICABLE in risk_html(na) and singling_short(na) == so.NOT_APPLICABLE
    assert singling_short({"measured": False}) == "not measured"


@pytest.mark.slow
def test_sanitize_and_compare_pages_show_singling_out(monkeypatch):
    """Sanitize's risk section: a second figure beside the added risk and the clause in the sentence; Compare:
    a row per pin, 'not applicable' for Laplace."""
    from conftest import app, no_exception

    monkeypatch.setenv("WORKBENCH_RISK", "inline")
    at = app("pages/1_Sanitize.py", query={"mech": "anatomy", "seed": "1"})
    no_exception(at)
    value = [m.value for m in at.metric if m.label == "Singling out"]
    assert value and float(value[0].split()[0]) > 0.9  # the QI table publishes every QI as it is
    assert any("singling out adds" in md.value for md in at.markdown)
    pins = ('[{"name":"UP","mechanism":"uniform","params":{},"seed":1},'
            '{"name":"DP","mechanism":"laplace","params":{},"seed":1}]')
    at = app("pages/7_Compare.py", query={"mech": "uniform", "seed": "1", "pins": pins})
    no_exception(at)
    row = at.table[0].value.loc["singling out (added, 95% interval)"]
    assert float(row["UP"].split()[0]) > 0.9 and row["DP"] == so.NOT_APPLICABLE


def test_a_wide_table_draws_from_a_seeded_sample_of_column_sets():
    rng = np.random.default_rng(3)
    d = 12  # C(12, 3) = 220 sets of three QIs
    space = _space(d, (4,) * d)
    rows = rng.integers(0, 4, (500, d))
    preds, available = so.multivariate(rows, space, 10_000, 3, np.random.default_rng(0))
    used = {tuple(c) for c in preds.cols}
    assert 0 < len(used) <= so.MAX_COLUMN_SETS < 220 and available == len(preds)
    again, _ = so.multivariate(rows, space, 10_000, 3, np.random.default_rng(0))
    np.testing.assert_array_equal(again.codes, preds.codes)  # same seed, same predicates
    assert (so.count(rows, preds, space) == 1).all()
