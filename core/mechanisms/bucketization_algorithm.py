"""F'-privacy bucketization algorithms of seed 003 (Wang et al.), on SA counts only.

A *bucket setting* ``[(S_1, b_1), ..., (S_q, b_q)]`` has ``b_j`` buckets of
``S_j`` records.  It is *valid* for a table with value counts ``o_i`` and
thresholds ``f'_i`` when the records can be assigned so that no value has a
share above ``f'_i`` in any bucket (Definition 2, §3.4).  Everything here
works on the counts ``o`` and thresholds ``f'``; the mechanism
(:mod:`core.mechanisms.bucketization`) deals real records.

* :func:`fprime` - the default specification ``f'_i = min(1, theta f_i + b)``
  with per-value overrides (§3.2, §7.1).
* :func:`valid_one` (Lemma 2), :func:`valid_two` (Theorem 3).
* :func:`gamma_list` - the feasible pairs ``Gamma(S_1, S_2)`` (Lemma 4).
* :func:`two_size` - Algorithm 1 with loss-based (Lemma 6, eq. 11) and
  privacy-based pruning (Lemmas 7-8, Theorem 4); :func:`two_size_scan` -
  the plain scan of every feasible pair, kept for the tests;
  :func:`two_size_fast` - the same answer with the pairs of sizes examined
  together in numpy, which the mechanism uses (Algorithms 1 and 2).
* :func:`record_partition` (§4.3), :func:`multi_size` (Algorithm 2),
  :func:`optimal` (the integer program of §7.2, ``scipy.optimize.milp``).

Choices where the paper is silent
---------------------------------
* ``floor(f'_i S)`` is computed as ``floor(f'_i S + 1e-9)`` so a product
  such as 0.29 x 100 = 28.999999999999996 counts as 29 (the real number the
  specification means).
* The smallest size ``M = min_i ceil(1/f'_i)`` is taken over the values
  that occur (a size below it can hold no record of any value); in the
  recursion of Algorithm 2 over the values of the sub-table.
* Theorem 4 says each ``H(PC(x_i), Gamma')`` is found by binary search and
  that sub-lists intersect in O(1).  ``H(PC(x_i))`` is the list minus one
  interval (the part of ``Gamma'(x_i)`` where eq. 15 fails), not an interval,
  so ``Gamma*`` is the FC interval minus up to m such gaps; the first valid
  pair is the first position of the FC interval that no gap covers (one
  sort of the gaps).  The FC interval is found by binary search (Lemma 7);
  each gap's ends follow in closed form from the linear conditions of
  Lemma 8 (the binary search's answer, computed directly).
* Loss-based pruning: a pair of sizes whose first feasible pair already has
  a loss of at least ``Best_loss`` is skipped (its ``Gamma'`` prefix of
  losses below ``Best_loss`` is empty; eq. 11's ``max{0, .}`` would keep one
  pair only for line 10 to reject it).
* Record partition: the ``|T_1| - s(B_1)`` records to move from T_1 to T_2
  are spread one value at a time in rounds (values in code order), as
  Example 3 moves one record of each of x9..x14.
* Algorithm 2 starts from the whole table as one bucket (loss
  ``(|T|-1)^2``), which is valid by Lemma 1; if no two-size setting within
  ``M..M'`` exists, there is no answer within the size cap and we say so.
* Ties between settings of equal loss: the first found in Algorithm 1's
  order (smaller S_1, then smaller S_2) wins.

References
----------
seed 003 (Wang, Wang, Fu, Wong, "Inferential or differential: privacy laws
dictate"), §3-5, Lemmas 1-8, Theorems 3-4, Algorithms 1-2, Examples 3-4;
MECHANISMS.md section 4.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..errors import NotEligible, ParameterError, clip

EPS = 1e-9
#: largest integer program :func:`optimal` accepts: values x sizes
OPTIMAL_MAX_CELLS = 1200
#: seconds the integer program may take before we give up and say so
OPTIMAL_TIME_LIMIT = 20.0


# ------------------------------------------------------------------ specification
def fprime(counts: np.ndarray, theta: float, b: float = 0.02,
           overrides: Mapping[int, float] | None = None) -> np.ndarray:
    """``f'_i = min(1, theta f_i + b)`` (seed 003 §3.2, §7.1), then per-value overrides.

    >>> fprime(np.array([1, 6, 9]), 2, 0.05).round(2).tolist()  # f = 1/16, 6/16, 9/16
    [0.18, 0.8, 1.0]
    """
    counts = np.asarray(counts, dtype=float)
    f = counts / counts.sum()
    out = np.minimum(1.0, theta * f + b)
    for i, v in (overrides or {}).items():
        out[int(i)] = float(v)
    return out


def parse_overrides(text: str, labels: Sequence, owner: str = "bucketization") -> dict[int, float]:
    """Parse ``"Exec-managerial=0.05;Sales=0.1"`` into ``{code: f'}``.

    Values are separated by ``;`` (labels may contain commas); each
    threshold is a number in (0, 1].  Raises ParameterError with one
    sentence naming the first problem.
    """
    text = (text or "").strip()
    if not text or text.lower() in {"none", "auto"}:
        return {}
    index = {str(lab): i for i, lab in enumerate(labels)}
    out: dict[int, float] = {}
    for part in text.split(";"):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise ParameterError(
                f"The 'overrides' parameter of {owner} lists value=threshold pairs separated by ';', "
                f"like Exec-managerial=0.05;Sales=0.1. Got '{clip(part)}'.")
        name, value = (s.strip() for s in part.rsplit("=", 1))
        if name not in index:
            shown = ", ".join(list(index)[:8]) + (" ..." if len(index) > 8 else "")
            raise ParameterError(
                f"The 'overrides' parameter of {owner} names '{clip(name)}', which is not a value of the "
                f"sensitive attribute ({shown}).")
        from ..params import parse_number

        number = parse_number(value)
        if number is None or not 0 < number <= 1:
            raise ParameterError(
                f"The 'overrides' parameter of {owner} gives '{clip(name)}' the threshold '{clip(value)}'; a threshold "
                f"f' is a number in (0, 1].")
        out[index[name]] = float(number)
    return out


def caps(fp: np.ndarray, size) -> np.ndarray:
    """``floor(f'_i S)``: most records of x_i a bucket of size S may hold (Lemma 2)."""
    return np.floor(np.multiply.outer(np.asarray(fp, float), np.asarray(size, float)) + EPS).astype(np.int64)


def min_size(counts: np.ndarray, fp: np.ndarray) -> int:
    """``M = min_i ceil(1/f'_i)`` over the values that occur (§5.1)."""
    present = np.asarray(counts) > 0
    if not present.any():
        return 1
    return int(np.ceil(1.0 / np.asarray(fp, float)[present] - EPS).min())


def check_spec(counts: np.ndarray, fp: np.ndarray, labels: Sequence, theta: float | None = None,
               b: float | None = None, overridden: Sequence[int] = ()) -> None:
    """Lemma 1: a valid bucketization exists iff ``f'_i >= f_i`` for every value; else say which.

    The message names the failing values and the smallest threshold each
    needs; for values under the default specification it also gives the
    smallest theta that works (``theta f_i + b >= f_i``).
    """
    counts = np.asarray(counts, float)
    f = counts / counts.sum()
    bad = np.flatnonzero(fp < f - EPS)
    if not len(bad):
        return
    names = ", ".join(f"'{labels[i]}' (share {f[i]:.2%}, f' = {fp[i]:.2%})" for i in bad[:3])
    more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
    plural = len(bad) > 1
    msg = (f"No bucketization can meet these thresholds: {len(bad)} value{'s have' if plural else ' has'} "
           f"f' below {'their' if plural else 'its'} share of the table ({names}{more}), and some bucket "
           f"always holds a value at least as often as the whole table does (seed 003 Lemma 1)")
    suggestion: dict = {}
    over = set(int(i) for i in overridden)
    by_hand = [i for i in bad if i in over]
    if by_hand:
        msg += "; raise " + ", ".join(f"'{labels[i]}' to at least {math.ceil(f[i] * 1000) / 1000:g}"
                                      for i in by_hand[:3])
    default = [i for i in bad if i not in over and f[i] > 0]
    if default and theta is not None and b is not None:
        t = max((f[i] - b) / f[i] for i in default)
        t_ok = math.ceil(t * 100 - 1e-9) / 100
        if t_ok > theta:
            suggestion = {"theta": t_ok}
            msg += f"; θ = {t_ok:g} or more would work"
    raise NotEligible(msg + ".", suggestion=suggestion)


# ------------------------------------------------------------------ validation
def loss_of(setting: Sequence[tuple[int, int]]) -> int:
    """``Loss = sum_j b_j (S_j - 1)^2`` (eq. 2, eq. 6)."""
    return int(sum(b * (s - 1) ** 2 for s, b in setting))


def valid_one(counts: np.ndarray, fp: np.ndarray, size: int, buckets: int) -> bool:
    """Lemma 2 (4): ``o_i <= floor(f'_i S) b`` for every value, and ``|T| = S b``."""
    counts = np.asarray(counts)
    return int(counts.sum()) == size * buckets and bool(np.all(counts <= caps(fp, size) * buckets))


def valid_two(counts: np.ndarray, fp: np.ndarray, s1: int, b1: int, s2: int, b2: int) -> bool:
    """Theorem 3: PC, FC and CC with ``u_ij = floor(f'_i S_j) b_j``, ``a_ij = min(u_ij, o_i)``."""
    counts = np.asarray(counts, dtype=np.int64)
    a1 = np.minimum(caps(fp, s1) * b1, counts)
    a2 = np.minimum(caps(fp, s2) * b2, counts)
    pc = bool(np.all(a1 + a2 >= counts))
    fc = int(a1.sum()) >= s1 * b1 and int(a2.sum()) >= s2 * b2
    cc = int(counts.sum()) == s1 * b1 + s2 * b2
    return pc and fc and cc


# ------------------------------------------------------------------ Gamma(S1, S2)
@dataclass(frozen=True)
class Gamma:
    """The feasible pairs of Lemma 4: ``(b1_0 - i d1, b2_0 + i d2)`` for ``i = 0..k``."""

    s1: int
    s2: int
    b1_0: int
    b2_0: int
    d1: int
    d2: int
    k: int

    def pair(self, i) -> tuple:
        return self.b1_0 - i * self.d1, self.b2_0 + i * self.d2

    def pairs(self) -> list[tuple[int, int]]:
        return [self.pair(i) for i in range(self.k + 1)]

    def loss(self, i) -> int:
        b1, b2 = self.pair(i)
        return b1 * (self.s1 - 1) ** 2 + b2 * (self.s2 - 1) ** 2


def gamma_list(n: int, s1: int, s2: int) -> Gamma | None:
    """``Gamma(S_1, S_2)`` for ``|T| = n`` (eq. 7-9), or None when no pair is feasible.

    >>> g = gamma_list(28, 2, 4); g.pairs()  # seed 003 Example 4
    [(14, 0), (12, 1), (10, 2), (8, 3), (6, 4), (4, 5), (2, 6), (0, 7)]
    """
    lcm = s1 * s2 // math.gcd(s1, s2)
    d1, d2 = lcm // s1, lcm // s2
    # eq. 7: the smallest b2 >= 0 with S1 | n - S2 b2; b2 mod d1 repeats, so try b2 < d1
    for b2 in range(min(d1, n // s2 + 1)):
        rest = n - s2 * b2
        if rest >= 0 and rest % s1 == 0:
            b1 = rest // s1
            return Gamma(s1, s2, b1, b2, d1, d2, b1 // d1)
    return None


# ------------------------------------------------------------------ Algorithm 1
@dataclass
class SearchStats:
    """What a two-size search looked at (for the scale-up benchmark)."""

    size_pairs: int = 0
    skipped_by_loss: int = 0
    pairs_examined: int = 0


def _first_valid(counts: np.ndarray, c1: np.ndarray, c2: np.ndarray, g: Gamma, kmax: int,
                 stats: SearchStats | None = None) -> int | None:
    """First valid position in ``Gamma'`` = positions 0..kmax (Theorem 4), or None."""
    o = counts

    def fc1(i: int) -> bool:  # eq. 12, monotone (Lemma 7)
        b1 = g.b1_0 - i * g.d1
        return int(np.minimum(c1 * b1, o).sum()) >= g.s1 * b1

    def fc2(i: int) -> bool:  # eq. 13, anti-monotone
        b2 = g.b2_0 + i * g.d2
        return int(np.minimum(c2 * b2, o).sum()) >= g.s2 * b2

    # H(FC(S1)) is a suffix: first i where it holds
    lo, hi = 0, kmax + 1
    while lo < hi:
        mid = (lo + hi) // 2
        if stats is not None:
            stats.pairs_examined += 1
        if fc1(mid):
            hi = mid
        else:
            lo = mid + 1
    start = lo
    if start > kmax or not fc2(start):  # H(FC(S2)) is a prefix; it must contain start
        return None
    # PC gaps (Lemma 8): A_i = c1 b1 >= o holds on [0, p]; B_i = c2 b2 >= o on [q, kmax];
    # between them PC degenerates to eq. 15, linear in the position with slope c2 d2 - c1 d1
    live = o > 0
    o, c1, c2 = o[live], c1[live], c2[live]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(c1 > 0, np.floor_divide(c1 * g.b1_0 - o, np.maximum(c1 * g.d1, 1)), -1)
        q = np.where(c2 > 0, -np.floor_divide(-(o - c2 * g.b2_0), np.maximum(c2 * g.d2, 1)), kmax + 1)
    p = np.clip(p, -1, kmax)
    q = np.clip(q, 0, kmax + 1)
    base = c1 * g.b1_0 + c2 * g.b2_0 - o  # eq. 15 holds at i iff base + i slope >= 0
    slope = c2 * g.d2 - c1 * g.d1
    big = kmax + 1
    pos = slope > 0
    neg = slope < 0
    safe = np.where(slope == 0, 1, slope)
    # eq. 15 fails on [0, r] (slope > 0), on [r, inf) (slope < 0), everywhere or nowhere (slope 0)
    zero_fail = base < 0
    fail_lo = np.where(pos, 0, np.where(neg, np.floor_divide(base, -safe) + 1, np.where(zero_fail, 0, big)))
    fail_hi = np.where(pos, -np.floor_divide(base, safe) - 1, np.where(neg, big, np.where(zero_fail, big, -1)))
    gap_lo = np.maximum(p + 1, fail_lo)
    gap_hi = np.minimum(q - 1, fail_hi)
    has = gap_lo <= gap_hi
    gap_lo, gap_hi = gap_lo[has], gap_hi[has]
    # first position from start on covered by no gap; FC(S2) holds on a prefix, so it is
    # valid iff FC(S2) holds there
    i = start
    if len(gap_lo):
        order = np.argsort(gap_lo, kind="stable")
        for a, b in zip(gap_lo[order].tolist(), gap_hi[order].tolist()):
            if a > i:
                break
            if b >= i:
                i = b + 1
    if i > kmax:
        return None
    if stats is not None:
        stats.pairs_examined += 1
    return i if fc2(i) else None


@dataclass(frozen=True)
class TwoSize:
    """An optimal two-size setting ``<(S_1, b_1), (S_2, b_2)>`` and its loss."""

    s1: int
    b1: int
    s2: int
    b2: int
    loss: int

    @property
    def setting(self) -> list[tuple[int, int]]:
        return [(s, b) for s, b in ((self.s1, self.b1), (self.s2, self.b2)) if b > 0]


def two_size(counts: np.ndarray, fp: np.ndarray, max_size: int = 50, smallest: int | None = None,
             stats: SearchStats | None = None, prune: str = "full") -> TwoSize | None:
    """Algorithm 1 (TwoSizeBucketting) with loss- and privacy-based pruning, or None if nothing is valid.

    Pairs of sizes ``M <= S_1 < S_2 <= M'`` are visited smaller first; for
    each, ``Gamma'`` is the prefix of ``Gamma(S_1, S_2)`` whose loss is below
    the best so far (Lemma 6, eq. 11) and its first valid pair is found by
    the monotonicities of FC and PC (Lemmas 7-8, Theorem 4).  ``prune="loss"``
    scans ``Gamma'`` pair by pair with Theorem 3 instead ("Loss-pruning" of
    §7.3); the answer is the same, only the time differs.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return None
    m_low = min_size(counts, fp) if smallest is None else smallest
    sizes = np.arange(1, max_size + 1)
    cap = caps(fp, sizes)  # (m, M')
    best: TwoSize | None = None
    best_loss = math.inf
    for s1 in range(max(m_low, 1), max_size):
        for s2 in range(s1 + 1, max_size + 1):
            g = gamma_list(n, s1, s2)
            if stats is not None:
                stats.size_pairs += 1
            if g is None:
                continue
            first = g.loss(0)
            if first >= best_loss:  # Lemma 6: no pair of (S1, S2) beats the best
                if stats is not None:
                    stats.skipped_by_loss += 1
                continue
            kmax = g.k
            if math.isfinite(best_loss):
                step = g.d2 * (s2 - 1) ** 2 - g.d1 * (s1 - 1) ** 2  # > 0 (Lemma 5)
                kmax = min(kmax, max(0, (int(best_loss) - first) // step))  # eq. 11
            if prune == "loss":
                i = next((j for j in range(kmax + 1) if valid_two(counts, fp, s1, g.pair(j)[0], s2, g.pair(j)[1])),
                         None)
                if stats is not None:
                    stats.pairs_examined += (kmax + 1) if i is None else i + 1
            else:
                i = _first_valid(counts, cap[:, s1 - 1], cap[:, s2 - 1], g, kmax, stats)
            if i is None:
                continue
            b1, b2 = g.pair(i)
            loss = g.loss(i)
            if loss < best_loss:
                best_loss = loss
                best = TwoSize(s1, int(b1), s2, int(b2), int(loss))
    return best


def _gamma_all(n: int, s1: np.ndarray, s2: np.ndarray):
    """:func:`gamma_list` of many size pairs at once: ``(ok, b1_0, b2_0, d1, d2, k)`` arrays (``ok``: Gamma not empty).

    Eq. 7's smallest ``b2 >= 0`` with ``S_1 | n - S_2 b2`` solves
    ``S_2 b2 = n (mod S_1)``: with ``g = gcd(S_1, S_2)`` there is one iff
    ``g | n``, and the smallest is ``(n / g) x mod (S_1 / g)`` where ``S_2 x
    = g (mod S_1)`` (extended Euclid); it is below ``S_1 / g = d2 < d1``, so
    it is the one :func:`gamma_list`'s loop finds when ``S_2 b2 <= n``.
    """
    s1 = np.asarray(s1, dtype=np.int64)
    s2 = np.asarray(s2, dtype=np.int64)
    # extended Euclid on (S2, S1), every pair together: old_r = g, S2 old_s = g (mod S1)
    old_r, r = s2.copy(), s1.copy()
    old_s, t = np.ones_like(s1), np.zeros_like(s1)
    while r.any():
        nz = r != 0
        qt = np.where(nz, old_r // np.where(nz, r, 1), 0)
        old_r, r = np.where(nz, r, old_r), np.where(nz, old_r - qt * r, r)
        old_s, t = np.where(nz, t, old_s), np.where(nz, old_s - qt * t, t)
    g = old_r
    d1, d2 = s2 // g, s1 // g  # lcm / S1, lcm / S2
    b2_0 = ((n // g) % d2) * (old_s % d2) % d2
    ok = (n % g == 0) & (b2_0 <= n // s2)
    b2_0 = np.where(ok, b2_0, 0)
    b1_0 = np.where(ok, (n - s2 * b2_0) // s1, 0)
    return ok, b1_0, b2_0, d1, d2, b1_0 // d1


#: size pairs examined together by :func:`two_size_fast` (bounds its (pairs x values) arrays)
PAIR_BLOCK = 2048
#: pairs of least first loss :func:`two_size_fast` examines first, to bound the others' losses (eq. 11)
FIRST_PAIRS = 32


def two_size_fast(counts: np.ndarray, fp: np.ndarray, max_size: int = 50,
                  smallest: int | None = None) -> TwoSize | None:
    """:func:`two_size`'s answer with the pairs of sizes examined together (numpy), or None.

    The same setting as Algorithm 1 (a test checks it on random tables):
    for each pair ``M <= S_1 < S_2 <= M'`` the first valid position of
    ``Gamma(S_1, S_2)`` is found as :func:`_first_valid` finds it (FC(S_1)
    by binary search, Lemma 7; the PC gaps of Lemma 8 in closed form; then
    FC(S_2)), for a block of pairs at a time; the answer is the pair of
    least loss, the first in Algorithm 1's order (smaller S_1, then smaller
    S_2) among equals.  Loss-based pruning (Lemma 6, eq. 11) with a bound
    found first: the :data:`FIRST_PAIRS` pairs whose first feasible pair
    loses least are examined first; of the others only those whose first
    feasible pair loses at most the best loss found, each up to the last
    position whose loss is at most that (eq. 11), can give the answer or
    tie with it.  Pruning changes the time only, not the answer;
    :func:`two_size` keeps Algorithm 1's own order for the experiments of
    §7.3 that time it.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    if n == 0:
        return None
    m_low = max(min_size(counts, fp) if smallest is None else smallest, 1)
    if m_low >= max_size:
        return None
    s1, s2 = np.triu_indices(max_size + 1, 1)  # Algorithm 1's order: S1, then S2
    keep = s1 >= m_low
    s1, s2 = s1[keep].astype(np.int64), s2[keep].astype(np.int64)
    ok, b1_0, b2_0, d1, d2, k = _gamma_all(n, s1, s2)
    idx = np.flatnonzero(ok)  # each pair's place in Algorithm 1's order (ties go to the first)
    pairs = np.stack([a[ok] for a in (s1, s2, b1_0, b2_0, d1, d2, k)])  # (7, P)
    if not len(idx):
        return None
    s1, s2, b1_0, b2_0 = pairs[:4]
    loss0 = b1_0 * (s1 - 1) ** 2 + b2_0 * (s2 - 1) ** 2  # each pair's least loss (Lemma 5)
    live = counts > 0
    o = counts[live][None, :]  # (1, m): values that occur (the others add nothing to FC and make no PC gap)
    cap = np.ascontiguousarray(caps(np.asarray(fp, float)[live], np.arange(max_size + 1)).T)  # (M' + 1, m)
    found = []  # (place, loss, b1, b2, s1, s2) of each pair's first valid position

    def examine(sel: np.ndarray, kmax: np.ndarray) -> None:
        for at in range(0, len(sel), PAIR_BLOCK):
            part = sel[at:at + PAIR_BLOCK]
            got = _first_valid_all(o, cap, pairs[:, part], kmax[at:at + PAIR_BLOCK])
            if got is not None:
                where, b1, b2, loss = got
                found.append((idx[part][where], loss, b1, b2, pairs[0, part][where], pairs[1, part][where]))

    first = np.argsort(loss0, kind="stable")[:FIRST_PAIRS]
    examine(np.sort(first), pairs[6, np.sort(first)])
    rest = np.ones(len(idx), dtype=bool)
    rest[first] = False
    if found:
        bound = min(int(f[1].min()) for f in found)
        rest &= loss0 <= bound
        sel = np.flatnonzero(rest)
        step = pairs[5, sel] * (pairs[1, sel] - 1) ** 2 - pairs[4, sel] * (pairs[0, sel] - 1) ** 2  # > 0 (Lemma 5)
        examine(sel, np.minimum(pairs[6, sel], (bound - loss0[sel]) // step))  # eq. 11
    else:
        sel = np.flatnonzero(rest)
        examine(sel, pairs[6, sel])
    if not found:
        return None
    place, loss, b1, b2, a1, a2 = (np.concatenate(c) for c in zip(*found))
    j = int(np.lexsort((place, loss))[0])  # least loss, then first in Algorithm 1's order
    return TwoSize(int(a1[j]), int(b1[j]), int(a2[j]), int(b2[j]), int(loss[j]))


def _first_valid_all(o: np.ndarray, cap: np.ndarray, pairs: np.ndarray, kmax: np.ndarray):
    """:func:`_first_valid` of many size pairs at once: ``(which, b1, b2, loss)`` of those with a valid
    position in ``0 .. kmax``, or None.

    ``pairs`` holds rows ``s1, s2, b1_0, b2_0, d1, d2, k`` (:func:`_gamma_all`).
    """
    s1, s2, b1_0, b2_0, d1, d2, _ = pairs
    c1, c2 = cap[s1], cap[s2]  # (P, m)

    def fc1(i: np.ndarray) -> np.ndarray:  # eq. 12 at position i of each pair
        b1 = b1_0 - i * d1
        return np.minimum(c1 * b1[:, None], o).sum(axis=1) >= s1 * b1

    # H(FC(S1)) is a suffix (Lemma 7): its first position, one binary search step for every pair at a time
    lo, hi = np.zeros_like(kmax), kmax + 1
    while True:
        run = lo < hi
        if not run.any():
            break
        mid = (lo + hi) // 2
        holds = fc1(np.where(run, mid, 0))
        hi = np.where(run & holds, mid, hi)
        lo = np.where(run & ~holds, mid + 1, lo)
    which = np.flatnonzero(lo <= kmax)
    # H(FC(S2)) is a prefix; it must contain start
    which = which[fc2_at(c2[which], o, s2[which], b2_0[which] + lo[which] * d2[which])]
    if not len(which):
        return None
    # only the pairs still alive from here on: PC gaps (Lemma 8), as _first_valid computes them
    start, kmax = lo[which], kmax[which]
    s1, s2, b1_0, b2_0, d1, d2 = (a[which] for a in (s1, s2, b1_0, b2_0, d1, d2))
    c1, c2 = c1[which], c2[which]
    kk = kmax[:, None]
    b1c, b2c, d1c, d2c = b1_0[:, None], b2_0[:, None], d1[:, None], d2[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(c1 > 0, np.floor_divide(c1 * b1c - o, np.maximum(c1 * d1c, 1)), -1)
        q = np.where(c2 > 0, -np.floor_divide(-(o - c2 * b2c), np.maximum(c2 * d2c, 1)), kk + 1)
    p = np.clip(p, -1, kk)
    q = np.clip(q, 0, kk + 1)
    base = c1 * b1c + c2 * b2c - o
    slope = c2 * d2c - c1 * d1c
    big = kk + 1
    pos, neg = slope > 0, slope < 0
    safe = np.where(slope == 0, 1, slope)
    zero_fail = base < 0
    fail_lo = np.where(pos, 0, np.where(neg, np.floor_divide(base, -safe) + 1, np.where(zero_fail, 0, big)))
    fail_hi = np.where(pos, -np.floor_divide(base, safe) - 1, np.where(neg, big, np.where(zero_fail, big, -1)))
    gap_lo = np.maximum(p + 1, fail_lo)
    gap_hi = np.minimum(q - 1, fail_hi)  # <= kmax
    gap_lo[gap_lo > gap_hi] = np.iinfo(np.int64).max  # an empty gap covers no position
    # the first position from start on that no gap covers: the gaps in order of their first position
    order = np.argsort(gap_lo, axis=1, kind="stable")
    gap_lo = np.take_along_axis(gap_lo, order, axis=1)
    gap_hi = np.take_along_axis(gap_hi, order, axis=1)
    i = start
    for a, b in zip(gap_lo.T, gap_hi.T):
        i = np.where((a <= i) & (b >= i), b + 1, i)
    ok = i <= kmax
    ok[ok] = fc2_at(c2[ok], o, s2[ok], b2_0[ok] + i[ok] * d2[ok])  # FC(S2) holds on a prefix: valid iff there
    if not ok.any():
        return None
    i, s1, s2, b1_0, b2_0, d1, d2, which = (a[ok] for a in (i, s1, s2, b1_0, b2_0, d1, d2, which))
    b1 = b1_0 - i * d1
    b2 = b2_0 + i * d2
    return which, b1, b2, b1 * (s1 - 1) ** 2 + b2 * (s2 - 1) ** 2


def fc2_at(c2: np.ndarray, o: np.ndarray, s2: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """Eq. 13 (FC of the second size class) of each pair at its ``b2``."""
    return np.minimum(c2 * b2[:, None], o).sum(axis=1) >= s2 * b2


def two_size_scan(counts: np.ndarray, fp: np.ndarray, max_size: int = 50) -> TwoSize | None:
    """The plain scan ("No-pruning", §7.3): every feasible pair of every (S_1, S_2), checked by Theorem 3."""
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    best: TwoSize | None = None
    for s1 in range(max(min_size(counts, fp), 1), max_size):
        for s2 in range(s1 + 1, max_size + 1):
            g = gamma_list(n, s1, s2)
            if g is None:
                continue
            for i in range(g.k + 1):
                b1, b2 = g.pair(i)
                if valid_two(counts, fp, s1, b1, s2, b2):
                    loss = g.loss(i)
                    if best is None or loss < best.loss:
                        best = TwoSize(s1, b1, s2, b2, loss)
                    break  # Lemma 5: later pairs of this (S1, S2) lose more
    return best


# ------------------------------------------------------------------ record partition (§4.3)
def record_partition(counts: np.ndarray, fp: np.ndarray, s1: int, b1: int, s2: int, b2: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts per value of T_1 and T_2 for a valid two-size setting (§4.3).

    T_1 starts with ``a_i1`` records of each value; the surplus ``|T_1| -
    s(B_1)`` moves to T_2 without exceeding ``a_i2``, one record per value
    in rounds (Example 3 moves one of each of x9..x14).
    """
    counts = np.asarray(counts, dtype=np.int64)
    a1 = np.minimum(caps(fp, s1) * b1, counts)
    a2 = np.minimum(caps(fp, s2) * b2, counts)
    t1 = a1.copy()
    need = int(t1.sum()) - s1 * b1
    if need < 0 or np.any(a1 + a2 < counts):
        raise ValueError("record_partition needs a valid setting (Theorem 3)")
    room = a2 - (counts - a1)  # records of x_i T_2 can still take; <= a_i1
    if need:
        # largest level L with sum min(room, L) <= need, then one more to the first values with room > L
        lo, hi = 0, int(room.max())
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if int(np.minimum(room, mid).sum()) <= need:
                lo = mid
            else:
                hi = mid - 1
        move = np.minimum(room, lo)
        extra = need - int(move.sum())
        if extra:
            more = np.flatnonzero(room > lo)[:extra]
            move[more] += 1
        t1 = t1 - move
    return t1, counts - t1


# ------------------------------------------------------------------ Algorithm 2
@dataclass(frozen=True)
class Bucketing:
    """A valid bucket setting and the counts of each value in each size class.

    ``classes`` is a list of ``(S, b, counts)``: ``b`` buckets of size ``S``
    receiving ``counts[i]`` records of value i (RRA makes them valid).
    """

    classes: tuple[tuple[int, int, np.ndarray], ...]
    method: str
    seconds: float = 0.0
    notes: tuple[str, ...] = field(default=())

    @property
    def setting(self) -> list[tuple[int, int]]:
        """``[(S_j, b_j)]`` with equal sizes merged, by size."""
        out: dict[int, int] = {}
        for s, b, _ in self.classes:
            out[s] = out.get(s, 0) + b
        return sorted((s, b) for s, b in out.items() if b > 0)

    @property
    def loss(self) -> int:
        return loss_of(self.setting)

    def mse(self, n: int) -> float:
        """Definition 3: ``Loss / (|T| - 1)``."""
        return self.loss / (n - 1) if n > 1 else 0.0


def multi_size(counts: np.ndarray, fp: np.ndarray, max_size: int = 50, search=None) -> Bucketing:
    """Algorithm 2 (MultiSizeBucketting): recurse TwoSizeBucketting while the loss drops.

    ``search`` finds each two-size split: :func:`two_size_fast` by default,
    or :func:`two_size` (Algorithm 1 pair by pair); both give the same
    setting.
    """
    t0 = time.perf_counter()
    two_size = search or two_size_fast
    counts = np.asarray(counts, dtype=np.int64)
    n = int(counts.sum())
    top = two_size(counts, fp, max_size)
    if top is None:
        raise _no_setting(max_size, counts, fp)
    leaves: list[tuple[int, int, np.ndarray]] = []

    def recurse(c: np.ndarray, size: int, buckets: int, split: TwoSize | None) -> None:
        if split is None or split.loss >= buckets * (size - 1) ** 2:
            leaves.append((size, buckets, c))
            return
        t1, t2 = record_partition(c, fp, split.s1, split.b1, split.s2, split.b2)
        for part, s, b in ((t1, split.s1, split.b1), (t2, split.s2, split.b2)):
            if b > 0:
                recurse(part, s, b, two_size(part, fp, max_size))

    recurse(counts, n, 1, top)  # the whole table as one bucket to start (valid by Lemma 1)
    return Bucketing(tuple(leaves), "multi", time.perf_counter() - t0)


def two_size_bucketing(counts: np.ndarray, fp: np.ndarray, max_size: int = 50, search=None) -> Bucketing:
    """Algorithm 1's optimal two-size setting with the record partition of §4.3 (``search``: as :func:`multi_size`)."""
    t0 = time.perf_counter()
    counts = np.asarray(counts, dtype=np.int64)
    best = (search or two_size_fast)(counts, fp, max_size)
    if best is None:
        raise _no_setting(max_size, counts, fp)
    t1, t2 = record_partition(counts, fp, best.s1, best.b1, best.s2, best.b2)
    classes = tuple((s, b, c) for s, b, c in ((best.s1, best.b1, t1), (best.s2, best.b2, t2)) if b > 0)
    return Bucketing(classes, "two", time.perf_counter() - t0)


def _no_setting(max_size: int, counts: np.ndarray | None = None, fp: np.ndarray | None = None) -> NotEligible:
    need = 0
    if counts is not None and fp is not None:
        live = np.asarray(counts) > 0
        need = int(np.ceil(1.0 / np.asarray(fp, float)[live] - EPS).max())
    if need > max_size:
        return NotEligible(
            f"No valid bucket setting has buckets of at most M′ = {max_size} records: the value with the smallest "
            f"threshold f′ needs buckets of at least ⌈1/f′⌉ = {need} records; raise M′ (max_bucket) to {need} "
            f"or more, or θ.", suggestion={"max_bucket": need})
    return NotEligible(
        f"No valid bucket setting has buckets of at most M′ = {max_size} records for these thresholds; "
        f"raise M′ (max_bucket) or θ.", suggestion={"max_bucket": min(500, max_size * 2)})


def optimal_size(m: int, smallest: int, max_size: int) -> int:
    """Cells (values x sizes) of the integer program: what :func:`optimal` refuses above."""
    return m * max(0, max_size - smallest + 1)


def optimal(counts: np.ndarray, fp: np.ndarray, max_size: int = 50,
            time_limit: float = OPTIMAL_TIME_LIMIT, max_cells: int = OPTIMAL_MAX_CELLS) -> Bucketing:
    """The optimal multi-size setting (Definition 4) by an integer program (seed 003 §7.2 "Optimal").

    Integers ``b_S`` (buckets of size S) and ``n_iS`` (records of x_i in
    size-S buckets): ``n_iS <= floor(f'_i S) b_S`` (Lemma 2 per size class),
    ``sum_i n_iS = S b_S``, ``sum_S n_iS = o_i``; minimise
    ``sum_S b_S (S - 1)^2``.  Refused (NotEligible) when the program has
    more than ``max_cells`` value-size cells or does not finish in
    ``time_limit`` seconds: the paper notes it is feasible only for small
    domains.
    """
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint, milp

    t0 = time.perf_counter()
    counts = np.asarray(counts, dtype=np.int64)
    live = np.flatnonzero(counts > 0)
    o = counts[live]
    f = np.asarray(fp, float)[live]
    lo = min_size(counts, fp)
    sizes = np.arange(lo, max_size + 1)
    m, k = len(live), len(sizes)
    if m * k > max_cells:
        raise NotEligible(
            f"The optimal (integer program) setting is offered for small problems only: {m} values x {k} bucket "
            f"sizes = {m * k:,} cells, above {max_cells:,}; use sizes=multi, or lower M' (max_bucket).",
            suggestion={"sizes": "multi"})
    cap = caps(f, sizes)  # (m, k)
    nvar = k + m * k  # b_S, then n_iS (row-major by value)

    def nidx(i, j):
        return k + i * k + j

    rows, cols, vals, lb, ub = [], [], [], [], []
    r = 0
    for i in range(m):  # n_iS - cap_iS b_S <= 0
        for j in range(k):
            rows += [r, r]
            cols += [nidx(i, j), j]
            vals += [1.0, -float(cap[i, j])]
            lb.append(-np.inf)
            ub.append(0.0)
            r += 1
    for j in range(k):  # sum_i n_iS - S b_S = 0
        rows += [r] * (m + 1)
        cols += [nidx(i, j) for i in range(m)] + [j]
        vals += [1.0] * m + [-float(sizes[j])]
        lb.append(0.0)
        ub.append(0.0)
        r += 1
    for i in range(m):  # sum_S n_iS = o_i
        rows += [r] * k
        cols += [nidx(i, j) for j in range(k)]
        vals += [1.0] * k
        lb.append(float(o[i]))
        ub.append(float(o[i]))
        r += 1
    a = sparse.csr_array((vals, (rows, cols)), shape=(r, nvar))
    cost = np.zeros(nvar)
    cost[:k] = (sizes - 1.0) ** 2
    upper = np.concatenate([counts.sum() // sizes, np.repeat(o, k)]).astype(float)
    res = milp(cost, constraints=LinearConstraint(a, lb, ub), integrality=np.ones(nvar),
               bounds=Bounds(0, upper), options={"time_limit": time_limit})
    if res.status != 0 or res.x is None:
        if res.status == 1:
            raise NotEligible(
                f"The optimal (integer program) setting did not finish within {time_limit:g} s on {m} values x "
                f"{k} sizes; use sizes=multi.", suggestion={"sizes": "multi"})
        raise _no_setting(max_size, counts, fp)
    x = np.round(res.x).astype(np.int64)
    b = x[:k]
    n_is = x[k:].reshape(m, k)
    classes = []
    for j in np.flatnonzero(b > 0):
        c = np.zeros(len(counts), dtype=np.int64)
        c[live] = n_is[:, j]
        classes.append((int(sizes[j]), int(b[j]), c))
    return Bucketing(tuple(classes), "optimal", time.perf_counter() - t0)


def bucketize(counts: np.ndarray, fp: np.ndarray, max_size: int = 50, method: str = "multi") -> Bucketing:
    """The setting by ``method``: ``two`` (Algorithm 1), ``multi`` (Algorithm 2) or ``optimal`` (MILP)."""
    if method == "two":
        return two_size_bucketing(counts, fp, max_size)
    if method == "multi":
        return multi_size(counts, fp, max_size)
    if method == "optimal":
        return optimal(counts, fp, max_size)
    raise ValueError(method)


# ------------------------------------------------------------------ record assignment
def assign(sa_codes: np.ndarray, plan: Bucketing, rng: np.random.Generator) -> np.ndarray:
    """Bucket of every record: deal each value's records to the size classes, then RRA in each class.

    Records of a value go to classes in a random (seeded) order, so a
    record's bucket says nothing about its QI values.  Inside a class with
    ``b`` buckets, records sorted by value take positions 0, 1, ...; the
    record at position ``p`` goes to bucket ``p mod b`` (RRA, §4.1), so each
    bucket gets exactly S records and each value ``floor`` or ``ceil(n/b)``.
    Bucket ids are numbered class by class (smaller sizes first).
    """
    sa_codes = np.asarray(sa_codes, dtype=np.int64)
    n = len(sa_codes)
    m = int(max(sa_codes.max(initial=-1) + 1, len(plan.classes[0][2]) if plan.classes else 0))
    classes = sorted(plan.classes, key=lambda c: c[0])
    k = len(classes)
    per = np.stack([np.asarray(c[2], dtype=np.int64) for c in classes])  # (k, m)
    # records sorted by value, random order inside a value
    by_value = np.lexsort((rng.random(n), sa_codes))
    cls = np.empty(n, dtype=np.int64)
    cls[by_value] = np.repeat(np.tile(np.arange(k), m), per.T.ravel())
    # position inside the class, records of the class in value order
    order = np.lexsort((sa_codes, cls))
    sizes = per.sum(axis=1)
    start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n) - np.repeat(start, sizes)
    nb = np.array([c[1] for c in classes], dtype=np.int64)
    offset = np.concatenate(([0], np.cumsum(nb)[:-1]))
    return offset[cls] + pos % nb[cls]


def bucket_table(bucket: np.ndarray, sa_codes: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes (G,), counts (G, m))`` of an assignment: |g| and |g, x_i|."""
    g = int(bucket.max()) + 1 if len(bucket) else 0
    counts = np.bincount(np.asarray(bucket, np.int64) * m + sa_codes, minlength=g * m).reshape(g, m)
    return counts.sum(axis=1), counts


def max_distinct(plan: Bucketing) -> int:
    """Most distinct values any bucket of :func:`assign` holds (RRA is deterministic in the counts).

    In a class of b buckets, value x occupies ``n_x`` consecutive positions
    modulo b, so it appears in ``min(n_x, b)`` consecutive buckets.
    """
    most = 0
    for _, b, c in plan.classes:
        c = np.asarray(c, dtype=np.int64)
        start = np.concatenate(([0], np.cumsum(c)[:-1])) % b
        diff = np.zeros(b + 1, dtype=np.int64)
        for s0, n in zip(start.tolist(), c.tolist()):
            if n == 0:
                continue
            if n >= b:
                diff[0] += 1
                diff[b] -= 1
            elif s0 + n <= b:
                diff[s0] += 1
                diff[s0 + n] -= 1
            else:
                diff[s0] += 1
                diff[b] -= 1
                diff[0] += 1
                diff[s0 + n - b] -= 1
        most = max(most, int(np.cumsum(diff)[:b].max()))
    return most


# ------------------------------------------------------------------ record assignment from counts
def classes_by_size(plan: Bucketing) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(per (k, m), buckets (k,), sizes (k,))`` of the plan's classes, smaller sizes first (as :func:`assign`)."""
    classes = sorted(plan.classes, key=lambda c: c[0])
    per = np.stack([np.asarray(c[2], dtype=np.int64) for c in classes])
    nb = np.array([c[1] for c in classes], dtype=np.int64)
    size = np.array([c[0] for c in classes], dtype=np.int64)
    return per, nb, size


def assign_ranked(plan: Bucketing, seed: int, sa: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Bucket of each record from its SA code and its rank among its value's records (issue 15's protocol).

    The same dealing as :func:`assign`, decided per record: a keyed random
    permutation of each value's ranks (:func:`core.shuffle.permute`,
    purpose ``"bucket/deal"``, one permutation per value) deals the value's
    records to the size classes in the plan's numbers
    (:func:`core.shuffle.deal`); inside a class, value ``x``'s records take
    the class positions ``start(x) ..`` (values in code order, as RRA sorts
    them) in their permuted order, and position ``p`` goes to bucket
    ``p mod b``.  Bucket ids are numbered class by class, smaller sizes
    first.  Which buckets hold how many records of each value is fixed by
    the counts (:func:`bucket_counts`); only which records fill them is
    drawn.
    """
    per, _, _ = classes_by_size(plan)
    sa = np.asarray(sa, dtype=np.int64)
    return assign_dealt(plan, sa, deal_positions(seed, sa, rank, per.sum(axis=0)))


def deal_positions(seed: int, sa: np.ndarray, rank: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each record's place in its value's dealing order: ``pi_x(rank)`` (purpose ``"bucket/deal"``).

    ``total[x]`` is the number of records of value x (all of them are
    dealt).  It depends on the seed and the SA values only, not on the
    bucket setting, so the app keeps it between moves of theta
    (:mod:`core.engine.memo`).
    """
    from .. import shuffle

    sa = np.asarray(sa, dtype=np.int64)
    return shuffle.permute(seed, "bucket/deal", sa, rank, np.asarray(total, dtype=np.int64)[sa])


def deal_slots(seed: int, sa: np.ndarray, rank: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Each record's slot in the table dealt value by value: ``first(x) + pi_x(rank)`` (``first(x)``: the
    records of the values before x).

    A permutation of ``0 .. n - 1`` (every record is dealt: ``total`` is
    each value's count); like :func:`deal_positions` it does not depend on
    the bucket setting, and :func:`slot_buckets` gives every slot's bucket
    for a setting.
    """
    total = np.asarray(total, dtype=np.int64)
    slot = deal_positions(seed, sa, rank, total)
    slot += (np.cumsum(total) - total)[np.asarray(sa, dtype=np.int64)]
    return slot


def slot_buckets(plan: Bucketing, ids: np.ndarray | None = None) -> np.ndarray:
    """The bucket of every slot of :func:`deal_slots` (published as ``ids[bucket]`` when ``ids`` is given).

    :func:`assign_dealt` for all records at once, by slot.  In slot order
    the records of value x come in their dealing order, so each (value,
    size class) is one run of slots: the class's positions ``start(x) ..``
    in that order, bucket ``p mod b``.  Each run is read off the class's
    ids with wrap-around (:func:`numpy.take`), so the only census-sized
    array is the result (census 5M: 319 runs).  Needs a plan that deals
    every record of every value.
    """
    per, nb, _ = classes_by_size(plan)
    start = np.cumsum(per, axis=1) - per  # (k, m): first class position of each value
    offset = np.cumsum(nb) - nb
    ids = np.arange(int(nb.sum()), dtype=np.int64) if ids is None else np.asarray(ids)
    out = np.empty(int(per.sum()), dtype=ids.dtype)
    at = 0
    for x, j in zip(*np.nonzero(per.T)):  # runs by value, then class (the dealing order)
        run, first = int(per[j, x]), int(start[j, x])
        np.take(ids[offset[j]:offset[j] + nb[j]], np.arange(first, first + run), out=out[at:at + run], mode="wrap")
        at += run
    return out


def assign_dealt(plan: Bucketing, sa: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """:func:`assign_ranked` given each record's :func:`deal_positions`: its size class, then its bucket by RRA."""
    from .. import shuffle

    per, nb, _ = classes_by_size(plan)
    k, m = per.shape
    sa = np.asarray(sa, dtype=np.int64)
    pos = np.asarray(pos, dtype=np.int64)
    cls = shuffle.deal(per, sa, pos)
    before = np.cumsum(per, axis=0) - per  # (k, m): the value's records dealt to earlier classes
    start = np.cumsum(per, axis=1) - per  # (k, m): first class position of each value
    cell = cls * m
    cell += sa
    inside = (start - before).ravel()[cell]
    del cell
    inside += pos
    offset = np.cumsum(nb) - nb
    inside %= nb[cls]
    inside += offset[cls]
    return inside


def bucket_counts(plan: Bucketing) -> tuple[np.ndarray, np.ndarray]:
    """``(sizes (G,), counts (G, m))`` of the buckets :func:`assign_ranked` fills, from the plan alone.

    In a class of ``b`` buckets value x holds positions ``s .. s + c - 1``;
    bucket j gets the positions ``p = j (mod b)`` among them:
    ``F(s + c, j) - F(s, j)`` with ``F(t, j) = ceil((t - j) / b)`` for
    ``t >= 0, j < b`` (the number of such p below t).
    """
    per, nb, _ = classes_by_size(plan)
    blocks = []
    for c, b in zip(per, nb.tolist()):
        s = np.cumsum(c) - c
        j = np.arange(b, dtype=np.int64)[:, None]
        blocks.append((s + c - j + b - 1) // b - (s - j + b - 1) // b)
    counts = np.concatenate(blocks) if blocks else np.zeros((0, per.shape[1]), dtype=np.int64)
    return counts.sum(axis=1), counts


def bucket_entries(plan: Bucketing) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The nonzero cells of :func:`bucket_counts` without the dense (buckets x values) table.

    Returns ``(bucket, value, count, sizes)``: one entry per (bucket, value)
    present, by bucket then value, and every bucket's size (RRA fills each
    bucket of a class of size S with exactly S records).  The cells of
    :func:`published_cells` before the buckets are renumbered.
    """
    per, nb, size = classes_by_size(plan)
    gs, xs, cs = [], [], []
    offset = 0
    for c, b, s in zip(per, nb.tolist(), size.tolist()):
        idx, x, _ = _class_cells(_class_positions(c, b, s))
        cs.append(np.diff(idx, append=b * s))
        gs.append(idx // s + offset)
        xs.append(x.astype(np.int64))
        offset += b
    cat = (lambda parts: np.concatenate(parts)) if gs else (lambda parts: np.zeros(0, np.int64))
    return cat(gs), cat(xs), cat(cs), np.repeat(size, nb)


def _class_positions(c: np.ndarray, b: int, s: int) -> np.ndarray:
    """One class's positions as an ``(s, b)`` array of values: value x (``c[x]`` records) fills its run of
    positions in code order, and bucket j holds the positions ``j, j + b, ...`` (RRA), i.e. column j."""
    m = len(c)
    codes = np.repeat(np.arange(m, dtype=np.uint8 if m <= 256 else np.int64), c)
    if len(codes) != b * s:
        raise ValueError(f"a class of {b} buckets of size {s} holds {len(codes)} records")
    return codes.reshape(s, b)


def _class_cells(positions: np.ndarray, first: int = 0, last: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The cells of buckets ``first .. last - 1`` of a class (its :func:`_class_positions`).

    Column j lists bucket j's values in order, so its cells are the runs of
    that column.  Returns each cell's first place in the columns laid end
    to end (``place // s`` is the bucket counted from ``first``, the next
    cell's place minus this one the count) and its value, in (bucket,
    value) order with no sort, and the number of cells of each bucket.
    """
    s = positions.shape[0]
    column = positions[:, first:last].T.ravel()  # bucket by bucket, each bucket's values in order
    new = np.empty(len(column), dtype=bool)
    if len(column):
        new[0] = True
        np.not_equal(column[1:], column[:-1], out=new[1:])
        new[::s] = True  # every bucket starts a run
    place = np.flatnonzero(new)
    upto = np.cumsum(new, dtype=np.int64)[s - 1::s]  # cells up to the end of each bucket
    return place, column[place], np.diff(upto, prepend=0)


#: records of a class turned into cells at a time by :func:`published_cells` (its temporaries stay a few MB)
CELL_RECORDS = 1 << 20


def published_cells(plan: Bucketing, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ST's cells ``(bucket id, value, count)`` sorted by (id, value), bucket ``g`` published as ``ids[g]``.

    The cells of :func:`bucket_entries` come bucket by bucket, each
    bucket's in value order (no sort); when ``ids`` is a permutation of
    ``0 .. len(ids) - 1`` (:func:`core.shuffle.relabel`'s) the buckets are
    then put in the order of their ids by moving each bucket's run of cells
    as a block (the inverse permutation, a scatter: no sort), the counts
    moved as bytes (a cell counts at most its bucket's records).  Census 5M
    at a bucket size of 51 (4.7M cells, 1.4M buckets): 0.13 s, where
    packing the cells with their ids and sorting them took 0.35 s (0.31 s
    of it the sort).  Other ids go through :func:`sort_cells`.
    Values come back in the SA codes' narrow type
    (:func:`core.table.code_dtype`), ids and counts narrow (:func:`cell_types`).
    """
    from ..table import code_dtype

    per, nb, size = classes_by_size(plan)
    k, m = per.shape
    ids = np.asarray(ids, dtype=np.int64)
    n_buckets = len(ids)
    if int(nb.sum()) != n_buckets:
        raise ValueError(f"{n_buckets} ids for {int(nb.sum())} buckets")
    n_cells = int(np.minimum(per, nb[:, None]).sum())  # x with c records in b buckets is in min(b, c) of them
    value = np.empty(n_cells, dtype=code_dtype(m))
    count = np.empty(n_cells, dtype=code_dtype(int(size.max(initial=1))))  # a cell counts at most its bucket's records
    runs = np.empty(n_buckets, dtype=np.int64)  # cells per bucket, in bucket order
    at = offset = 0
    for c, b, s in zip(per, nb.tolist(), size.tolist()):
        positions = _class_positions(c, b, s)
        step = max(1, CELL_RECORDS // s)  # buckets at a time
        for first in range(0, b, step):
            place, x, cells_per = _class_cells(positions, first, first + step)
            hi = at + len(place)
            value[at:hi] = x
            cells = count[at:hi]
            np.subtract(place[1:], place[:-1], out=cells[:-1], casting="unsafe")  # each cell's count (<= s)
            cells[-1:] = len(cells_per) * s - place[-1:]
            runs[offset + first:offset + first + len(cells_per)] = cells_per
            at = hi
        offset += b
        del positions
    if at != n_cells:
        raise ValueError(f"{at} cells built where the counts give {n_cells}")
    if n_buckets and (ids.min() < 0 or ids.max() >= n_buckets
                      or np.bincount(ids, minlength=n_buckets).max(initial=0) > 1):
        bucket = np.repeat(np.arange(n_buckets, dtype=np.int64), runs)
        return sort_cells(ids[bucket], value, count, n_buckets, m)  # not a permutation: sort the cells
    by_id = np.empty(n_buckets, dtype=np.int64)
    by_id[ids] = np.arange(n_buckets, dtype=np.int64)  # the bucket published as id j
    starts = np.cumsum(runs) - runs
    runs = runs[by_id]
    # cell i of the output is cell (start of its bucket + its place in the bucket's run)
    take = np.repeat(starts[by_id] - (np.cumsum(runs) - runs), runs)
    take += np.arange(n_cells, dtype=np.int64)
    # the gathers read the narrow columns (counts in a byte or two: 5 ms where int64 took 45 ms on census 5M)
    id_type, count_type = cell_types(n_buckets - 1, count)
    return np.repeat(np.arange(n_buckets, dtype=id_type), runs), value[take], count[take].astype(count_type)


def cell_types(top_id: int, count: np.ndarray) -> tuple[type, np.dtype]:
    """The ST's column types: bucket ids in int32 when the largest, ``top_id``, is below 2**31 (as Anatomy's
    group ids), counts in the narrowest unsigned type that holds the largest (:func:`core.table.code_dtype`;
    a byte on census).

    Issue 27: the bucketization release of census 5M held 116 MB of int64 ids and counts, 4.7M cells each, and
    one session on the table was 44 MB over its 700 MB.  CSV files are the same bytes; Parquet files type
    the columns as these types (Anatomy's ST did already).
    """
    from ..table import code_dtype

    return (np.int32 if top_id < 2**31 else np.int64), code_dtype(int(np.max(count, initial=0)))


def sort_cells(g: np.ndarray, x: np.ndarray, c: np.ndarray, n_buckets: int, m: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells ``(bucket, value, count)`` sorted by (bucket, value) (the pairs are distinct); values in the SA
    codes' narrow type (:func:`core.table.code_dtype`), buckets and counts narrow (:func:`cell_types`).

    Each cell is packed into one int64 (bucket, value and count bits) and
    the packed numbers sorted, which orders them as the pairs do and needs
    no gather of three columns by an argsort; the same order as
    ``argsort(g * m + x)``, which it falls back to when the bits do not fit
    63.  For cells that come unordered (an ST with fakes, or ids that are
    not a permutation in :func:`published_cells`).
    """
    from ..table import code_dtype

    g, x, c = (np.asarray(a, dtype=np.int64) for a in (g, x, c))
    cbits = max(1, int(c.max(initial=0)).bit_length())
    xbits = max(1, int(m - 1).bit_length())
    gbits = max(1, int(max(n_buckets - 1, 0)).bit_length())
    id_type, count_type = cell_types(int(g.max(initial=0)), c)
    if len(c) and int(c.min()) < 0 or gbits + xbits + cbits > 63:
        order = np.argsort(g * m + x)
        return g[order].astype(id_type), x[order].astype(code_dtype(m)), c[order].astype(count_type)
    packed = g << np.int64(xbits + cbits)
    packed |= x << np.int64(cbits)
    packed |= c
    packed.sort()
    g, x, c = _unpack(packed, xbits, cbits, m)
    return g.astype(id_type), x, c.astype(count_type)


def _unpack(packed: np.ndarray, xbits: int, cbits: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(bucket, value, count)`` of cells packed as ``bucket << (xbits + cbits) | value << cbits | count``
    (``packed`` becomes the bucket column, in place)."""
    from ..table import code_dtype

    count = packed & np.int64((1 << cbits) - 1)
    packed >>= np.int64(cbits)
    value = np.empty(len(packed), dtype=code_dtype(m))
    np.bitwise_and(packed, np.int64((1 << xbits) - 1), out=value, casting="unsafe")
    packed >>= np.int64(xbits)
    return packed, value, count
