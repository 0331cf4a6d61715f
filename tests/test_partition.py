"""Decoy groups / l-diverse groups (core/partition.py; MECHANISMS.md section 1 step 2).

Property tests with hypothesis on random SA count vectors, a brute-force twin
of the eligibility rule on tiny tables, and the paper's toy table.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.errors import NotEligible
from core.partition import (check_distinct_groups, distinct_value_groups, eligibility_message,
                            largest_feasible)


def _records(counts: list[int], order_seed: int) -> np.ndarray:
    """SA codes with the given counts, in a random record order."""
    sa = np.repeat(np.arange(len(counts)), counts)
    return np.random.default_rng(order_seed).permutation(sa)


@st.composite
def eligible_tables(draw):
    counts = draw(st.lists(st.integers(0, 40), min_size=2, max_size=16))
    counts = np.asarray(counts)
    if counts.sum() == 0 or largest_feasible(counts) < 2:
        counts = np.concatenate([counts, [1, 1]])  # two singletons make gamma = 2 feasible
        counts[np.argmax(counts)] = min(counts.max(), (counts.sum() - counts.max()))
    best = largest_feasible(counts)
    gamma = draw(st.integers(2, min(best, 50)))
    seed = draw(st.integers(0, 2**31 - 1))
    return counts, gamma, seed


@settings(max_examples=200, deadline=None)
@given(eligible_tables())
def test_eligible_partition_properties(case):
    counts, gamma, seed = case
    assert largest_feasible(counts) >= gamma
    sa = _records(list(counts), seed)
    n, m = len(sa), len(counts)
    check_distinct_groups("gamma", gamma, sa, np.arange(m).astype(str), m)  # does not raise
    part = distinct_value_groups(sa, gamma, m)
    r = n // gamma
    # every record is in exactly one group, and there are floor(N / gamma) groups
    assert part.group.shape == (n,)
    assert part.n_groups == r
    assert part.group.min() >= 0 and part.group.max() < r
    np.testing.assert_array_equal(part.sizes, np.bincount(part.group, minlength=r))
    assert part.sizes.sum() == n
    # every group holds distinct values
    pairs = part.group.astype(np.int64) * m + sa
    assert len(np.unique(pairs)) == n
    # sizes: gamma or gamma + 1 whenever that is possible at all (N mod gamma <= r);
    # otherwise (tiny tables, N < gamma (gamma - 1)) the residue wraps round
    residue = n - r * gamma
    if residue <= r:
        assert set(np.unique(part.sizes)) <= {gamma, gamma + 1}
        assert int((part.sizes == gamma + 1).sum()) == residue
    else:
        assert part.sizes.min() == gamma
        assert part.sizes.max() <= gamma + -(-residue // r)
    # deterministic given (id, SA)
    again = distinct_value_groups(sa.copy(), gamma, m)
    np.testing.assert_array_equal(again.group, part.group)


@settings(max_examples=200, deadline=None)
@given(eligible_tables(), st.integers(0, 2**31 - 1))
def test_mixed_layout_properties(case, layout_seed):
    """The random layout (rng given) keeps every property of the sorted one."""
    counts, gamma, seed = case
    sa = _records(list(counts), seed)
    n, m = len(sa), len(counts)
    part = distinct_value_groups(sa, gamma, m, np.random.default_rng(layout_seed))
    r = n // gamma
    assert part.n_groups == r and part.group.min() >= 0 and part.group.max() < r
    np.testing.assert_array_equal(part.sizes, np.bincount(part.group, minlength=r))
    assert len(np.unique(part.group.astype(np.int64) * m + sa)) == n  # distinct values, every record once
    residue = n - r * gamma
    if residue <= r:
        assert set(np.unique(part.sizes)) <= {gamma, gamma + 1}
        assert int((part.sizes == gamma + 1).sum()) == residue
    else:  # tiny tables fall back to the sorted layout
        np.testing.assert_array_equal(part.group, distinct_value_groups(sa, gamma, m).group)
    # same seed, same partition
    again = distinct_value_groups(sa.copy(), gamma, m, np.random.default_rng(layout_seed))
    np.testing.assert_array_equal(again.group, part.group)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=2, max_size=16).filter(lambda c: sum(c) > 0),
       st.integers(2, 50))
def test_ineligible_raises_with_largest_feasible(counts, gamma):
    counts = np.asarray(counts)
    best = largest_feasible(counts)
    sa = _records(list(counts), 0)
    labels = np.array([f"v{i}" for i in range(len(counts))], dtype=object)
    if gamma <= best:
        assert eligibility_message("gamma", gamma, counts, labels) is None
        return
    with pytest.raises(NotEligible) as info:
        check_distinct_groups("gamma", gamma, sa, labels, len(counts))
    message = str(info.value)
    top = int(np.argmax(counts))
    assert f"'{labels[top]}' has {counts[top]:,}" in message
    assert f"at most N/{gamma} = {counts.sum() // gamma:,} records" in message
    if best >= 2:
        assert f"largest feasible gamma is {best}." in message
        assert info.value.suggestion == {"gamma": best}
    else:
        assert "no gamma of 2 or more is feasible" in message
        assert info.value.suggestion == {}


# ------------------------------------------------------------ brute-force twin
def _set_partitions(n: int):
    """Every partition of range(n), as restricted growth strings."""
    def grow(prefix, top):
        if len(prefix) == n:
            yield list(prefix)
            return
        for block in range(top + 2):
            yield from grow(prefix + [block], max(top, block))
    yield from grow([0], 0) if n else iter([[]])


def _feasible_by_search(sa: np.ndarray, gamma: int) -> bool:
    """Does some partition into groups of >= gamma distinct values exist?"""
    for blocks in _set_partitions(len(sa)):
        blocks = np.asarray(blocks)
        ok = True
        for b in np.unique(blocks):
            vals = sa[blocks == b]
            if len(vals) < gamma or len(np.unique(vals)) < len(vals):
                ok = False
                break
        if ok:
            return True
    return False


@pytest.mark.parametrize("counts", [[1, 1, 1], [2, 1, 1], [2, 2, 1, 1], [3, 1, 1, 1], [2, 2, 2],
                                    [1, 1, 1, 1, 1, 1, 1], [3, 2, 1, 1], [4, 1, 1, 1]])
def test_eligibility_rule_matches_exhaustive_search(counts):
    """max count <= N / gamma is exactly when distinct groups of >= gamma exist."""
    counts = np.asarray(counts)
    sa = np.repeat(np.arange(len(counts)), counts)
    labels = np.arange(len(counts)).astype(str)
    feasible = [g for g in range(2, len(sa) + 1) if _feasible_by_search(sa, g)]
    rule = [g for g in range(2, len(sa) + 1) if eligibility_message("gamma", g, counts, labels) is None]
    assert feasible == rule
    assert max(feasible, default=1) == largest_feasible(counts)


# ------------------------------------------------------------- paper's toy table
def test_toy_splu_table():
    """Seed 000 Fig. 2(a) / Fig. 3: 9 records, Hiv 2, Flu 3, Fever 3, H5N1 1; gamma = 3 works."""
    from core.table import load_dataset

    data = load_dataset("toy-splu")
    assert dict(zip(data.sa_labels, data.sa_counts.tolist())) == {"Fever": 3, "Flu": 3, "H5N1": 1, "Hiv": 2}
    part = distinct_value_groups(data.sa_codes, 3, data.m)
    assert part.sizes.tolist() == [3, 3, 3]
    for g in range(3):
        assert len(set(data.sa_codes[part.group == g])) == 3
    with pytest.raises(NotEligible) as info:
        check_distinct_groups("gamma", 4, data.sa_codes, data.sa_labels, data.m)
    assert str(info.value) == ("gamma = 4 needs every sensitive value to have at most N/4 = 2 records; "
                               "'Fever' has 3; largest feasible gamma is 3.")
    assert info.value.suggestion == {"gamma": 3}


def test_tiny_table_residue_wraps():
    """N = 7, gamma = 4: one group of 4 or 5 cannot hold 7 records, so the single group has 7.

    Sizes gamma or gamma + 1 are possible only when N mod gamma <= floor(N / gamma)
    (always for N >= gamma (gamma - 1)); below that the residue wraps round,
    and the groups still hold distinct values.
    """
    sa = np.arange(7)
    part = distinct_value_groups(sa, 4, 7)
    assert part.sizes.tolist() == [7]
    assert len(np.unique(sa[part.group == 0])) == 7


def test_st_rows_are_the_members_sorted_by_published_id_and_value():
    """The ST laid out as a grid and sorted by column: the members sorted by (gid, value), and the sizes."""
    from core import shuffle
    from core.partition import sorted_layout

    rng = np.random.default_rng(1)
    checked = 0
    for t in range(300):
        m = int(rng.integers(2, 40))
        counts = rng.integers(0, 50, m)
        l = int(rng.integers(2, 6))
        if (counts > 0).sum() < l:
            continue
        lay = sorted_layout(counts, l)
        r = lay.n_groups
        if counts.max() > r:  # not eligible: a value would repeat in a group
            continue
        gid = shuffle.relabel(t, "x", r)
        g, v = lay.members()
        g = gid[g]
        o = np.argsort(g * m + v)
        ids, values = lay.st_rows(gid)
        assert np.array_equal(ids, g[o]) and np.array_equal(values, v[o])
        assert np.array_equal(lay.sizes, np.bincount(np.arange(lay.n) % r, minlength=r))
        checked += 1
    assert checked > 100
