"""PriView's exact measures against possible-world enumeration, and the repaired construction (construction=exact)."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

import numpy as np
import pandas as pd
import pytest

from core.mechanisms import ambiguity_algorithm as amb
from core import mechanisms
from core.table import bind, load_dataset, make_table


def brute(at_rows, st_rows):
    """Exact presence and association of every (q, a) and (q, a, s) of one group by enumerating all pairings.

    ``at_rows``: AT patterns (one per record); ``st_rows``: (a, s) entries (one per record, counts expanded).
    A world pairs AT row i with ST entry p[i]; person (q, a) is present when some q-row meets an a-entry,
    and has s when some q-row meets an (a, s) entry (seed 004 §5's interesting worlds).
    """
    worlds = list(permutations(range(len(st_rows))))
    pres, assoc = {}, {}
    for q in set(at_rows):
        for a in {e[0] for e in st_rows}:
            hits = Counter()
            present = 0
            for p in worlds:
                tuples = {st_rows[p[i]] for i, r in enumerate(at_rows) if r == q}
                if any(e[0] == a for e in tuples):
                    present += 1
                    for e in tuples:
                        if e[0] == a:
                            hits[e[1]] += 1
            pres[q, a] = present / len(worlds)
            for s, h in hits.items():
                assoc[q, a, s] = h / present
    return pres, assoc


def test_grace_is_three_fifths():
    # seed 004 Fig. 9, group 2: (60, F) twice in AT; zip 23000 twice in ST, one of them leukaemia
    at = [("60", "F"), ("60", "F"), ("35", "M"), ("50", "F")]
    st = [("23000", "leukemia"), ("23000", "flu"), ("11000", "diabetes"), ("12000", "leukemia")]
    pres, assoc = brute(at, st)
    assert pres[("60", "F"), "23000"] == pytest.approx(5 / 6)
    assert assoc[("60", "F"), "23000", "leukemia"] == pytest.approx(3 / 5)
    assert amb.exact_association(4, 2, 1, 2) == pytest.approx(3 / 5)
    assert amb.exact_presence(4, 2, 2) == pytest.approx(5 / 6)


@pytest.mark.parametrize("seed", range(6))
def test_priview_stats_equal_enumeration_on_random_groups(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(3, 7))
    at = [(int(x),) for x in rng.integers(0, 2, size)]            # repeated patterns on purpose
    st = [(int(a), int(s)) for a, s in zip(rng.integers(0, 2, size), rng.integers(0, 3, size))]
    pres, assoc = brute(at, st)
    key, cnt = np.unique([(a * 3 + s) for a, s in st], return_counts=True)
    stats = amb.priview_stats(np.zeros(size, int), [np.array([q[0] for q in at])], [2], np.zeros(len(key), int),
                              key // 3, key % 3, cnt, 2, 3, 1)
    assert stats["presence"][0] == pytest.approx(max(pres.values()))
    assert stats["association"][0] == pytest.approx(max(assoc.values()))


def _small_table(seed: int, n: int = 40) -> "object":
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"a": rng.integers(0, 4, n), "b": rng.integers(0, 3, n), "c": rng.integers(0, 5, n),
                          "s": rng.choice(list("pqrstu"), n)})
    return bind(make_table(frame, f"small{seed}"), "s", ("a", "b", "c"))


@pytest.mark.parametrize("seed", range(4))
def test_exact_construction_meets_alpha_beta_by_enumeration(seed):
    data = _small_table(seed)
    rel = mechanisms.sanitize(data, "priview", {"alpha": 0.5, "beta": 0.5, "construction": "exact"}, seed)
    at, st = rel.tables["at"].to_frame(), rel.tables["st"].to_frame()
    split = rel.published["split"]
    other = [c for c in ("a", "b", "c") if c != split]
    assert rel.privacy["groups"] >= 1
    for gid in sorted(set(at["gid"])):
        g_at = [tuple(r) for r in at[at.gid == gid][other].itertuples(index=False)]
        g_st = [(r[split], r["s"]) for _, r in st[st.gid == gid].iterrows() for _ in range(int(r["count"]))]
        pres, assoc = brute(g_at, g_st)
        assert max(pres.values()) <= 0.5 + 1e-12
        assert max(assoc.values()) <= 0.5 + 1e-12
    assert rel.privacy["alpha_met"] and rel.privacy["beta_met"]
    assert rel.rows_out + rel.privacy["unplaced"] == data.n


def _group_worlds(data, grouping, split):
    """(AT patterns, ST entries) of every group of ``grouping`` (split = QI position), labels as codes."""
    out = []
    for g in range(grouping.n_groups):
        rows = np.flatnonzero(grouping.group == g)
        at = [tuple(int(data.qi_codes[i][r]) for i in range(len(data.qi)) if i != split) for r in rows]
        st = [(int(data.qi_codes[split][r]), int(data.sa_codes[r])) for r in rows]
        out.append((at, st))
    return out


@pytest.mark.parametrize("seed", range(3))
def test_groups_of_more_than_k_blocks_meet_the_bound_in_every_world(seed):
    # one group (groups=1) takes a block of every split value: r = 3 blocks > k = 2 (alpha = 0.5), L = 2
    rng = np.random.default_rng(seed)
    n = 30
    frame = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 4, n), "c": rng.integers(0, 4, n),
                          "s": rng.choice(list("pqrs"), n)})
    data = bind(make_table(frame, f"r{seed}"), "s", ("a", "b", "c"))
    grouping = amb.build_exact_groups(data.qi_codes, data.domains, data.sa_codes, data.m, 0, 0.5, 0.5,
                                      rng=np.random.default_rng(seed), groups=1)
    assert grouping.n_groups == 1 and grouping.dissolved == 0
    (at, st), = _group_worlds(data, grouping, 0)
    assert len(st) == 6 and len({a for a, _ in st}) == 3  # three blocks of two
    assert len(set(at)) == len(at)                         # every AT pattern once
    pres, assoc = brute(at, st)
    assert max(pres.values()) == pytest.approx(1 / 3)      # c(a)/N = 1/r, below alpha = 1/2
    assert max(assoc.values()) == pytest.approx(1 / 2)     # c(a, s)/c(a) = 1/L = beta


@pytest.mark.parametrize("seed", range(3))
def test_consolidated_and_extended_groups_meet_the_bound_in_every_world(seed):
    # the full construction (slots, consolidation, extension) on a table where groups end with k or more blocks
    rng = np.random.default_rng(10 + seed)
    n = 60
    frame = pd.DataFrame({"a": rng.integers(0, 3, n), "b": rng.integers(0, 5, n), "c": rng.integers(0, 5, n),
                          "s": rng.choice(list("pqr"), n)})
    data = bind(make_table(frame, f"x{seed}"), "s", ("a", "b", "c"))
    grouping = amb.build_exact_groups(data.qi_codes, data.domains, data.sa_codes, data.m, 0, 0.5, 0.5,
                                      rng=np.random.default_rng(seed))
    assert grouping.n_groups >= 2
    for at, st in _group_worlds(data, grouping, 0):
        assert len(st) in (4, 6) and len(set(at)) == len(at)
        pres, assoc = brute(at, st)
        assert max(pres.values()) <= 0.5 + 1e-12 and max(assoc.values()) <= 0.5 + 1e-12


def test_exact_bound_is_an_upper_bound_and_the_construction_comes_close():
    data = _small_table(5, 200)
    for split in range(3):
        bound = amb.exact_placeable(data.qi_codes, data.domains, data.sa_codes, data.m, split, 0.5, 0.5)
        grouping = amb.build_exact_groups(data.qi_codes, data.domains, data.sa_codes, data.m, split, 0.5, 0.5,
                                          rng=np.random.default_rng(0))
        assert (grouping.group >= 0).sum() <= bound["max_placeable"]
        assert bound["max_placeable"] == min(bound["blocks_bound"], bound["patterns_bound"])


@pytest.mark.slow
def test_exact_construction_places_far_more_of_adult_than_before():
    # issue 16: the first exact construction placed 14,300 of 45,222 Adult records (split age); the slots
    # filled rarest pattern first place about 20,300 of the at most 25,640 that blocks of age allow
    data = load_dataset("adult")
    split = data.qi.index("age")
    grouping = amb.build_exact_groups(data.qi_codes, data.domains, data.sa_codes, data.m, split, 0.1, 0.1,
                                      max(data.n, 1), np.random.default_rng(1))
    placed = int((grouping.group >= 0).sum())
    bound = amb.exact_placeable(data.qi_codes, data.domains, data.sa_codes, data.m, split, 0.1, 0.1)
    assert bound == {"groups": 256, "blocks_bound": 25_640, "patterns_bound": 29_526, "max_placeable": 25_640}
    assert 19_500 <= placed <= bound["max_placeable"] and grouping.dissolved == 0
    # the mechanism's derived figure is this construction's bound, not the paper construction's 28,280
    mech = mechanisms.MECHANISMS["priview"]
    assert mech.derived(data, mech.resolve({"construction": "exact"}))["max_placeable"] == 25_640
    assert mech.derived(data, mech.resolve({}))["max_placeable"] == 28_280


def test_paper_construction_fails_the_exact_measure_on_the_same_tables():
    data = _small_table(0, 60)
    rel = mechanisms.sanitize(data, "priview", {"alpha": 0.5, "beta": 0.5}, 0)
    assert rel.privacy["max_association"] > 0.5 or rel.privacy["max_presence"] > 0.5


@pytest.mark.slow
def test_exact_priview_meets_point_one_on_adult_from_its_published_files(tmp_path):
    from core import release as rel_io

    data = load_dataset("adult")
    rel = mechanisms.sanitize(data, "priview", {"alpha": 0.1, "beta": 0.1, "construction": "exact"}, 3)
    written = rel_io.write(rel, tmp_path / "out")
    files = {p.name: p for p in map(__import__("pathlib").Path, written)}
    at = pd.read_csv(next(p for n, p in files.items() if n.startswith("at")))
    st = pd.read_csv(next(p for n, p in files.items() if n.startswith("st")))
    split = rel.published["split"]
    other = [c for c in data.qi if c != split]
    # recompute the exact measures from the files alone
    g_at = at["gid"].to_numpy()
    codes = [pd.factorize(at[c].astype(str))[0] for c in other]
    a_codes, a_labels = pd.factorize(st[split].astype(str))
    s_codes, s_labels = pd.factorize(st["occupation"].astype(str))
    stats = amb.priview_stats(g_at, codes, [int(c.max()) + 1 for c in codes], st["gid"].to_numpy(), a_codes,
                              s_codes, st["count"].to_numpy(), len(a_labels), len(s_labels))
    assert stats["presence"].max() <= 0.1 + 1e-12
    assert stats["association"].max() <= 0.1 + 1e-12
    # every record is in one group and one ST entry; both files hold what the release says it published
    assert len(at) == int(st["count"].sum()) == rel.rows_out > 19_500
    assert rel.published["max_placeable"] == 25_640


def test_unplaced_note_names_every_blocked_value():
    from core.mechanisms.ambiguity import unplaced_note

    data = load_dataset("adult")
    text, info = unplaced_note(data, np.full(data.n, -1), 0.1)
    assert "7 values (" in text and "'Machine-op-inspct'" in text and "2,828 groups" in text
    assert info["max_placeable"] == 28_280


def test_the_manifest_prints_the_figure_the_comparison_used(tmp_path):
    """Issue 25: beta = 1/2 is reached exactly by the exact construction, and floating point lands at
    0.5000000000000004; the manifest prints 0.5 (what was compared, with the tolerance beside it), and a figure
    over the limit by more than the tolerance is printed as it is."""
    import json

    from core.cli import main
    from core.mechanisms.ambiguity import TOLERANCE, as_compared

    out = tmp_path / "pv"
    assert main(["sanitize", "toy-ambiguity", "--sa", "disease", "--mechanism", "priview", "--param", "alpha=1/2",
                 "--param", "beta=1/2", "--param", "construction=exact", "--seed", "1", "--no-risk",
                 "--out", str(out)]) == 0
    manifest = json.loads((out / "_manifest.json").read_text())
    assert manifest["privacy"]["max_association"] == 0.5 and manifest["privacy"]["comparison_tolerance"] == TOLERANCE
    assert manifest["verdict"]["figures"]["max_association"] == 0.5 and manifest["verdict"]["standing"] == "meets"
    assert as_compared(0.5 + 5e-13, 0.5) == 0.5 and as_compared(0.5 + 5e-12, 0.5) == 0.5 + 5e-12
