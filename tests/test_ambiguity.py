"""Ambiguity and PriView (seed 004): worked numbers, privacy of every group, accounting, estimation twins."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

import numpy as np
import pytest

from core.mechanisms import ambiguity_algorithm as amb
from core import mechanisms
from core.counting import QueryBatch
from core.mechanisms.ambiguity import release_from_groups
from core.table import load_dataset

PAPER_GROUPS = [0, 0, 0, 0, 1, 1, 1, 1]  # seed 004 Fig. 2: G1 = {Alan..Henry}, G2 = {Alice..Helen}


@pytest.fixture(scope="module")
def toy():
    return load_dataset("toy-ambiguity")


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


def _code(data, column, label):
    labels = data.qi_labels[data.qi.index(column)] if column in data.qi else data.sa_labels
    return int(np.flatnonzero(labels.astype(str) == str(label))[0])


def _sa(data, *labels):
    sa = np.zeros((1, data.m), dtype=bool)
    for lab in labels:
        sa[0, _code(data, data.sa, lab)] = True
    return sa


def test_toy_sample_is_fig1a(toy):
    f = toy.frame()
    assert list(f.columns) == ["age", "gender", "zipcode", "disease"]
    assert f.values.tolist()[3] == [60, "M", 12000, "stroke"]  # Henry, restored from Fig. 2 / Fig. 4(a)
    assert len(f) == 8 and f["disease"].value_counts().to_dict()["leukemia"] == 2


def test_fig2_tables_presence_association(toy):
    rel = release_from_groups(toy, "ambiguity", PAPER_GROUPS)
    assert sorted(rel.tables) == ["at_age", "at_gender", "at_zipcode", "st"]
    at_age = rel.tables["at_age"].to_frame()
    assert at_age.groupby("gid").size().tolist() == [4, 3]          # Fig. 2(a)
    assert rel.tables["at_gender"].to_frame().groupby("gid").size().tolist() == [1, 1]
    assert rel.tables["at_zipcode"].to_frame().groupby("gid").size().tolist() == [3, 3]
    st = rel.tables["st"].to_frame()
    assert st[st.gid == 1].set_index("disease")["count"].to_dict() == {"leukemia": 2, "diabetes": 1, "dyspepsia": 1}
    stats = amb.ambiguity_stats([rel.tables[t].columns["gid"] for t in ("at_age", "at_gender", "at_zipcode")],
                                rel.tables["st"].columns["gid"], rel.tables["st"].columns["disease"],
                                rel.tables["st"].columns["count"])
    # Theorem 1: 4/(4x1x3) = 1/3 and 4/(3x1x3) = 4/9; Theorem 2: Pr((Alice, leukemia)) = 2/4
    np.testing.assert_allclose(stats["presence"], [1 / 3, 4 / 9])
    np.testing.assert_allclose(stats["association"], [1 / 4, 1 / 2])
    assert rel.privacy["max_presence"] == pytest.approx(4 / 9)
    assert rel.privacy["max_association"] == pytest.approx(1 / 2)


def test_q1_and_q2_through_the_public_estimator(toy):
    rel = release_from_groups(toy, "ambiguity", PAPER_GROUPS)
    age = toy.qi_labels[0].astype(int)
    # Q2: Age >= 50 AND Zipcode = 23000 AND Disease = diabetes -> 1/6 + 2/9 = 7/18 (seed 004 §6)
    zip_mask = toy.qi_labels[2].astype(int) == 23000
    q2 = QueryBatch(attrs=(0, 2), sa=_sa(toy, "diabetes"), masks=((age >= 50)[None], zip_mask[None]))
    assert mechanisms.estimate(rel, [q2])[0] == pytest.approx(float(Fraction(7, 18)))
    # the same query with Zipcode as an equality (values) gives the same answer
    q2v = QueryBatch(attrs=(2, 0), sa=_sa(toy, "diabetes"), masks=(zip_mask[None], (age >= 50)[None]))
    assert mechanisms.estimate(rel, [q2v])[0] == pytest.approx(7 / 18)
    # Q1: Disease = stroke AND Age >= 45 -> 3/4 on G1 (§1.1)
    q1 = QueryBatch(attrs=(0,), sa=_sa(toy, "stroke"), masks=((age >= 45)[None],))
    assert mechanisms.estimate(rel, [q1])[0] == pytest.approx(3 / 4)
    # IN condition: Gender IN {M} AND Disease IN {diabetes, leukemia}: G1 1 x 1 + G2 3 x 0
    g = toy.qi_labels[1].astype(str) == "M"
    q3 = QueryBatch(attrs=(1,), sa=_sa(toy, "diabetes", "leukemia"), masks=(g[None],))
    assert mechanisms.estimate(rel, [q3])[0] == pytest.approx(1.0)


def test_priview_fig9_and_theorem6_versus_exact(toy):
    rel = release_from_groups(toy, "priview", PAPER_GROUPS, {"split": "zipcode"})
    at, st = rel.tables["at"].to_frame(), rel.tables["st"].to_frame()
    assert list(at.columns) == ["age", "gender", "gid"] and len(at) == 8       # Fig. 9(a): one row per record
    assert list(st.columns) == ["gid", "zipcode", "disease", "count"] and st["count"].tolist() == [1] * 8
    # Theorem 6 as printed: presence |G|/(|G_AT| |G_ST|) = 4/16, association max c/|G| = 2/4 (leukemia in G2)
    assert rel.privacy["max_presence_paper"] == pytest.approx(1 / 4)
    assert rel.privacy["max_association_paper"] == pytest.approx(1 / 2)
    # exact from the tables: Alan (zip 11000 once in G1) has diabetes with certainty if present
    assert rel.privacy["max_association"] == pytest.approx(1.0)
    # Grace (60, F, 23000): (60, F) twice in AT, 23000 twice in ST of 4 -> 1 - C(2,2)/C(4,2) = 5/6
    assert rel.privacy["max_presence"] == pytest.approx(5 / 6)
    assert amb.exact_presence(4, 2, 2) == pytest.approx(5 / 6)
    assert amb.exact_presence(4, 1, 1) == pytest.approx(1 / 4)   # Alan: Theorem 6's 1/|G| holds here
    assert not rel.privacy["beta_met"]


def _brute_presence(size, c_a, n_q):
    """Possible worlds: all pairings of AT rows with ST records; share where some q-row meets an a-record."""
    from itertools import permutations
    st = [1] * c_a + [0] * (size - c_a)
    at = [1] * n_q + [0] * (size - n_q)
    worlds = list(permutations(range(size)))
    hit = sum(any(at[i] and st[p[i]] for i in range(size)) for p in worlds)
    return hit / len(worlds)


@pytest.mark.parametrize("size,c_a,n_q", [(4, 2, 2), (4, 1, 2), (5, 2, 1), (5, 3, 2), (6, 2, 3)])
def test_exact_presence_matches_possible_worlds(size, c_a, n_q):
    assert amb.exact_presence(size, c_a, n_q) == pytest.approx(_brute_presence(size, c_a, n_q))


@pytest.mark.slow
@pytest.mark.parametrize("mech", ["ambiguity", "priview"])
def test_every_group_private_diverse_and_every_record_accounted(adult, mech):
    alpha = 0.1 if mech == "ambiguity" else 1 / 7  # PriView's groups need ceil(1/alpha) values too
    rel = mechanisms.sanitize(adult, mech, {"alpha": alpha, "beta": 1 / 7}, seed=3)
    beta = 1 / 7
    st = rel.tables["st"]
    sa = adult.sa
    gid, code, cnt = (np.asarray(st.columns[c]) for c in ("gid", sa, "count"))
    G = rel.privacy["groups"]
    size = np.bincount(gid, weights=cnt, minlength=G)
    # every record accounted for: published + unplaced = N, per SA value
    per_value = np.bincount(code, weights=cnt, minlength=adult.m)
    unplaced = rel.published.get("unplaced_by_value", {})
    for v, lab in enumerate(adult.sa_labels):
        assert per_value[v] + unplaced.get(str(lab), 0) == adult.sa_counts[v]
    assert rel.rows_out + rel.privacy["unplaced"] == adult.n
    assert rel.privacy["unplaced"] == 0  # 1/7 >= max share 13.3%: everything fits
    # Theorem 5: ceil(1/beta)-diverse; Theorems 2/4: each value once, c/|G| <= beta
    distinct = np.bincount(gid, minlength=G)
    assert distinct.min() >= amb.diversity(beta) and cnt.max() == 1
    assert (cnt / size[gid]).max() <= beta + 1e-12
    if mech == "ambiguity":
        # Theorem 1 recomputed from the published ATs
        k = np.ones(G)
        for name in rel.tables:
            if name.startswith("at_"):
                k *= np.bincount(rel.tables[name].columns["gid"], minlength=G)
        assert (size / k).max() <= alpha + 1e-12
        assert rel.privacy["max_presence"] == pytest.approx((size / k).max())
        assert rel.privacy["alpha_met"] and rel.privacy["beta_met"]
    else:
        assert (1 / size).max() <= alpha + 1e-12  # Theorem 6 as printed
        assert rel.privacy["max_presence_paper"] <= alpha + 1e-12
        assert len(rel.tables["at"]) == rel.rows_out


def test_adult_at_beta_01_cannot_place_everything_and_says_why(adult):
    feas = amb.placeable(adult.sa_counts, 0.1)
    # 14 occupations, the largest 6,020 of 45,222 (13.3%): groups of 10 distinct values cap it
    assert feas["beta_to_place_all"] == pytest.approx(1 / 7)
    assert not feas["all_placeable"]
    assert feas["max_placeable"] <= feas["any_partition_bound"] < adult.n
    rel = mechanisms.sanitize(adult, "ambiguity", {"alpha": 0.1, "beta": 0.1}, seed=1)
    assert rel.privacy["unplaced"] == adult.n - rel.rows_out > 0
    assert rel.rows_out <= feas["max_placeable"]
    assert rel.rows_out >= 0.95 * feas["max_placeable"]
    assert any("β ≥ 0.1429 would place every record" in n for n in rel.notes)
    assert rel.privacy["alpha_met"] and rel.privacy["beta_met"]


def test_placeable_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(30):
        c = rng.integers(1, 12, size=rng.integers(3, 7))
        l = int(rng.integers(2, 5))
        feas = amb.placeable(c, 1 / l)
        best = max((np.minimum(c, g).sum() for g in range(0, c.max() + 1) if np.minimum(c, g).sum() >= l * g),
                   default=0)
        assert feas["max_placeable"] == best


@pytest.mark.slow
def test_same_seed_same_release_and_candidates_one_still_private(adult):
    a = mechanisms.sanitize(adult, "ambiguity", {"beta": 0.2}, seed=7)
    b = mechanisms.sanitize(adult, "ambiguity", {"beta": 0.2}, seed=7)
    for name in a.tables:
        for col in a.tables[name].columns:
            np.testing.assert_array_equal(a.tables[name].columns[col], b.tables[name].columns[col])
    r = mechanisms.sanitize(adult, "ambiguity", {"beta": 0.2, "candidates": 1}, seed=7)
    assert r.privacy["alpha_met"] and r.privacy["beta_met"]
    # scoring candidates lowers presence against a random pick (Fig. 7's purpose)
    assert a.privacy["max_presence"] <= r.privacy["max_presence"]


def test_alpha_extension_and_residue_on_a_tight_alpha():
    data = load_dataset("census:3000", "occupation")
    rel = mechanisms.sanitize(data, "ambiguity", {"alpha": 0.002, "beta": 0.1}, seed=2)
    assert rel.privacy["max_presence"] <= 0.002 + 1e-12
    sizes = {int(k) for k in rel.published["group_sizes"]}
    assert max(sizes) > 10 or rel.privacy["unplaced"] > 0


def _naive_ambiguity(rel, batch):
    """Fig. 5 literally: loop over queries and groups."""
    data_qi = rel.source["qi"]
    sa = rel.source["sensitive"]
    st = rel.tables["st"]
    st_gid, st_sa, st_cnt = (np.asarray(st.columns[c]) for c in ("gid", sa, "count"))
    ats = [(np.asarray(rel.tables[f"at_{c}"].columns[c]), np.asarray(rel.tables[f"at_{c}"].columns["gid"]))
           for c in data_qi]
    masks = batch.qi_masks([len(rel.tables[f"at_{c}"].labels[c]) for c in data_qi])
    out = []
    for q in range(len(batch)):
        total = 0.0
        for g in np.unique(st_gid):
            c = st_cnt[(st_gid == g) & batch.sa[q][st_sa]].sum()
            for j, a in enumerate(batch.attrs):
                vals, gids = ats[a]
                mine = vals[gids == g]
                c *= masks[j][q][mine].sum() / len(mine)
            total += c
        out.append(total)
    return np.array(out)


def _naive_priview(rel, batch, data):
    sa = rel.source["sensitive"]
    qi = list(rel.source["qi"])
    j = qi.index(rel.published["split"])
    at, st = rel.tables["at"], rel.tables["st"]
    masks = batch.qi_masks(data.domains)
    out = []
    for q in range(len(batch)):
        total = 0.0
        for g in np.unique(np.asarray(st.columns["gid"])):
            sel = np.asarray(st.columns["gid"]) == g
            ok = sel & batch.sa[q][np.asarray(st.columns[sa])]
            arows = np.asarray(at.columns["gid"]) == g
            frac = np.ones(arows.sum(), dtype=bool)
            for t, a in enumerate(batch.attrs):
                if a == j:
                    ok &= masks[t][q][np.asarray(st.columns[qi[j]])]
                else:
                    frac &= masks[t][q][np.asarray(at.columns[qi[a]])[arows]]
            total += np.asarray(st.columns["count"])[ok].sum() * frac.mean()
        out.append(total)
    return np.array(out)


def _random_batches(data, rng, n=12):
    batches = []
    for attrs in [(0,), (1, 2), (0, 3, 5), (2, 4)]:
        sa = np.zeros((n, data.m), dtype=bool)
        sa[np.arange(n), rng.integers(0, data.m, n)] = True
        sa[: n // 3, rng.integers(0, data.m)] = True  # some IN conditions on the SA
        masks = tuple(rng.random((n, data.domains[a])) < 0.4 for a in attrs)
        batches.append(QueryBatch(attrs=attrs, sa=sa, masks=masks))
        values = np.stack([rng.integers(0, data.domains[a], n) for a in attrs], axis=1)
        batches.append(QueryBatch(attrs=attrs, sa=sa, values=values))
    return batches


@pytest.mark.parametrize("mech", ["ambiguity", "priview"])
def test_vectorised_estimator_matches_fig5_loop(mech):
    data = load_dataset("census:400", "occupation")
    rel = mechanisms.sanitize(data, mech, {"beta": 0.1}, seed=4)
    rng = np.random.default_rng(5)
    for batch in _random_batches(data, rng):
        fast = mechanisms.estimate(rel, [batch])
        slow = _naive_ambiguity(rel, batch) if mech == "ambiguity" else _naive_priview(rel, batch, data)
        np.testing.assert_allclose(fast, slow, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("mech", ["ambiguity", "priview"])
def test_whole_workload_at_once_matches_fig5_loop(mech):
    """All batches in one call: PriView prepares every subset (projected from supersets), Ambiguity shares rows."""
    data = load_dataset("census:400", "occupation")
    rel = mechanisms.sanitize(data, mech, {"beta": 0.1}, seed=4)
    batches = _random_batches(data, np.random.default_rng(6))
    fast = mechanisms.estimate(rel, batches)
    naive = _naive_ambiguity if mech == "ambiguity" else (lambda r, b: _naive_priview(r, b, data))
    np.testing.assert_allclose(fast, np.concatenate([naive(rel, b) for b in batches]), rtol=1e-9, atol=1e-9)


def test_priview_cells_equal_the_expanded_at(adult):
    """PriView's cells (AT index by group x ST) against the AT expanded row by row by its ST (seed 004 §8.2)."""
    from core.counting import Records
    from core.mechanisms.base import bucket_records

    rel = mechanisms.sanitize(adult, "priview", {"beta": 1 / 7}, seed=2)
    qi, sa = list(adult.qi), adult.sa
    at, st = rel.tables["at"], rel.tables["st"]
    j = qi.index(rel.published["split"])
    other = [c for c in qi if c != qi[j]]
    m = adult.m
    combined = np.asarray(st.columns[qi[j]]) * m + np.asarray(st.columns[sa])
    rows = bucket_records([at.columns[c] for c in other], [adult.domains[qi.index(c)] for c in other],
                          at.columns["gid"], st.columns["gid"], combined, st.columns["count"],
                          adult.domains[j] * m)
    cols = list(rows.qi_codes)
    cols.insert(j, rows.target // m)
    expanded = Records(cols, adult.domains, rows.target % m, m, weights=rows.weights)
    cells = mechanisms.get("priview").records(rel)
    assert len(cells) < len(expanded)
    batches = _random_batches(adult, np.random.default_rng(3), n=30)
    cells.prepare(batches)
    for b in batches:
        np.testing.assert_allclose(cells.counts(b), expanded.counts(b), rtol=1e-9, atol=1e-9)


def test_estimates_total_the_published_counts(adult):
    # a query with no QI condition beyond a full mask returns the ST total of the SA value
    rel = mechanisms.sanitize(adult, "ambiguity", {"beta": 1 / 7}, seed=1)
    sa = np.eye(adult.m, dtype=bool)
    full = (np.ones((adult.m, adult.domains[0]), dtype=bool),)
    est = mechanisms.estimate(rel, [QueryBatch(attrs=(0,), sa=sa, masks=full)])
    np.testing.assert_allclose(est, adult.sa_counts)


def test_priview_split_choice_is_lowest_loss_and_beats_ambiguity(adult):
    pv = mechanisms.sanitize(adult, "priview", {"beta": 1 / 7}, seed=1)
    losses = pv.published["split_losses"]
    assert pv.published["split"] == min(losses, key=losses.get)
    # pair_loss brute force on a tiny grouping
    g = np.array([0, 0, 0, 1, 1])
    x = np.array([0, 1, 1, 0, 1])
    y = np.array([1, 0, 1, 1, 1])
    brute = 0.0
    for gg in (0, 1):
        s = g == gg
        for a, b in product(range(2), range(2)):
            n = np.sum(s & (x == a) & (y == b))
            e = np.sum(s & (x == a)) * np.sum(s & (y == b)) / s.sum()
            brute += abs(n - e)
    assert amb.pair_loss(g, x, y, 2, 2, 2) == pytest.approx(brute)


def test_refusals_are_one_sentence(toy):
    from core.errors import NotEligible, ParameterError

    with pytest.raises(NotEligible, match="only 6"):
        mechanisms.sanitize(toy, "ambiguity", {"beta": 0.1})
    with pytest.raises(NotEligible, match="needs 10"):
        mechanisms.sanitize(toy, "priview", {"beta": 0.5, "alpha": 0.1})
    with pytest.raises(NotEligible, match="not one of the QI"):
        mechanisms.sanitize(toy, "priview", {"beta": 0.5, "alpha": 0.5, "split": "name"})
    with pytest.raises(ParameterError, match="'beta' parameter of ambiguity"):
        mechanisms.sanitize(toy, "ambiguity", {"beta": 0.9})


@pytest.mark.slow
@pytest.mark.parametrize("share", [0.0, 1.0])
def test_rows_repeated_under_several_sa_values_match_fig5_loop(share, monkeypatch):
    """The shared-row pass (the attack's and the workload's batches), sparse and dense, against the Fig. 5 loop."""
    import core.mechanisms.ambiguity_algorithm as amb

    monkeypatch.setattr(amb, "_SPARSE_SHARE", share)  # 0: always dense, 1: always from the narrowest attribute
    data = load_dataset("census:400", "occupation")
    rel = mechanisms.sanitize(data, "ambiguity", {"beta": 0.1}, seed=4)
    rng = np.random.default_rng(7)
    for attrs in [(0,), (1, 2), (0, 3, 5), tuple(range(len(data.qi)))]:
        rows = np.stack([rng.integers(0, data.domains[a], 4) for a in attrs], axis=1)
        rows[:2] = np.stack([data.qi_codes[a][:2] for a in attrs], axis=1)  # combinations that occur
        values = np.repeat(rows, data.m, axis=0)
        sa = np.tile(np.eye(data.m, dtype=bool), (len(rows), 1))
        batch = QueryBatch(attrs=attrs, sa=sa, values=values)
        np.testing.assert_allclose(mechanisms.estimate(rel, [batch]), _naive_ambiguity(rel, batch),
                                   rtol=1e-9, atol=1e-9)
