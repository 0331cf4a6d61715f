"""Group mechanisms on the plan/apply protocol (issue 15): the same release for any batch size, groups as the rows give.

Every converted group mechanism: one batch, 7-row and 1,000-row batches
give the same release byte for byte (tables and manifest); a new seed
another one.  Each mechanism's groups are checked against the row-based
construction of tests/test_groups_counts.py on the release itself.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest

from core import mechanisms, release as rel, shuffle, table
from core.partition import distinct_value_groups


def _dataset(n=1200, seed=0, m=12, weights=None):
    g = np.random.default_rng(seed)
    p = np.linspace(1, 2, m) if weights is None else np.asarray(weights, dtype=float)
    m = len(p)
    p = p / p.sum()
    frame = pd.DataFrame({"age": g.integers(17, 60, n), "zip": g.integers(0, 40, n),
                          "sex": g.choice(["F", "M"], n), "s": g.choice([f"v{i}" for i in range(m)], n, p=p)})
    return table.bind(table.make_table(frame, "toy"), "s", ["age", "zip", "sex"])


def _bytes(release) -> str:
    """Every table (codes, dtypes, labels as CSV) and the manifest, hashed."""
    h = hashlib.sha256()
    for name, t in release.tables.items():
        h.update(name.encode())
        for col, values in t.columns.items():
            h.update(col.encode() + str(values.dtype).encode() + np.ascontiguousarray(values).tobytes())
        h.update(rel.csv_bytes(t.to_frame()))
    h.update(rel.manifest_bytes(release))
    return h.hexdigest()


@pytest.fixture(scope="module")
def toy():
    return _dataset()


@pytest.fixture(scope="module")
def skewed():
    """SA shares as seed 002's Example 2 (12, 8, 6, 5, 4, 3, 1, 1, 1, 1): PP cuts two sub-tables at (1/3, 2/3)."""
    return _dataset(weights=[12, 8, 6, 5, 4, 3, 1, 1, 1, 1])


CASES = [("anatomy", {}), ("anatomy", {"l": 3}), ("sdr", {}), ("sdr", {"rho1": "1/3", "rho2": "2/3"}),
         ("bucketization", {}), ("bucketization", {"theta": 2, "sizes": "two", "sigma": 2}),
         ("bucketization", {"theta": 2, "sigma": 2, "fakes": "negassoc"}),
         ("mondrian", {}), ("mondrian", {"beta": 0.25, "k": 20})]


@pytest.mark.parametrize("name,raw", CASES)
def test_same_release_byte_for_byte_whatever_the_batch_size(toy, skewed, name, raw):
    assert mechanisms.get(name).planned
    if name == "sdr" and raw:
        toy = skewed
        assert len(mechanisms.get("sdr").pp(toy, mechanisms.get("sdr").resolve(raw)).size) == 2
    got = {b: _bytes(mechanisms.sanitize(toy, name, raw, seed=11, batch_rows=b)) for b in (None, 7, 1000)}
    assert len(set(got.values())) == 1, got
    assert got[None] != _bytes(mechanisms.sanitize(toy, name, raw, seed=12))


def _pairs(cols) -> list[tuple]:
    return sorted(zip(*[np.asarray(c).tolist() for c in cols]))


# ------------------------------------------------------------------ Anatomy
def test_anatomy_groups_are_the_row_constructions(toy):
    r = mechanisms.sanitize(toy, "anatomy", {"l": 4}, seed=3)
    part = distinct_value_groups(toy.sa_codes, 4, toy.m)
    gid = shuffle.relabel(3, "anatomy/gid", part.n_groups)[part.group]
    qit, st = r.tables["qit"], r.tables["st"]
    # the same (QI..., group) rows and the same (group, value) ST as the rows give, with the drawn ids
    assert _pairs([*[qit.columns[c] for c in toy.qi], qit.columns["gid"]]) == _pairs([*toy.qi_codes, gid])
    assert _pairs([st.columns["gid"], st.columns["s"]]) == _pairs([gid, toy.sa_codes])
    assert r.verdict.meets and r.privacy["l_diversity"] == 4
    # the published order is the order keys', not the input's
    assert not np.array_equal(qit.columns["age"], toy.qi_codes[0])


# ------------------------------------------------------------------ SDR
def test_sdr_deals_pps_counts_and_perturbs_inside_each_subtable(skewed):
    mech = mechanisms.get("sdr")
    values = mech.resolve({"rho1": "1/3", "rho2": "2/3"})
    pl = mech.pp(skewed, values)
    r = mechanisms.sanitize(skewed, "sdr", values, seed=5)
    t = r.tables["release"]
    sub = np.asarray(t.columns["subtable"])
    assert np.array_equal(np.bincount(sub, minlength=len(pl.size)), pl.size)
    member = pl.counts > 0
    assert member[sub, np.asarray(t.columns["s"])].all()  # every published value is in its sub-table's SA_i
    # the QI rows are the table's, in another order
    assert _pairs([t.columns[c] for c in skewed.qi]) == _pairs(skewed.qi_codes)
    # share unchanged: each record keeps its value with p_i + (1 - p_i)/m_i; within 4 standard deviations
    q = pl.p + (1 - pl.p) / pl.m
    mean = float(np.sum(pl.size * q))
    sd = float(np.sqrt(np.sum(pl.size * q * (1 - q))))
    assert abs(r.privacy["share_unchanged"] * skewed.n - mean) < 4 * sd
    assert r.verdict.meets


# ------------------------------------------------------------------ bucketization
@pytest.mark.parametrize("raw", [{}, {"theta": 2, "sizes": "two"}])
def test_buckets_hold_what_the_row_assignment_holds(toy, raw):
    from core.mechanisms import bucketization_algorithm as bk

    mech = mechanisms.get("bucketization")
    values = mech.resolve(raw)
    r = mechanisms.sanitize(toy, "bucketization", values, seed=2)
    qit, st = r.tables["qit"], r.tables["st"]
    bid = np.asarray(st.columns["bid"])
    n_b = r.published["buckets"]
    counts = np.zeros((n_b, toy.m), dtype=np.int64)
    counts[bid, np.asarray(st.columns["s"])] = st.columns["count"]
    # the ST agrees with the QIT's bucket sizes ...
    assert np.array_equal(counts.sum(axis=1), np.bincount(qit.columns["bid"], minlength=n_b))
    # ... and holds the buckets the row-based assignment forms (the same count vectors, ids aside)
    rows = bk.assign(toy.sa_codes, mech.setting(toy, values), np.random.default_rng(0))
    _, want = bk.bucket_table(rows, toy.sa_codes, toy.m)
    assert sorted(map(tuple, counts.tolist())) == sorted(map(tuple, want.tolist()))
    assert r.verdict.meets


# ------------------------------------------------------------------ Mondrian
def test_mondrian_groups_are_the_row_partitions(toy):
    from core.mechanisms import mondrian as mo

    r = mechanisms.sanitize(toy, "mondrian", {"beta": 0.2, "k": 15}, seed=4)
    pos = [np.asarray(lab, dtype=float) if num else np.arange(len(lab), dtype=float)
           for lab, num in zip(toy.qi_labels, toy.qi_numeric)]
    part = mo.mondrian_partition(toy.qi_codes, pos, toy.sa_codes, toy.m, 15, 5)
    gid = shuffle.relabel(4, "mondrian/gid", part.n_groups)[part.group]
    t = r.tables["release"]
    assert list(t.columns) == ["gid", *toy.qi, "s"]
    assert _pairs([t.columns["gid"], t.columns["s"]]) == _pairs([gid, toy.sa_codes])
    boxes = mo.group_boxes(toy.qi_codes, toy.domains, toy.qi_numeric, gid, part.n_groups, toy.sa_codes, toy.m)
    labels, codes = mo.box_labels(boxes, toy.qi_labels)
    for j, c in enumerate(toy.qi):  # each record's generalization is its group's box
        assert _pairs([t.columns["gid"], t.labels[c][t.columns[c]]]) == _pairs([gid, labels[j][codes[j][gid]]])
    assert np.array_equal(r.tables["groups"].columns["size"], np.bincount(gid, minlength=part.n_groups))


# ------------------------------------------------------------------ not built from counts
@pytest.mark.parametrize("name", ["ambiguity", "priview"])
def test_greedy_mechanisms_say_in_one_sentence_why_they_stay_local(name):
    mech = mechanisms.get(name)
    assert not mech.planned
    note = mech.engine_note
    assert note.endswith(".") and ". " not in note and "--engine local" in note
