"""(lambda, delta)-reconstruction privacy: micro-group test and Algorithm 1 (seed 001).

Uniform perturbation (UP, :mod:`core.mechanisms.uniform`) protects a record's
value, but an adversary who knows a target's QI values can reconstruct the
SA distribution of the target's *micro group* (the records agreeing on all
QI columns) with the UP estimator; in a large group the estimate is
accurate, and a skewed group then discloses the target's value.
(lambda, delta)-reconstruction privacy asks that for every value x of every
micro group g a relative reconstruction error beyond lambda stays likely:
the best (Chernoff) upper bounds on ``Pr[F'_x - f_x > lambda f_x]`` and
``Pr[F'_x - f_x < -lambda f_x]`` must both be at least delta.

The published table is UP's, except that in each micro group larger than
its size threshold s_g only a share-preserving sample of s_g records is
randomised and the result is duplicated back to |g| rows (Algorithm 1):
fewer independent trials, the same expected frequencies, so the same UP
estimator (:func:`core.mechanisms.uniform.mle`) stays unbiased while
micro-group reconstruction becomes noisy.

Formulas (the extraction of seed 001 lost most symbols; MECHANISMS.md §2
reconstructs them and ``tests/test_reconstruction.py`` checks each one
numerically):

* Theorem 4.6 (bound conversion): with ``q = (1-p)/m``,
  ``mu = |g| (f_x p + q)`` and ``e = lambda f_x p / (f_x p + q)``,
  ``F'_x - f_x > lambda f_x  <=>  O_x > (1 + e) mu`` and likewise below.
* Theorem 4.8 / Corollary 4.9: full Chernoff bounds
  ``(e^e / (1+e)^(1+e))^mu`` and ``(e^-e / (1-e)^(1-e))^mu``, simplified
  ``exp(-mu e^2/3)`` and ``exp(-mu e^2/2)`` (:mod:`core.bounds.chernoff`).
* Corollary 4.10: g is private iff both bounds are ``>= delta`` for every
  value present (:func:`group_violates`).
* Theorems 5.11 / 5.13: the lower tail at the most frequent value binds,
  so g is private iff ``|g| <= s_g``, with
  ``s_g = 2 ln(1/delta) (f p + q) / (lambda p f)^2`` (simplified) or
  ``s_g = ln(1/delta) / ((f p + q)(e + (1-e) ln(1-e)))`` (full)
  (:func:`threshold`).

Where this module departs from the paper, and why
-------------------------------------------------
* **Coupled coin flips.**  The paper rounds each value's share of the
  sample, and each record's number of duplicates, by independent coin
  flips, so the sample can exceed s_g (Example 5.15: 3.75 -> 4 and
  11.25 -> 12 give 16 > 15 records with probability 0.1875) and such a
  group fails the very test Algorithm 1 enforces; the scaled group can
  also differ from |g|.  We keep every marginal of the paper (value x
  gets ``floor(t_x)`` records plus one more with probability
  ``frac(t_x)``; a record gets ``floor(|g|/n)`` duplicates plus one more
  with probability ``frac(|g|/n)``) but couple the flips (systematic
  sampling), so the sample has exactly the chosen size and the scaled
  group exactly |g| rows (:func:`sample_counts`, :func:`duplicates`).
* **Sample size.**  The sample is the largest ``n <= s_g`` for which every
  outcome of the rounding passes Corollary 4.10 on the records actually
  randomised (rounding the top value up raises the sample's top
  frequency above f and lowers its threshold): usually ``floor(s_g)``,
  a record or a few less for groups with a low top frequency
  (:func:`sample_sizes`).  ``violating_groups_after`` in the manifest is
  that test, evaluated on the realised samples; it is 0 by construction
  and tests check it.
* **Groups no sample can fix.**  When even a single randomised record
  fails the test (``s_g < 1`` for a one-value group: large lambda and
  delta at a high p) a violating group cannot be repaired by sampling;
  the table is then not eligible and the message suggests the largest p
  that works.
* **The threshold of the full bounds** is solved exactly: the logarithm of
  a Chernoff bound is linear in ``mu``, hence in ``|g|``, so "solving the
  inequality numerically" is one division; ``tests`` compare it with a
  bisection on the bounds themselves.
* **What is published.**  The table, p, m, lambda, delta and the bound
  family.  *Which* micro groups were resampled is shown to the steward
  (Sanitize page) but not published: it would tell an adversary that
  those groups have a dominant value (``|g| > s_g`` means
  ``f > f*(|g|)``).

Guarantee (:meth:`Reconstruction.guarantee`)
--------------------------------------------
(lambda, delta)-reconstruction privacy of every micro group (Corollary
4.10), evaluated on the records actually randomised
(``privacy.violating_groups_after``): met when no group fails.  When no
micro group is open to reconstruction under plain UP at this p, Algorithm 1
resamples nothing and the release is UP under another name: the verdict
says the guarantee is vacuous there (it adds nothing to UP) and names the
smallest p at which RP would start resampling.  RP's (rho1, rho2) values
only derive p when p is empty; they are not part of its own guarantee.

References
----------
seed 001 (Wang et al., "Randomization resilient to sensitive
reconstruction"): Definition 4.5, Lemma 1, Theorems 4.6, 4.8, 5.11, 5.13,
5.16, 5.18, Corollaries 4.9, 4.10, Algorithm 1 and Example 5.15;
MECHANISMS.md sections 0 and 2.
"""

from __future__ import annotations

import math
import weakref
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from ..bounds.chernoff import chernoff_lower, chernoff_upper, simplified_lower, simplified_upper
from ..counting import QueryBatch
from .. import guarantee as G
from ..errors import NotEligible
from ..params import Param
from .. import rng as _rng
from ..engine import memo as _memo
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan, ranks
from ..release import Release
from ..table import Dataset
from .base import Mechanism, observed
from .uniform import RHO1, RHO2, Uniform, check_rho, grid_mle, mle, perturb, perturb_keyed

__all__ = [
    "FAMILIES",
    "MicroGroups",
    "micro_groups",
    "group_labels",
    "summary_groups",
    "conversion_e",
    "tail_bounds",
    "is_private",
    "threshold",
    "group_violates",
    "sample_sizes",
    "sample_counts",
    "duplicates",
    "Analysis",
    "analyse",
    "largest_safe_p",
    "simulate_group",
    "Reconstruction",
    "MECHANISMS",
]

#: Bound families of Theorem 4.8: eqs. (2)-(3) ("full") and (4)-(5) ("simplified").
FAMILIES = ("simplified", "full")

#: Relative slack on the exponent when comparing a bound with delta (a bound
#: passes when it is at least ``delta ** (1 + TOL)``) and on a size compared
#: with its threshold (``|g| <= s_g (1 + TOL)``): the two tests are then the
#: same inequality, and a group exactly at its threshold, whose bound equals
#: delta up to the last bit, counts as private in both.
TOL = 1e-9

#: Group-by-value matrices up to this many cells are counted with one bincount.
_DENSE_PAIRS = 20_000_000


# ----------------------------------------------------------------- groups
@dataclass(frozen=True, eq=False)
class MicroGroups:
    """The micro groups of a table: records agreeing on every QI column.

    Attributes
    ----------
    group : ndarray (N,)
        Micro group of each record, ``0 .. G-1`` (groups ordered by their QI
        values).
    size : ndarray (G,)
        Records per group, ``|g|``.
    pair_group, pair_value, pair_count : ndarray (P,)
        One entry per (group, SA value) that occurs: the value's count
        ``o_x`` in the group.  Sorted by group, then value.
    top_count, top_value : ndarray (G,)
        Count and code of each group's most frequent value (lowest code on
        ties).
    first_row : ndarray (G,)
        A record of each group (to read its QI values).
    """

    group: np.ndarray
    size: np.ndarray
    pair_group: np.ndarray
    pair_value: np.ndarray
    pair_count: np.ndarray
    top_count: np.ndarray
    top_value: np.ndarray
    first_row: np.ndarray

    @property
    def n_groups(self) -> int:
        return len(self.size)

    @property
    def top_frequency(self) -> np.ndarray:
        """``f`` of Theorem 5.13: the largest relative frequency of a value in each group."""
        return self.top_count / self.size

    def counts_of(self, g: int, m: int) -> np.ndarray:
        """The SA counts of group ``g`` as a length-``m`` vector."""
        lo, hi = np.searchsorted(self.pair_group, [g, g + 1])
        out = np.zeros(m, dtype=np.int64)
        out[self.pair_value[lo:hi]] = self.pair_count[lo:hi]
        return out


def group_labels(data: Dataset, groups: MicroGroups, ids) -> list[str]:
    """The QI values of each group in ``ids`` as text: ``age = 37, sex = Female, ...``.

    ``groups`` from :func:`micro_groups` (read at each group's first record)
    or from :func:`summary_groups` (no per-record arrays: read from the
    table's combinations, which number the groups the same way).
    """
    ids = np.asarray(ids, dtype=np.int64)
    if len(groups.first_row):
        rows = groups.first_row[ids]
        codes = [col[rows] for col in data.qi_codes]
    else:
        summary = getattr(data, "combos", None)  # the Dask engine's summary, else the table's own
        codes = (Combos.of(data) if summary is None else summary).qi_codes_of(ids)
    return [", ".join(f"{c} = {data.qi_labels[j][codes[j][i]]}" for j, c in enumerate(data.qi))
            for i in range(len(ids))]


def group_ids(cols, domains, n: int) -> tuple[np.ndarray, int]:
    """Dense ids of the distinct combinations of ``cols`` (no int64 overflow).

    Combinations are ranked in lexicographic order of the codes; the key is
    re-compressed whenever the product of the domains would overflow.
    """
    key = np.zeros(n, dtype=np.int64)
    span = 1
    for col, dom in zip(cols, domains):
        dom = max(int(dom), 1)
        if span * dom >= 2**62:
            uniq, key = np.unique(key, return_inverse=True)
            key = key.ravel().astype(np.int64)
            span = len(uniq)
        key = key * dom + np.asarray(col, dtype=np.int64)
        span *= dom
    uniq, inverse = np.unique(key, return_inverse=True)
    return inverse.ravel().astype(np.int64), len(uniq)


_GROUPS: "weakref.WeakKeyDictionary[Dataset, MicroGroups]" = weakref.WeakKeyDictionary()


def micro_groups(data: Dataset) -> MicroGroups:
    """The micro groups of ``data`` on all its QI columns (memoised per dataset object).

    References
    ----------
    seed 001, Definition 1 (a micro group is a set of records agreeing on
    all non-sensitive attributes).
    """
    cached = _GROUPS.get(data)
    if cached is not None:
        return cached
    n, m = data.n, data.m
    group, n_groups = group_ids(data.qi_codes, data.domains, n)
    size = np.bincount(group, minlength=n_groups)
    sa = data.sa_codes.astype(np.int64)
    if n_groups * m <= _DENSE_PAIRS:
        flat = np.bincount(group * m + sa, minlength=n_groups * m)
        keys = np.flatnonzero(flat)
        count = flat[keys]
    else:
        keys, count = np.unique(group * m + sa, return_counts=True)
    pair_group, pair_value = keys // m, keys % m
    # most frequent value per group: sort pairs by (group, -count, value), take each group's first
    order = np.lexsort((pair_value, -count, pair_group))
    start = np.searchsorted(pair_group[order], np.arange(n_groups))
    top = order[start]
    first_row = np.full(n_groups, -1, dtype=np.int64)
    first_row[group[::-1]] = np.arange(n - 1, -1, -1)
    out = MicroGroups(group=group, size=size, pair_group=pair_group, pair_value=pair_value,
                      pair_count=count.astype(np.int64), top_count=count[top].astype(np.int64),
                      top_value=pair_value[top], first_row=first_row)
    _GROUPS[data] = out
    return out


def micro_groups_of(summary: Combos) -> MicroGroups:
    """The micro groups from a table's :class:`core.engine.combos.Combos` (no per-record arrays).

    Same group numbering, sizes, (group, value) counts and top values as
    :func:`micro_groups`; ``group`` and ``first_row`` are empty (a record's
    group is :meth:`Combos.group_of` of its QI codes).
    """
    group, n_groups = summary.qi_groups()
    size = summary.qi_sizes().astype(np.int64)
    value = summary.sa.astype(np.int64)
    count = summary.count.astype(np.int64)
    order = np.lexsort((value, -count, group))
    top = order[np.searchsorted(group[order], np.arange(n_groups))]
    empty = np.zeros(0, dtype=np.int64)
    return MicroGroups(group=empty, size=size, pair_group=group, pair_value=value, pair_count=count,
                       top_count=count[top], top_value=value[top], first_row=empty)


def summary_groups(data) -> MicroGroups:
    """:func:`micro_groups_of` the table's combinations (the Dask engine's summary, or :meth:`Combos.of`, memoised).

    What the test and the guarantee read (sizes, counts per value, top
    values), without the per-record group ids :func:`micro_groups` sorts for
    (at 100M records that sort was most of RP's release time).
    """
    summary = getattr(data, "combos", None)
    if summary is not None:
        return micro_groups_of(summary)
    # the app keeps them between slider moves (they do not depend on any parameter; core.engine.memo)
    return _memo.remember(_memo.for_data(data), ("rp/micro-groups",), lambda: micro_groups_of(Combos.of(data)))


# ----------------------------------------------------------------- the test
def conversion_e(f, p: float, m: int, lam: float):
    """Relative deviation ``e`` of the observed count equivalent to a relative error ``lambda`` of the estimate.

    ``e = lambda f p / (f p + (1-p)/m)``: ``F'_x - f_x > lambda f_x`` iff
    ``O_x > (1 + e) mu`` with ``mu = |g| (f p + (1-p)/m)``, and likewise
    for the lower tail (Theorem 4.6 with the MLE of Lemma 1).

    Examples
    --------
    >>> round(float(conversion_e(1.0, 0.46, 14, 0.5)), 4)
    0.4613

    References
    ----------
    seed 001, Theorem 4.6 and Corollary 4.9; MECHANISMS.md §2.
    """
    f = np.asarray(f, dtype=float)
    a = f * p + (1 - p) / m
    return lam * f * p / a


def tail_bounds(n, f, p: float, m: int, lam: float, family: str = "simplified"):
    """Chernoff upper bounds on both tails of the reconstruction error of one value.

    Parameters
    ----------
    n : int or array_like
        Independent trials behind the estimate (the group's size under UP).
    f : float or array_like
        True relative frequency ``f_x`` of the value in the group, ``> 0``.
    p, m : float, int
        Retention probability and SA domain size.
    lam : float
        Relative error ``lambda``.
    family : {"simplified", "full"}
        Eqs. (4)-(5) or eqs. (2)-(3) of Theorem 4.8.

    Returns
    -------
    (upper, lower) : arrays
        Bounds on ``Pr[F'_x - f_x > lambda f_x]`` and
        ``Pr[F'_x - f_x < -lambda f_x]`` (Corollary 4.9).

    References
    ----------
    seed 001, Theorem 4.8 and Corollary 4.9.
    """
    f = np.asarray(f, dtype=float)
    mu = np.asarray(n, dtype=float) * (f * p + (1 - p) / m)
    e = conversion_e(f, p, m, lam)
    if family == "full":
        return chernoff_upper(mu, e), chernoff_lower(mu, e)
    return simplified_upper(mu, e), simplified_lower(mu, e)


def is_private(n, f, p: float, m: int, lam: float, delta: float, family: str = "simplified"):
    """Corollary 4.10 for one value: both tail bounds at least delta.

    References
    ----------
    seed 001, Corollary 4.10 (eq. 8).
    """
    up, low = tail_bounds(n, f, p, m, lam, family)
    return np.minimum(up, low) >= delta ** (1 + TOL)


def _lower_exponent(f, p: float, m: int, lam: float, family: str):
    """``-ln(lower bound) / |g|``: the binding exponent per trial of Theorems 5.11 / 5.13."""
    f = np.asarray(f, dtype=float)
    a = f * p + (1 - p) / m
    e = lam * f * p / a
    if family == "full":
        # e + (1-e) ln(1-e), the exponent of eq. (3)
        h = e + (1 - e) * np.log1p(-np.minimum(e, 1.0 - 1e-16))
    else:
        h = e * e / 2.0
    return a * h


def threshold(f, p: float, m: int, lam: float, delta: float, family: str = "simplified"):
    """Size threshold ``s_g``: a group with top frequency ``f`` is private iff ``|g| <= s_g``.

    Simplified bounds (Theorem 5.13, eq. 10):
    ``s_g = 2 ln(1/delta) (f p + (1-p)/m) / (lambda p f)^2``.
    Full bounds (Theorem 5.11, eq. 9):
    ``s_g = ln(1/delta) / ((f p + (1-p)/m) (e + (1-e) ln(1-e)))`` with ``e``
    from :func:`conversion_e`.  In both cases the lower tail of the most
    frequent value binds (the theorems' proofs; checked in the tests).

    Examples
    --------
    >>> round(float(threshold(1.0, 0.46, 14, 0.5, 0.5)), 3)   # one-value group on Adult's occupation
    13.066

    References
    ----------
    seed 001, Theorems 5.11 and 5.13.
    """
    with np.errstate(divide="ignore"):
        return np.log(1.0 / delta) / _lower_exponent(f, p, m, lam, family)


def group_violates(n_trials: np.ndarray, pair_group: np.ndarray, pair_count: np.ndarray, p: float, m: int,
                   lam: float, delta: float, family: str = "simplified") -> np.ndarray:
    """Corollary 4.10 for every value of every group: True where some value fails.

    Parameters
    ----------
    n_trials : ndarray (G,)
        Independent trials per group (|g| under UP, the sample size for a
        group resampled by Algorithm 1).
    pair_group, pair_count : ndarray (P,)
        Count of each (group, value) among those trials; zero counts are
        values that did not make it into a sample and are skipped.
    """
    n_trials = np.asarray(n_trials)
    present = pair_count > 0
    trials = n_trials[pair_group[present]]
    ok = is_private(trials, pair_count[present] / trials, p, m, lam, delta, family)
    bad = np.bincount(pair_group[present], weights=~ok, minlength=len(n_trials))
    return bad > 0


# ----------------------------------------------------------------- Algorithm 1
def sample_sizes(size: np.ndarray, top_count: np.ndarray, s_g: np.ndarray, p: float, m: int, lam: float,
                 delta: float, family: str = "simplified") -> np.ndarray:
    """Sample size of each resampled group: the largest ``n <= s_g`` that survives any rounding.

    A sample of ``n`` records holds ``t_x = n o_x / |g|`` records of value x
    rounded down or up (:func:`sample_counts`), so its top value has at most
    ``ceil(n o_top / |g|)`` records.  ``n`` starts at ``floor(s_g)`` and is
    lowered while that worst case fails the threshold test (the top
    frequency is the binding one and the test is monotone in the top count,
    Theorems 5.11 / 5.13).  0 means no sample passes (``s_g < 1`` for a
    single record).
    """
    size = np.asarray(size, dtype=np.int64)
    top = np.asarray(top_count, dtype=np.int64)
    n = np.minimum(np.floor(np.asarray(s_g, dtype=float) * (1 + TOL)), size).astype(np.int64)
    n = np.maximum(n, 0)
    todo = np.flatnonzero(n > 0)
    while len(todo):
        nn = n[todo]
        worst = -(-nn * top[todo] // size[todo])  # ceil(n o_top / |g|)
        ok = nn <= threshold(worst / nn, p, m, lam, delta, family) * (1 + TOL)
        bad = todo[~ok]
        n[bad] -= 1
        todo = bad[n[bad] > 0]
    return n


def _group_starts(pair_group: np.ndarray, n_groups: int) -> np.ndarray:
    return np.searchsorted(pair_group, np.arange(n_groups))


def sample_counts(pair_group: np.ndarray, pair_count: np.ndarray, size: np.ndarray, n_sample: np.ndarray,
                  rng: np.random.Generator | None, uniform: np.ndarray | None = None) -> np.ndarray:
    """Sampling step of Algorithm 1: records of each value kept in each group's sample.

    Value x of group g keeps ``floor(t_x)`` records plus one more with
    probability ``frac(t_x)``, ``t_x = n_g o_x / |g|`` (seed 001 §5,
    Sampling).  The coin flips of one group are coupled (systematic
    sampling with one uniform offset per group) so that the counts add up to
    exactly ``n_g``; each value's marginal is the paper's.  Arithmetic is in
    integers, so shares are exact.

    Parameters
    ----------
    pair_group : ndarray (P,)
        Group of each (group, value) entry, sorted by group.
    pair_count : ndarray (P,)
        ``o_x``, the value's count in the group.
    size, n_sample : ndarray (G,)
        ``|g|`` and the sample size ``n_g`` of every group (indexed by group id).
    rng : numpy.random.Generator or None
        Draws the one uniform offset per group, unless ``uniform`` is given.
    uniform : ndarray (G,) of float in [0, 1), optional
        The offsets, drawn by the caller (the release: :mod:`core.rng`,
        counter = group id).

    Returns
    -------
    ndarray (P,)
        Sampled records per entry.

    Examples
    --------
    Example 5.15: 5 records of x1 and 15 of x2 sampled to 15 records give
    3 or 4 of x1 (3.75) and 11 or 12 of x2 (11.25), 15 in all:

    >>> c = sample_counts(np.array([0, 0]), np.array([5, 15]), np.array([20]), np.array([15]),
    ...                   np.random.default_rng(1))
    >>> int(c.sum()), bool(3 <= c[0] <= 4)
    (15, True)
    """
    pair_group = np.asarray(pair_group, dtype=np.int64)
    o = np.asarray(pair_count, dtype=np.int64)
    size = np.asarray(size, dtype=np.int64)
    n_sample = np.asarray(n_sample, dtype=np.int64)
    g_size = size[pair_group]
    prod = n_sample[pair_group] * o
    base, rem = prod // g_size, prod % g_size
    # cumulative remainders within each group (remainders of a group add up to a multiple of |g|)
    csum = np.cumsum(rem)
    before = csum - rem
    starts = _group_starts(pair_group, len(size))
    offset = np.zeros(len(size), dtype=np.int64)
    present = np.flatnonzero(np.bincount(pair_group, minlength=len(size)) > 0)
    offset[present] = before[starts[present]]
    hi = csum - offset[pair_group]
    lo = before - offset[pair_group]
    u01 = rng.random(len(size)) if uniform is None else np.asarray(uniform, dtype=float)
    u = np.minimum((u01 * size).astype(np.int64), np.maximum(size - 1, 0))  # uniform on 0..|g|-1
    uu = u[pair_group]
    extra = (hi + uu) // g_size - (lo + uu) // g_size
    return base + extra


def duplicates(record_group: np.ndarray, size: np.ndarray, n_sample: np.ndarray,
               rng: np.random.Generator | None, uniform: np.ndarray | None = None) -> np.ndarray:
    """Scaling step of Algorithm 1: copies of each sampled (randomised) record.

    Each of a group's ``n_g`` sampled records is published
    ``floor(|g| / n_g)`` times plus once more with probability
    ``frac(|g| / n_g)`` (seed 001 §5, Scaling); the extra copies go to a
    uniformly random subset of ``|g| mod n_g`` records, so the group is
    scaled back to exactly ``|g|`` rows with the paper's marginals.

    Parameters
    ----------
    record_group : ndarray (S,)
        Group of each sampled record, sorted by group.
    size, n_sample : ndarray (G,)
    rng : numpy.random.Generator or None
        Draws one uniform per sampled record (which records get the extra
        copies), unless ``uniform`` (S,) is given.

    Returns
    -------
    ndarray (S,) of int
    """
    record_group = np.asarray(record_group, dtype=np.int64)
    size = np.asarray(size, dtype=np.int64)
    n_sample = np.asarray(n_sample, dtype=np.int64)
    k = len(record_group)
    if k == 0:
        return np.zeros(0, dtype=np.int64)
    ns = n_sample[record_group]
    base = size[record_group] // ns
    extra_n = size[record_group] % ns
    u = rng.random(k) if uniform is None else np.asarray(uniform, dtype=np.float64)
    new = np.ones(k, dtype=bool)
    new[1:] = record_group[1:] != record_group[:-1]
    first = np.flatnonzero(new)  # where each group starts (record_group is sorted)
    gid = np.cumsum(new) - 1
    order = _by_group_then(u, gid, first)
    rank = np.empty(k, dtype=np.int64)
    rank[order] = np.arange(k) - first[gid[order]]
    return base + (rank < extra_n)


#: groups sorted in one pass by :func:`_by_group_then` (11 bits of group and 53 of the uniform fill a uint64)
_GROUPS_PER_SORT = 1 << 11


def _by_group_then(u: np.ndarray, gid: np.ndarray, first: np.ndarray) -> np.ndarray:
    """``np.lexsort((u, gid))`` for ``gid`` = 0, 0, 1, 1, 1, 2, ... (sorted, dense): each group in turn, by u, ties by position.

    Uniforms on the 53-bit grid (every release's: :func:`core.rng.uniforms`,
    numpy's ``random``) are sorted as one integer key per record,
    ``group << 53 | u 2**53``, a few thousand groups at a time: a plain
    quicksort of integers instead of lexsort's two indirect passes (RP's
    slider at census 5M: most of its plan).  Ties of the key are broken by
    position with a stable sort, as lexsort does; other floats take lexsort.
    """
    k = len(u)
    scaled = u * 2.0 ** 53
    whole = scaled.astype(np.uint64)
    if k == 0 or not (float(u.min()) >= 0.0 and float(u.max()) < 1.0 and np.array_equal(whole, scaled)):
        return np.lexsort((u, gid))
    del scaled
    out = np.empty(k, dtype=np.int64)
    n_groups = len(first)
    for g0 in range(0, n_groups, _GROUPS_PER_SORT):
        lo = int(first[g0])
        hi = int(first[g0 + _GROUPS_PER_SORT]) if g0 + _GROUPS_PER_SORT < n_groups else k
        key = (gid[lo:hi] - g0).astype(np.uint64) << np.uint64(53)
        key |= whole[lo:hi]
        o = np.argsort(key)
        sk = key[o]
        if len(sk) > 1 and np.any(sk[1:] == sk[:-1]):
            o = np.argsort(key, kind="stable")
        out[lo:hi] = o + lo
    return out


@dataclass(frozen=True, eq=False)
class Analysis:
    """The micro-group test of a table at given parameters (deterministic)."""

    groups: MicroGroups
    p: float
    m: int
    lam: float
    delta: float
    family: str
    s_g: np.ndarray          # (G,) size threshold
    violating: np.ndarray    # (G,) bool: open to reconstruction under plain UP
    n_sample: np.ndarray     # (G,) sample size of resampled groups (0 elsewhere)

    @property
    def resample(self) -> np.ndarray:
        return self.violating

    @property
    def stuck(self) -> np.ndarray:
        """Violating groups that no sample can make private."""
        return self.violating & (self.n_sample == 0)


def analyse(groups: MicroGroups, p: float, m: int, lam: float, delta: float,
            family: str = "simplified") -> Analysis:
    """Thresholds, violations under plain UP and Algorithm 1's sample sizes for every micro group.

    A group violates iff ``|g| > s_g`` (Theorems 5.11 / 5.13); the tests
    check this against Corollary 4.10 evaluated for every value.
    """
    s_g = threshold(groups.top_frequency, p, m, lam, delta, family)
    violating = groups.size > s_g * (1 + TOL)
    n_sample = np.zeros(groups.n_groups, dtype=np.int64)
    idx = np.flatnonzero(violating)
    if len(idx):
        n_sample[idx] = sample_sizes(groups.size[idx], groups.top_count[idx], s_g[idx], p, m, lam, delta,
                                     family)
    return Analysis(groups, p, m, lam, delta, family, s_g, violating, n_sample)


def largest_safe_p(m: int, lam: float, delta: float, family: str = "simplified") -> float:
    """Largest retention p at which one randomised record passes the test (``s_g >= 1`` at f = 1).

    The threshold decreases as p grows, so the answer is the root of
    ``s_g(f=1, p) = 1`` (1.0 if even p = 1 passes).
    """
    def gap(p: float) -> float:
        return float(threshold(1.0, p, m, lam, delta, family)) - 1.0

    if gap(1.0) >= 0:
        return 1.0
    from scipy import optimize  # here: importing the mechanisms (every command) stays light

    return float(optimize.brentq(gap, 1e-9, 1.0, xtol=1e-12))


def algorithm1(sa_codes: np.ndarray, an: Analysis, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Published SA codes of every record, and the sampled counts per (group, value).

    Groups that pass the test are perturbed with plain UP; each violating
    group is sampled to ``n_g`` records, the sample is perturbed with UP and
    scaled back to ``|g|`` rows (seed 001 Algorithm 1, lines 5-9).  Rows of
    a micro group share all QI values, so which of them receives which
    scaled value does not matter.

    Returns
    -------
    published : ndarray (N,)
    sampled : ndarray (P,)
        Records randomised per (group, value): the sample counts for
        resampled groups, ``o_x`` for the others (for the after-check).
    """
    g = an.groups
    p, m = an.p, an.m
    out = np.empty_like(sa_codes)
    plain = ~an.resample[g.group]
    out[plain] = perturb(sa_codes[plain], p, m, rng)
    sampled = g.pair_count.copy()
    rs_pairs = an.resample[g.pair_group]
    if rs_pairs.any():
        pg, pv = g.pair_group[rs_pairs], g.pair_value[rs_pairs]
        counts = sample_counts(pg, g.pair_count[rs_pairs], g.size, an.n_sample, rng)
        sampled[rs_pairs] = counts
        rec_group = np.repeat(pg, counts)
        rec_value = np.repeat(pv, counts).astype(sa_codes.dtype)
        y = perturb(rec_value, p, m, rng)
        copies = duplicates(rec_group, g.size, an.n_sample, rng)
        scaled = np.repeat(y, copies)
        order = np.argsort(g.group, kind="stable")
        rows = order[an.resample[g.group[order]]]
        out[rows] = scaled
    return out, sampled


class ReconstructionPlan(Plan):
    """Algorithm 1 as a plan: UP (purpose ``"up"``, as :class:`core.mechanisms.uniform.UniformPlan`) for
    records of open micro groups; for each resampled group, its scaled sequence of published values.

    Drawn in :meth:`Reconstruction.plan`, at group level: each resampled
    group's sample counts (one uniform per group, purpose ``"rp-sample"``,
    counter = group id), its sampled records' UP draws (purpose
    ``"rp-value"``, counter = the sampled record's index among all sampled
    records, group by group) and which sampled records get an extra copy
    (purpose ``"rp-copies"``, same counter).  A record of a resampled group
    takes the value at its rank in its group (``rank_by = "qi"``) of the
    group's sequence ``repeat(y, copies)``: the paper leaves which of a
    group's identical-QI records gets which scaled value open, and rows of
    a micro group share all QI values, so position decides.  Without any
    resampled group the plan ranks nothing and the release is UP's,
    record for record.
    """

    def __init__(self, seed: int, sa: str, p: float, m: int, resampled: np.ndarray, scaled_start: np.ndarray,
                 values: np.ndarray, cum_copies: np.ndarray, memo=None, ranked=None, **fields):
        # ``ranked``: every record's micro group and rank (whole table, from the app's memo), read by batch
        # slices instead of the engine ranking each batch
        ranked = ranked if len(values) else None
        super().__init__(seed=seed, rank_by="qi" if len(values) and ranked is None else None, **fields)
        self.sa, self.p, self.m = sa, float(p), int(m)
        self.resampled = resampled          # (G,) bool
        self.scaled_start = scaled_start    # (G,) int64: first index of the group's scaled values
        self.values = values                # (S,) the sampled records' published values
        self.cum_copies = cum_copies        # (S,) int64: cumulative copies, group by group
        # every resampled group's scaled sequence written out (one value per record of those groups, in the
        # narrowest type of m): a record's value is one lookup, where a binary search of cum_copies per record
        # missed the cache on every step (70% of a 100M-row release)
        copies = np.diff(np.asarray(cum_copies, dtype=np.int64), prepend=0)
        narrow = np.uint8 if self.m <= 255 else np.uint16 if self.m <= 65535 else np.int64
        self.scaled = np.repeat(np.asarray(values).astype(narrow), copies)  # (sum of copies,)
        self.memo, self.ranked = memo, ranked

    def __getstate__(self):
        # pickled (the Dask engine): no memo, and the engine ranks the batches again
        state = _memo.drop_memo(self.__dict__)
        if state["ranked"] is not None:
            state["ranked"], state["rank_by"] = None, "qi"
        return state

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        if self.memo is None:
            out = perturb_keyed(chunk.sa, self.p, self.m, self.seed, "up", chunk.start)
        else:  # UP's draws do not depend on lambda or delta: kept between slider moves (a copy is changed)
            kept = self.memo(("rp/up", int(self.seed), int(chunk.start), len(chunk), repr(self.p), self.m),
                             lambda: _memo.narrow(perturb_keyed(chunk.sa, self.p, self.m, self.seed, "up",
                                                                chunk.start), self.m))
            out = kept.astype(np.asarray(chunk.sa).dtype)
        key, rank = chunk.key, chunk.rank
        if key is None and self.ranked is not None:
            key, rank = (a[chunk.start:chunk.stop] for a in self.ranked)
        if key is not None:
            rs = np.flatnonzero(self.resampled[key])
            if len(rs):
                pos = self.scaled_start[key[rs]] + rank[rs]
                out[rs] = self.scaled[pos]
        return {self.sa: out}


def whole_table_ranks(data, summary) -> tuple[np.ndarray, np.ndarray]:
    """Every record's micro group (``rank_by = "qi"``'s key) and its rank among the group's records, in input order.

    What the engine computes batch by batch (:func:`core.engine.local.chunks`),
    for the whole table at once, in the narrowest unsigned types (the app
    keeps them between slider moves: they depend on the table only).
    """
    key, n_keys = summary.key_of("qi", data.qi_codes, data.sa_codes)
    rank, _ = ranks(key, n_keys)
    return _memo.narrow(key, n_keys), _memo.narrow(rank, max(1, data.n))


# ----------------------------------------------------------------- attack simulation
def simulate_group(values: np.ndarray, counts: np.ndarray, p: float, m: int, releases: int,
                   rng: np.random.Generator, n_sample: int | None = None) -> np.ndarray:
    """Estimated frequency of every SA value in one micro group over many independent releases.

    The group (``counts[i]`` records of ``values[i]``) is released
    ``releases`` times, each time with plain UP (``n_sample`` None or at
    least |g|) or with Algorithm 1's sampling to ``n_sample`` records and
    scaling back, using the very functions :meth:`Reconstruction.sanitize`
    uses (the releases play the role of groups).  The adversary's estimate
    is the UP estimator on the group's published rows:
    ``F'_x = (O_x/|g| - (1-p)/m) / p`` (Lemma 1).

    Returns
    -------
    ndarray (releases, m)
    """
    values = np.asarray(values, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    size = int(counts.sum())
    k = len(values)
    pair_group = np.repeat(np.arange(releases), k)
    pair_value = np.tile(values, releases)
    pair_count = np.tile(counts, releases)
    if n_sample is None or n_sample >= size:
        rec_group = np.repeat(pair_group, pair_count)
        rec_value = np.repeat(pair_value, pair_count)
        weights = None
    else:
        sizes = np.full(releases, size, dtype=np.int64)
        ns = np.full(releases, int(n_sample), dtype=np.int64)
        c = sample_counts(pair_group, pair_count, sizes, ns, rng)
        rec_group = np.repeat(pair_group, c)
        rec_value = np.repeat(pair_value, c)
        weights = duplicates(rec_group, sizes, ns, rng).astype(float)
    y = perturb(rec_value, p, m, rng)
    o = np.bincount(rec_group * m + y, weights=weights, minlength=releases * m).reshape(releases, m)
    return (o / size - (1 - p) / m) / p


# ----------------------------------------------------------------- mechanism
LAMBDA = Param("lambda", "λ", "Relative error an attacker's estimate of a micro group's value frequency should "
               "likely exceed.", 0.3, low=0, high=1, closed="neither", step=0.05, safer="higher",
               paper="seed 001 Table 3: 0.1 ... 0.9, default 0.3")
DELTA = Param("delta", "δ", "Smallest acceptable chance (Chernoff bound) of an error beyond λ, in each direction.",
              0.3, low=0, high=1, closed="neither", step=0.05, safer="higher",
              paper="seed 001 Table 3: 0.1 ... 0.9, default 0.3")
P = Param("p", "p", "Retention: chance a (sampled) record keeps its true value. Empty = the largest p that "
          "(ρ₁, ρ₂)-privacy allows.", 0.46, low=0, high=1, closed="right", optional=True, step=0.01,
          safer="lower", paper="seed 001 Table 3: 0.14 ... 0.46, default 0.46")
BOUND = Param("bound", "bound", "Tail bounds of the test: 'simplified' Chernoff (the paper's Algorithm 1) or the "
              "tighter 'full' Chernoff bounds, which resample more groups.", "simplified", kind="choice",
              choices=FAMILIES, paper="seed 001 Theorem 5.13 (simplified), 5.11 (full)")


class Reconstruction(Mechanism):
    name = "reconstruction"
    title = "Reconstruction privacy (RP, Algorithm 1)"
    paper = "seed 001 (Wang et al., randomization resilient to sensitive reconstruction)"
    summary = ("Uniform perturbation, repaired for small groups of look-alikes. Records that share every QI value "
               "form a micro group; an attacker who knows a person's QI values can estimate the sensitive "
               "values of that group from the release, and in a large group the estimate is accurate. Each "
               "group too large for the (λ, δ) test gets only a sample of its records randomised, copied back "
               "to full size: the group's totals stay right on average, but the attacker's estimate becomes "
               "noisy. Counts over many groups are estimated exactly as for uniform perturbation.")
    order = 15
    params = (LAMBDA, DELTA, P, BOUND, RHO1, RHO2)
    main_param = "p"
    sweep = (0.14, 0.22, 0.30, 0.38, 0.46)
    bounds = ("reconstruction-threshold", "reconstruction-tails")

    def check_params(self, values: dict[str, Any]) -> None:
        if values["p"] is None:
            check_rho(values, self.name)

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        out = Uniform().derived(data, values)
        lam, delta, fam = values["lambda"], values["delta"], values["bound"]
        out["threshold_one_value"] = float(threshold(1.0, out["p"], data.m, lam, delta, fam))
        return out

    def analysis(self, data: Dataset, values: Mapping[str, Any]) -> Analysis:
        p = self.derived(data, values)["p"]
        return analyse(summary_groups(data), p, data.m, values["lambda"], values["delta"], values["bound"])

    def check(self, data: Dataset, values: Mapping[str, Any]) -> None:
        an = self.analysis(data, values)
        stuck = int(an.stuck.sum())
        if stuck:
            best = largest_safe_p(data.m, an.lam, an.delta, an.family)
            best = math.floor(best * 1000) / 1000
            s1 = float(threshold(1.0, an.p, an.m, an.lam, an.delta, an.family))
            raise NotEligible(
                f"With λ = {an.lam:g}, δ = {an.delta:g} and p = {an.p:.3g} ({an.family} bounds), {stuck:,} "
                f"micro group(s) stay open to reconstruction however few of their records are randomised: "
                f"the bound is below δ already for one record (size threshold {s1:.2f} records for a group "
                f"holding one value); lower p to at most {best:g}, or lower λ or δ.",
                suggestion={"p": best} if best > 0 else None,
            )

    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> ReconstructionPlan:
        """Algorithm 1 from the micro groups' counts (:class:`ReconstructionPlan` says what is drawn where)."""
        d = self.derived(summary, values)
        p, m, n = d["p"], summary.m, summary.n
        memo = _memo.bind(summary)
        data = _memo.local_data(summary)
        g = (micro_groups_of(summary) if memo is None else
             memo(("rp/micro-groups",), lambda: micro_groups_of(Combos.of(data))))
        an = analyse(g, p, m, values["lambda"], values["delta"], values["bound"])
        rs = an.resample
        sampled = g.pair_count.copy()
        scaled_start = np.zeros(g.n_groups, dtype=np.int64)
        y = np.zeros(0, dtype=summary.sa.dtype)
        cum = np.zeros(0, dtype=np.int64)
        rs_pairs = rs[g.pair_group]
        if rs_pairs.any():
            pg, pv = g.pair_group[rs_pairs], g.pair_value[rs_pairs]
            u = _rng.uniforms(seed, "rp-sample", 0, g.n_groups)
            counts = sample_counts(pg, g.pair_count[rs_pairs], g.size, an.n_sample, None, uniform=u)
            sampled[rs_pairs] = counts
            rec_group = np.repeat(pg, counts)
            rec_value = np.repeat(pv, counts)
            y = perturb_keyed(rec_value, p, m, seed, "rp-value", 0)
            copies = duplicates(rec_group, g.size, an.n_sample, None,
                                uniform=_rng.uniforms(seed, "rp-copies", 0, len(rec_group)))
            cum = np.cumsum(copies).astype(np.int64)
            sizes = np.where(rs, g.size, 0)
            scaled_start = (np.cumsum(sizes) - sizes).astype(np.int64)
        trials = np.where(rs, an.n_sample, g.size)
        after = group_violates(trials, g.pair_group, sampled, p, m, an.lam, an.delta, an.family)
        pub = self._published(summary, values, d, an, after, trials)
        ranked = None
        if memo is not None and len(y):  # the records' groups and ranks, kept between slider moves
            ranked = memo(("rp/qi-ranks",), lambda: whole_table_ranks(data, Combos.of(data)))
        return ReconstructionPlan(seed, summary.sa_name, p, m, rs.copy(), scaled_start, y, cum, memo=memo,
                                  ranked=ranked, labels={summary.sa_name: summary.sa_labels}, **pub)

    def _published(self, summary: Combos, values, d, an: Analysis, after, trials) -> dict[str, Any]:
        """The published metadata, privacy figures, notes and state of a release (module docstring)."""
        p, m, n = d["p"], summary.m, summary.n
        g = an.groups
        data = summary
        rs = an.resample
        gap = g.size - an.s_g
        privacy = {
            "lambda": an.lam,
            "delta": an.delta,
            "bound": an.family,
            "micro_groups": g.n_groups,
            "violating_groups_before": int(an.violating.sum()),
            "share_groups_violating_before": float(an.violating.mean()) if g.n_groups else 0.0,
            "violating_groups_after": int(after.sum()),
            "resampled_groups": int(rs.sum()),
            "share_records_resampled": float(g.size[rs].sum() / data.n),
            "largest_threshold_gap": float(gap[rs].max()) if rs.any() else 0.0,
            "independent_trials": int(trials.sum()),
            "share_independent_trials": float(trials.sum() / data.n),
        }
        notes = []
        if rs.any():
            notes.append(
                f"{int(rs.sum()):,} of {g.n_groups:,} micro groups ({g.size[rs].sum() / data.n:.1%} of the "
                f"records) were too large for the (λ = {an.lam:g}, δ = {an.delta:g}) test under plain uniform "
                f"perturbation; only a sample of each was randomised and copied back to its size. Which "
                f"groups these are is not part of the release: it would hint that they hold a dominant value.")
        else:
            notes.append(f"All {g.n_groups:,} micro groups pass the (λ = {an.lam:g}, δ = {an.delta:g}) test under "
                         f"plain uniform perturbation; the release is plain UP.")
        return dict(published={"p": p, "m": m, "gamma": d["gamma"], "lambda": an.lam, "delta": an.delta,
                               "bound": an.family, "domain": [str(v) for v in summary.sa_labels]},
                    privacy=privacy, notes=tuple(notes), state={"p": p, "m": m})

    # ---------------------------------------------------------- guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"(λ, δ)-reconstruction privacy with λ = {values['lambda']:g}, δ = {values['delta']:g} "
                f"({values['bound']} Chernoff bounds): in every micro group (records sharing all QI values), an "
                f"attacker's reconstruction of any value's frequency errs by more than λ with probability at least "
                f"δ in each direction (seed 001 Corollary 4.10), on the records actually randomised.")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """The (λ, δ) test on the realised samples (``privacy.violating_groups_after``); vacuous without resampling."""
        pr = release.privacy
        groups, after = int(pr["micro_groups"]), int(pr["violating_groups_after"])
        figures = {"micro_groups": groups, "open_under_up": int(pr["violating_groups_before"]),
                   "resampled_groups": int(pr["resampled_groups"]),
                   "share_records_resampled": float(pr["share_records_resampled"]),
                   "violating_groups_after": after, "p": float(release.published["p"])}
        fail = (G.failure("the (λ, δ) test", after, 0, after, groups, "micro groups") if after else None)
        vacuous = None
        if not pr["resampled_groups"]:
            start = self.first_open_p(data, values)
            vacuous = (f"no micro group is open to reconstruction under plain UP at p = {figures['p']:.4g} (all "
                       f"{groups:,} pass the test), so Algorithm 1 resamples nothing and the release is uniform "
                       f"perturbation under another name"
                       + (f"; RP would start resampling from p ≈ {start:.3g}" if start is not None else
                          "; RP resamples nothing at any p for these QIs, λ and δ"))
        return G.judge(self.name, self.promise(values), figures, [fail], vacuous=vacuous,
                       explains=tuple(release.notes) if vacuous else ())

    def first_open_p(self, data: Dataset, values: Mapping[str, Any]) -> float | None:
        """The smallest retention p at which some micro group fails the test under plain UP (bisection), or None."""
        groups = summary_groups(data)
        lam, delta, fam = values["lambda"], values["delta"], values["bound"]

        def any_open(p: float) -> bool:
            return bool(np.any(groups.size > threshold(groups.top_frequency, p, data.m, lam, delta, fam) * (1 + TOL)))

        if not any_open(1.0):
            return None
        lo, hi = 1e-6, 1.0
        for _ in range(40):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if any_open(mid) else (mid, hi)
        return hi

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        # the UP estimator on the published table (seed 001 §3.1, Lemma 1; Theorem 5.18)
        o, size = observed(release, batch)
        return mle(o, size, batch.sa.sum(axis=1), release.state["p"], release.state["m"])

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        return grid_mle(release, conditions)  # UP's estimator, each condition counted once


MECHANISMS = [Reconstruction()]
