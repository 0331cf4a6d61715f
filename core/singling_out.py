"""Singling out: a predicate on the published QIs that isolates exactly one person (issue 22 §1).

The attack of anonymeter's ``SinglingOutEvaluator`` (Giomi et al., "A
Unified Framework for Quantifying Privacy Risk in Synthetic Data", PETS
2023; anonymeter 1.1.0, ``evaluators/singling_out_evaluator.py``),
re-implemented on the workbench's code arrays, against the same split as
the attribute-inference attackers of :func:`core.risk.assess`:

1. **Predicates from the release.**  The attacker reads the measurement
   release's per-person table (:attr:`core.mechanisms.base.Mechanism.record_table`:
   the published rows with the QIs they publish) and builds ``attacks``
   distinct predicates that each match exactly one published row, seeded:

   * *multivariate* (the default, anonymeter's too): a published row and
     ``n_cols`` of its QIs (3, or every QI of a table with fewer); a
     categorical QI gives ``QI == its value``, a numeric one ``QI >= value``
     if the value is above the column's median in the release, else
     ``QI <= value`` (anonymeter's "query for more extreme values").  Every
     such predicate that matches exactly one published row is found
     (:func:`multivariate`) and ``attacks`` of them drawn at random (all if
     there are fewer).  With more than 10 QIs, the predicates come from a
     seeded sample of :data:`MAX_COLUMN_SETS` sets of columns (anonymeter
     draws the columns afresh for every predicate; counting every set of a
     wide table would take too long).
   * *univariate*: ``QI == v`` for a value held by exactly one published row,
     and ``QI <= min`` / ``QI >= max`` of a numeric QI, in a seeded order,
     the first ``attacks`` that single out a published row.

2. **Scored on people.**  A predicate succeeds on the training part (the
   people whose records made the release) if exactly one of them satisfies
   it, and likewise on the control part (people not in the table).  Success
   rates are out of the ``attacks`` asked for (anonymeter: a predicate the
   release did not yield counts as a failure).  The control part is a
   quarter the training part's size, and the chance that a predicate matches
   exactly one person depends on how many people there are, so the control
   count is corrected as anonymeter does: the count is measured on seeded
   subsamples of the control part (10 sizes from 1,000 to the whole, 5
   each), the model ``norm * integral_0^w P(w', n) dw'`` with
   ``P(w, n) = n w (1 - w)^(n-1)`` (Cohen and Nissim 2020) fitted, and the
   count scaled by ``model(training size) / model(control size)``.
3. **Risk** = (training success - control success) / (1 - control success),
   with anonymeter's 95% interval (:func:`core.rates.residual`).  The baseline
   (not in the risk): as many random predicates (random QIs, values and
   operators, ``==``/``!=`` on categories and any comparison on numbers)
   scored on the training part.

Where anonymeter differs, on purpose:

* anonymeter drops duplicate rows from every frame before counting
  (``.unique()``); here a predicate singles out when it matches exactly one
  *person*.  Two people with the same QI values are not isolated by any
  predicate on the QIs (k-anonymity's point); on Adult's seven QIs,
  duplicates are common, and de-duplicated counts would call a group of
  identical people "one".  The reference test runs anonymeter with its
  frames as given (``bench/risk.py --singling-out``).
* a published label that is not one of the table's (Mondrian's ``[17, 24]``)
  is matched by text, as anonymeter's string comparison does: it matches no
  person.  No predicate from such a release singles a row out anyway when
  k >= 2 (each generalized group holds at least k rows, and a predicate on
  the QIs matches whole groups); at k = 1 this undercounts.
* anonymeter draws (row, columns) at random and keeps the new isolating
  predicates until it has ``attacks`` (or 10M draws): the predicates it keeps
  are a uniform random choice among the isolating ones.  Here all of them are
  counted and the choice made directly: the same predicates in distribution,
  in a fixed time, and the number available is known (with more than 10 QIs,
  among a sample of the sets of columns, above).
* the size correction starts at a fifth of a control part of fewer than 5,000
  rows (anonymeter's ten sizes from min(1,000, n) to n would all be equal
  there and the fit degenerate).

Not applicable where the release publishes no row per person (Ambiguity: one
table of distinct values per QI and group; Laplace: answers only).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from .rates import Rate, residual

#: anonymeter's default number of QIs per multivariate predicate
N_COLS = 3
MODES = ("multivariate", "univariate")
DEFAULT_MODE = "multivariate"
#: the most sets of ``n_cols`` QIs the multivariate predicates are drawn from (C(10, 3) = 120: a table of
#: more QIs has its sets sampled, seeded; every set is used on Adult's 7 QIs, C(7, 3) = 35)
MAX_COLUMN_SETS = 120
#: the last element of the seed of the predicates (after the release's seed and the split seed)
SEED_TAG = 0x5106
#: the sentence of a release without a row per person
NOT_APPLICABLE = "not applicable: the release publishes no records"

# comparison operators of a predicate term
EQ, NE, GT, LT, GE, LE = range(6)
_OP_TEXT = ("==", "!=", ">", "<", ">=", "<=")


@dataclass(frozen=True, eq=False)
class Columns:
    """Rows of QI codes in one code space, and how the QIs compare.

    ``values[j]`` is the numeric value of each code of QI ``j`` (None: the QI
    compares only by equality).  Codes index the table's labels; a published
    label that is not one of them gets a code past them (it matches no person).
    """

    names: tuple[str, ...]
    values: tuple[np.ndarray | None, ...]
    sizes: tuple[int, ...]  # codes of each QI (the table's labels and the release's own)


@dataclass(frozen=True, eq=False)
class Predicates:
    """``Q`` conjunctions of ``c`` terms: term ``(cols[q, i], ops[q, i], codes[q, i])``, columns ascending."""

    cols: np.ndarray  # (Q, c) int
    ops: np.ndarray  # (Q, c) int
    codes: np.ndarray  # (Q, c) int

    def __len__(self) -> int:
        return len(self.cols)

    def take(self, idx) -> "Predicates":
        return Predicates(self.cols[idx], self.ops[idx], self.codes[idx])

    def text(self, q: int, space: Columns, labels: Sequence[np.ndarray]) -> str:
        """Predicate ``q`` as anonymeter would write it: ``age >= 71 & sex == 'Female'``."""
        out = []
        for j, op, code in zip(self.cols[q], self.ops[q], self.codes[q]):
            lab = labels[j][code] if code < len(labels[j]) else "(a published label)"
            lab = lab.item() if isinstance(lab, np.generic) else lab
            out.append(f"{space.names[j]} {_OP_TEXT[op]} {lab!r}")
        return " & ".join(out)


def _compare(op: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == EQ:
        return a == b
    if op == NE:
        return a != b
    if op == GT:
        return a > b
    if op == LT:
        return a < b
    if op == GE:
        return a >= b
    return a <= b


def _row_key(rows: np.ndarray, cols, space: Columns) -> np.ndarray:
    """One integer per row that is equal exactly when the rows agree on ``cols``."""
    cols = list(cols)
    if _span(cols, space) < 2.0 ** 62:
        key = np.zeros(len(rows), np.int64)
        for j in cols:
            key = key * (space.sizes[j] + 1) + rows[:, j]
        return key
    return np.unique(rows[:, cols], axis=0, return_inverse=True)[1].ravel().astype(np.int64)


def _span(cols, space: Columns) -> float:
    return float(np.prod([float(space.sizes[j]) + 1 for j in cols]))


#: a key space this small is counted with bincount rather than sorted ...
_DENSE = 1 << 22


def _dense(cells: float, rows: int) -> bool:
    """... and only when it is not much larger than the rows counted (:data:`core.counting.DENSE_PER_ROW` cells a
    row, or :data:`core.counting.DENSE_FLOOR`), the rule of :mod:`core.counting`: zeroing, cumulating and scanning 4M
    cells for 840 rows (a survey table with three numeric QIs) cost 2-3 ms a call, 0.7 s of one risk measurement,
    where sorting the rows' keys costs microseconds.  Either way the same groups, in the same order."""
    from .counting import DENSE_FLOOR, DENSE_PER_ROW

    return cells <= _DENSE and cells <= max(DENSE_PER_ROW * rows, DENSE_FLOOR)


def _groups(rows: np.ndarray, cols, space: Columns) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(inverse, size, proj)``: each row's group of equal values on ``cols``, each group's size and values."""
    cols = list(cols)
    key = _row_key(rows, cols, space)
    if _dense(_span(cols, space), len(rows)):
        bc = np.bincount(key, minlength=1)
        present = np.flatnonzero(bc)
        lookup = np.cumsum(bc > 0) - 1
        inverse, size = lookup[key], bc[present]
        proj = np.zeros((len(present), len(cols)), np.int64)
        rest = present.copy()
        for i in range(len(cols) - 1, -1, -1):
            rest, proj[:, i] = np.divmod(rest, space.sizes[cols[i]] + 1)
        return inverse, size, proj
    _, first, inverse, size = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return inverse.ravel(), size, rows[first][:, cols]


def count(rows: np.ndarray, preds: Predicates, space: Columns, pairs: bool = False):
    """How many rows satisfy each predicate (and, with ``pairs``, which: ``(predicate, row)`` index arrays).

    Per set of columns, the rows' distinct projections on them are counted
    once and each predicate tested against those (not against every row).
    """
    n_q = len(preds)
    out = np.zeros(n_q, np.int64)
    pq, pr = [], []
    if n_q == 0:
        return (out, (np.zeros(0, np.int64), np.zeros(0, np.int64))) if pairs else out
    sets, set_of = np.unique(preds.cols, axis=0, return_inverse=True)
    set_of = set_of.ravel()
    for s, cols in enumerate(sets):
        sel = np.flatnonzero(set_of == s)
        inverse, size, proj = _groups(rows, cols, space)  # proj: (D, c) codes of each distinct projection
        if pairs:
            order = np.argsort(inverse, kind="stable")
            starts = np.concatenate([[0], np.cumsum(size)])
        for c0 in range(0, len(sel), 512):
            chunk = sel[c0:c0 + 512]
            mask = np.ones((len(chunk), len(size)), bool)
            for i, j in enumerate(cols):
                vals = space.values[j]
                a = proj[:, i][None, :]
                b = preds.codes[chunk, i][:, None]
                if vals is not None:
                    a, b = vals[a], vals[b]
                ops = preds.ops[chunk, i]
                for op in np.unique(ops):
                    rows_op = ops == op
                    mask[rows_op] &= _compare(int(op), a, b[rows_op])
            out[chunk] = mask.astype(np.int64) @ size
            if pairs:
                qi, di = np.nonzero(mask)
                lens = size[di]
                pq.append(np.repeat(chunk[qi], lens))
                pr.append(np.concatenate([order[starts[d]:starts[d + 1]] for d in di]) if len(di)
                          else np.zeros(0, np.int64))
    if pairs:
        return out, (np.concatenate(pq) if pq else np.zeros(0, np.int64),
                     np.concatenate(pr) if pr else np.zeros(0, np.int64))
    return out


def count_brute_force(rows: np.ndarray, preds: Predicates, space: Columns) -> np.ndarray:
    """:func:`count` row by row, predicate by predicate (the tests' twin)."""
    out = np.zeros(len(preds), np.int64)
    for q in range(len(preds)):
        ok = np.ones(len(rows), bool)
        for j, op, code in zip(preds.cols[q], preds.ops[q], preds.codes[q]):
            vals = space.values[j]
            a, b = (rows[:, j], code) if vals is None else (vals[rows[:, j]], vals[code])
            ok &= _compare(int(op), a, b)
        out[q] = int(ok.sum())
    return out


# ---------------------------------------------------------------------- the attacker's predicates
def _medians(release: np.ndarray, space: Columns) -> list[float | None]:
    return [None if v is None or len(release) == 0 else float(np.median(v[release[:, j]]))
            for j, v in enumerate(space.values)]


def multivariate(release: np.ndarray, space: Columns, n: int, n_cols: int,
                 rng: np.random.Generator) -> tuple[Predicates, int]:
    """``n`` distinct predicates on ``n_cols`` QIs drawn at random among those matching exactly one row of
    ``release`` (all of them if there are fewer).  Returns the predicates and how many there are in all.

    anonymeter draws a row and ``n_cols`` columns at random, keeps the
    predicate if it isolates a row and is new, and repeats until it has
    ``n`` (or 10M draws): the predicates it keeps are a uniform random
    choice, in random order, among the isolating ones.  Here every
    (row, columns) predicate is counted at once (per set of columns, the
    release sorted by its categorical values and its numeric one) and the
    choice made directly: the same predicates in distribution, in a fixed
    time, and the number available is known.
    """
    from itertools import combinations

    d = release.shape[1]
    c = min(n_cols, d)
    inverse, size, _ = _groups(release, range(d), space)
    alone = np.flatnonzero(size[inverse] == 1)  # no other row shares all its QIs: the only candidates
    if len(alone) == 0 or n == 0 or c == 0:
        return Predicates(*(np.zeros((0, c), np.int64),) * 3), 0
    med = _medians(release, space)
    found_rows, found_sets = [], []
    sets = list(combinations(range(d), c))
    if len(sets) > MAX_COLUMN_SETS:  # many QIs: a seeded sample of the sets of columns (said in the docstring)
        sets = [sets[i] for i in np.sort(rng.choice(len(sets), MAX_COLUMN_SETS, replace=False))]
    for s_i, cols in enumerate(sets):
        codes = release[alone][:, cols]
        ops = np.full(codes.shape, EQ, np.int64)
        for i, j in enumerate(cols):
            if space.values[j] is not None:
                ops[:, i] = np.where(space.values[j][codes[:, i]] > med[j], GE, LE)
        hits = _isolating(release, alone, cols, ops, space)
        found_rows.append(alone[hits])
        found_sets.append(np.full(int(hits.sum()), s_i, np.int64))
    rows, set_of = np.concatenate(found_rows), np.concatenate(found_sets)
    available = len(rows)
    pick = rng.permutation(available)[:n]
    rows, set_of = rows[pick], set_of[pick]
    cols = np.asarray(sets, np.int64)[set_of].reshape(len(pick), c)
    codes = release[rows[:, None], cols]
    ops = np.full(codes.shape, EQ, np.int64)
    for j in range(d):
        if space.values[j] is not None:
            at = cols == j
            ops[at] = np.where(space.values[j][codes[at]] > med[j], GE, LE)
    return Predicates(cols, ops, codes), available


def _isolating(release: np.ndarray, rows: np.ndarray, cols: tuple[int, ...], ops: np.ndarray,
               space: Columns) -> np.ndarray:
    """Whether the predicate built from each of ``rows`` on ``cols`` (with ``ops``) matches exactly one row."""
    numeric = [i for i, j in enumerate(cols) if space.values[j] is not None]
    if len(numeric) == 2:
        alone = _isolating_pair(release, rows, cols, ops, space, numeric)
        if alone is not None:
            return alone
    if len(numeric) > 1:  # thresholds on three numbers: counted predicate by predicate set
        p = Predicates(np.tile(np.asarray(cols, np.int64), (len(rows), 1)), ops, release[rows][:, cols])
        return count(release, p, space) == 1
    cats = [j for j in cols if space.values[j] is None]
    kid, size, _ = _groups(release, cats, space) if cats else (np.zeros(len(release), np.int64), np.array([len(release)]), None)
    if not numeric:
        return size[kid[rows]] == 1
    i = numeric[0]
    j = cols[i]
    rank_of = np.empty(len(space.values[j]), np.int64)
    rank_of[np.argsort(space.values[j], kind="stable")] = np.arange(len(space.values[j]))
    v = len(rank_of)
    rank = rank_of[release[:, j]]
    k_r, v_r = kid[rows], rank[rows]
    if _dense(len(size) * v, len(release)):  # rows per (categorical group, rank), cumulated over the ranks
        cum = np.cumsum(np.bincount(kid * v + rank, minlength=len(size) * v).reshape(len(size), v), axis=1)
        le = cum[k_r, v_r]
        ge = size[k_r] - np.where(v_r > 0, cum[k_r, np.maximum(v_r - 1, 0)], 0)
    else:
        comp = np.sort(kid * v + rank)
        base = k_r * v
        le = np.searchsorted(comp, base + v_r, "right") - np.searchsorted(comp, base, "left")
        ge = np.searchsorted(comp, base + v, "left") - np.searchsorted(comp, base + v_r, "left")
    return np.where(ops[:, i] == GE, ge, le) == 1


def _isolating_pair(release: np.ndarray, rows: np.ndarray, cols: tuple[int, ...], ops: np.ndarray, space: Columns,
                    numeric: list[int]) -> np.ndarray | None:
    """:func:`_isolating` for predicates with a threshold (``>=`` or ``<=``) on each of two numeric QIs.

    The predicate of row r matches row s when s has r's categorical values
    and ``x_s op1 x_r`` and ``y_s op2 y_r``.  Turned by sign into ``a_s <=
    a_r and b_s <= b_r``, r is isolated exactly when no other row of its
    categorical group lies in that quadrant: sorted by (group, a, b), when
    every row before it in its group has a larger b (a running minimum) and
    the row after it is not the same point.  One sort per pair of
    operators, where counting the predicates took P x D comparisons (the
    hospital sample: 28 s for one risk measurement).  None (the caller
    counts) when an operator is not a threshold or a value is not a number.
    """
    i1, i2 = numeric
    j1, j2 = cols[i1], cols[i2]
    o1, o2 = ops[:, i1], ops[:, i2]
    if not (np.isin(o1, (GE, LE)).all() and np.isin(o2, (GE, LE)).all()):
        return None
    if release[:, j1].max(initial=-1) >= len(space.values[j1]) or release[:, j2].max(initial=-1) >= len(space.values[j2]):
        return None  # a published label past the table's: the caller's count says how it compares
    x, y = space.values[j1][release[:, j1]], space.values[j2][release[:, j2]]
    if np.isnan(x).any() or np.isnan(y).any():
        return None
    x = np.unique(x, return_inverse=True)[1].ravel().astype(np.int64)  # ranks: equal values, equal ranks
    y = np.unique(y, return_inverse=True)[1].ravel().astype(np.int64)
    cats = [j for j in cols if space.values[j] is None]
    kid = _groups(release, cats, space)[0].astype(np.int64) if cats else np.zeros(len(release), np.int64)
    span = int(y.max(initial=0)) + 2
    out = np.zeros(len(rows), bool)
    for op1 in (GE, LE):
        for op2 in (GE, LE):
            sel = np.flatnonzero((o1 == op1) & (o2 == op2))
            if not len(sel):
                continue
            a = -x if op1 == GE else x
            b = -y if op2 == GE else y
            order = np.lexsort((b, a, kid))
            ks, as_, bs = kid[order], a[order], b[order]
            # a running minimum of b within each group: earlier groups lifted above every later one's b
            v = bs + (int(ks.max(initial=0)) - ks) * (2 * span)
            before = np.concatenate([[np.iinfo(np.int64).max], np.minimum.accumulate(v)[:-1]])
            same_next = np.zeros(len(order), bool)
            same_next[:-1] = (ks[1:] == ks[:-1]) & (as_[1:] == as_[:-1]) & (bs[1:] == bs[:-1])
            iso = np.empty(len(order), bool)
            iso[order] = (before > v) & ~same_next
            out[sel] = iso[rows[sel]]
    return out


def univariate(release: np.ndarray, space: Columns, n: int, rng: np.random.Generator) -> Predicates:
    """Up to ``n`` one-QI predicates matching exactly one row of ``release`` (rare values, numeric extremes)."""
    cols, ops, codes = [], [], []
    for j in range(release.shape[1]):
        col = release[:, j]
        if len(col) == 0:
            continue
        vals = space.values[j]
        if vals is not None:
            lo, hi = col[np.argmin(vals[col])], col[np.argmax(vals[col])]
            cols += [j, j]
            ops += [LE, GE]
            codes += [lo, hi]
        present, size = np.unique(col, return_counts=True)
        rare = present[size == 1]
        cols += [j] * len(rare)
        ops += [EQ] * len(rare)
        codes += list(rare)
    p = Predicates(np.asarray(cols, np.int64)[:, None], np.asarray(ops, np.int64)[:, None],
                   np.asarray(codes, np.int64)[:, None])
    p = p.take(rng.permutation(len(p)))
    ok = np.flatnonzero(count(release, p, space) == 1)
    # distinct predicates: ``age <= min`` and ``age == min`` are different predicates, as in anonymeter
    _, first = np.unique(np.stack([p.cols[ok, 0], p.ops[ok, 0], p.codes[ok, 0]], axis=1), axis=0, return_index=True)
    return p.take(ok[np.sort(first)][:n])


def random_predicates(release: np.ndarray, space: Columns, n: int, n_cols: int,
                      rng: np.random.Generator) -> Predicates:
    """The baseline's predicates: random QIs, a random published value and a random operator each."""
    d = release.shape[1]
    c = min(n_cols, d)
    if len(release) == 0 or n == 0:
        return Predicates(*(np.zeros((0, c), np.int64),) * 3)
    cols = np.sort(np.argsort(rng.random((n, d)), axis=1)[:, :c], axis=1)
    uniq = [np.unique(release[:, j]) for j in range(d)]
    codes = np.zeros((n, c), np.int64)
    ops = np.zeros((n, c), np.int64)
    for j in range(d):
        at = cols == j
        k = int(at.sum())
        codes[at] = uniq[j][rng.integers(0, len(uniq[j]), size=k)]
        ops[at] = rng.integers(0, 6 if space.values[j] is not None else 2, size=k)
    return Predicates(cols, ops, codes)


# ---------------------------------------------------------------------- the size correction
def probability_integral(n: float, w_min: float, w_max: float) -> float:
    """``integral_{w_min}^{w_max} n w (1 - w)^(n-1) dw``: anonymeter's ``singling_out_probability_integral``.

    Over every weight it is 1 / (n + 1):

    >>> round(probability_integral(1000, 0.0, 1.0) * 1001, 9)
    1.0
    """
    return ((n * w_min + 1) * (1 - w_min) ** n - (n * w_max + 1) * (1 - w_max) ** n) / (n + 1)


def size_correction(pairs: tuple[np.ndarray, np.ndarray], n_preds: int, n_rows: int, target_rows: int,
                    rng: np.random.Generator) -> float | None:
    """``model(target_rows) / model(n_rows)``, the model fitted on seeded subsamples (anonymeter's
    ``fit_correction_term``: 10 sizes from 1,000 to n, 5 subsamples each; from n / 5 when n < 5,000).

    ``pairs``: which rows of the ``n_rows`` control rows satisfy which of the
    ``n_preds`` predicates (:func:`count` with ``pairs``).  None when the fit
    fails (the count is then left as measured; the JSON says so).
    """
    import warnings

    from scipy.optimize import curve_fit

    q, r = pairs
    sizes, hits = [], []
    # anonymeter starts at min(1000, n): a control part of 1,000 rows or fewer would give ten equal sizes and a
    # degenerate fit (which returns about n / target_rows whatever the data); a small one starts at a fifth
    start = 1000 if n_rows >= 5000 else max(1, n_rows // 5)
    for size in np.linspace(start, n_rows, 10).astype(int):
        for _ in range(5):
            take = np.zeros(n_rows, bool)
            take[rng.choice(n_rows, size=size, replace=False)] = True
            per = np.bincount(q, weights=take[r], minlength=n_preds)
            sizes.append(size)
            hits.append(int(np.sum(per == 1)))
    sizes_a, hits_a = np.asarray(sizes, float), np.asarray(hits, float)

    def model(x, w_eff, norm):
        return norm * probability_integral(x, 0.0, w_eff)

    w0 = 1 / sizes_a.max()
    p0 = (w0, 1 / probability_integral(sizes_a.max(), 0.0, w0))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            popt, _ = curve_fit(model, sizes_a, hits_a, bounds=(0, (1, np.inf)), p0=p0)
    except (RuntimeError, ValueError):
        return None
    den = model(float(n_rows), *popt)
    if not den > 0 or not math.isfinite(den):
        return None
    value = model(float(target_rows), *popt) / den
    return float(value) if math.isfinite(value) else None


# ---------------------------------------------------------------------- the attack
@dataclass(frozen=True)
class SinglingOut:
    """The singling-out figures of one release (:func:`attack`), or why there are none."""

    applicable: bool
    why: str | None = None
    mode: str = DEFAULT_MODE
    n_cols: int = N_COLS
    attacks: int = 0  # predicates asked for
    seed: tuple[int, ...] = ()
    predicates: int = 0  # distinct predicates singling out a published row (at most ``attacks``)
    available: int = 0  # distinct isolating predicates the release yields in all (multivariate: all counted)
    train_singled: int = 0
    control_singled: int = 0  # as measured, before the size correction
    correction: float | None = None
    control_rows: int = 0
    train_rows: int = 0
    baseline_singled: int = 0
    train: Any = None  # core.risk.Rate
    control: Any = None
    baseline: Any = None
    risk: float = float("nan")
    low: float = float("nan")
    high: float = float("nan")
    columns: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        if not self.applicable:
            return {"applicable": False, "why": self.why}
        return {"applicable": True, "mode": self.mode, "n_cols": self.n_cols if self.mode == "multivariate" else 1,
                "attacks": self.attacks, "seed": list(self.seed), "columns": list(self.columns),
                "predicates": self.predicates, "available": self.available,
                "train_singled": self.train_singled, "control_singled": self.control_singled,
                "control_correction": self.correction, "train_rows": self.train_rows,
                "control_rows": self.control_rows,
                "train_success": self.train.share, "control_success": self.control.share,
                "baseline_success": self.baseline.share,
                "risk": self.risk, "interval": [self.low, self.high]}

    def clause(self) -> str:
        """The plain-language clause added to the risk sentence."""
        return clause(self.to_json())


def clause(block: dict[str, Any] | None) -> str:
    """The singling-out sentence from its JSON block (pages and the report read the manifest's).

    >>> clause({"applicable": False, "why": NOT_APPLICABLE})
    'Singling out: not applicable: the release publishes no records.'
    """
    if not block:
        return ""
    if not block.get("applicable"):
        return f"Singling out: {block.get('why') or NOT_APPLICABLE}."
    k = block.get("n_cols", 1)
    facts = "one of these facts" if k == 1 else f"{k} of these facts"
    figure = f"{block['risk']:.3f} of the possible risk (95% interval {block['interval'][0]:.3f}-{block['interval'][1]:.3f})"
    if not block["predicates"]:
        return (f"No combination of {facts} isolates a single published row, so the release singles out no one; "
                f"singling out adds {figure}.")
    short = "" if block["predicates"] >= block["attacks"] else \
        f"; the rows yield only {block['predicates']:,} such combinations, the other tries fail"
    return (f"Combining {facts} as published, an attacker isolates exactly one person of the table "
            f"{block['train_success']:.1%} of the time ({block['attacks']:,} tries{short}) and one person not in it "
            f"{block['control_success']:.1%} of the time; singling out adds {figure}.")


def attack(release: np.ndarray, train: np.ndarray, control: np.ndarray, space: Columns, attacks: int,
           seed: Sequence[int], mode: str = DEFAULT_MODE, n_cols: int = N_COLS) -> SinglingOut:
    """Singling out on code arrays: predicates from ``release``, scored on ``train`` and ``control``.

    ``release``, ``train``, ``control``: (rows, QIs) codes in ``space``.
    See the module docstring for the steps; ``seed`` seeds the predicates,
    the baseline and the correction's subsamples.
    """
    if mode not in MODES:
        raise ValueError(f"The singling-out mode must be one of {', '.join(MODES)}. Got {mode!r}.")
    rng = np.random.default_rng(list(seed))
    if mode == "multivariate":
        preds, available = multivariate(release, space, attacks, n_cols, rng)
    else:
        preds = univariate(release, space, attacks, rng)
        available = len(preds)
    singled_train = int(np.sum(count(train, preds, space) == 1))
    per_control, pairs = count(control, preds, space, pairs=True)
    singled_control = int(np.sum(per_control == 1))
    correction = None
    control_k = float(singled_control)
    if singled_control and len(control) != len(train):
        correction = size_correction(pairs, len(preds), len(control), len(train), rng)
        if correction is not None:
            control_k = min(float(attacks), singled_control * correction)
    base = random_predicates(release, space, attacks, n_cols if mode == "multivariate" else 1, rng)
    singled_base = int(np.sum(count(train, base, space) == 1))
    a, c = Rate.of(attacks, singled_train), Rate.of(attacks, control_k)
    value, low, high = residual(a, c)
    return SinglingOut(True, None, mode, min(n_cols, release.shape[1]), attacks, tuple(int(s) for s in seed),
                       len(preds), available, singled_train, singled_control, correction, len(control), len(train),
                       singled_base, a, c, Rate.of(attacks, singled_base), value, low, high, space.names)


# ---------------------------------------------------------------------- a release's per-person table
def _key(v) -> str:
    """A label as text, integral floats without ``.0`` (as core.risk reads published labels: 37, not 37.0)."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def published_qis(release, data) -> tuple[np.ndarray, list[int], Columns] | None:
    """The release's per-person rows on the QIs it publishes, in the table's code space.

    Returns ``(rows, qi positions, space)`` or None when the mechanism
    publishes no row per person (its ``record_table`` is None).
    """
    from .mechanisms import get

    name = get(release.mechanism).record_table
    if name is None:
        return None
    tab = release.tables[name]
    qis = [j for j, c in enumerate(data.qi) if c in tab.columns]
    cols, values, sizes = [], [], []
    for j in qis:
        c = data.qi[j]
        lab_tab = np.asarray(data.qi_labels[j])
        lab_pub = tab.labels.get(c)
        codes = np.asarray(tab.columns[c], np.int64)
        if lab_pub is None or (len(lab_pub) == len(lab_tab) and
                               np.array_equal(np.asarray(lab_pub, object), lab_tab.astype(object))):
            mapped, extra = codes, 0
        else:  # matched by text; a label the table does not hold gets its own code past the table's
            index = {_key(v): i for i, v in enumerate(lab_tab)}
            own: dict[str, int] = {}
            to_tab = np.array([index[_key(v)] if _key(v) in index else
                               len(lab_tab) + own.setdefault(_key(v), len(own)) for v in lab_pub], np.int64)
            mapped, extra = to_tab[codes], len(own)
        cols.append(mapped)
        numeric = bool(data.qi_numeric[j]) and extra == 0
        values.append(np.asarray(lab_tab, float) if numeric else None)
        sizes.append(len(lab_tab) + extra)
    rows = np.stack(cols, axis=1) if cols else np.zeros((0, 0), np.int64)
    return rows, qis, Columns(tuple(data.qi[j] for j in qis), tuple(values), tuple(sizes))


def assess_release(release, train, control_qi: np.ndarray, attacks: int, seed: Sequence[int],
                   mode: str = DEFAULT_MODE, n_cols: int = N_COLS) -> SinglingOut:
    """Singling out of a measurement ``release`` of ``train`` (a Dataset), against control QI codes (rows, QIs)."""
    pub = published_qis(release, train)
    if pub is None:
        return SinglingOut(False, NOT_APPLICABLE, mode)
    rows, qis, space = pub
    if not qis:
        return SinglingOut(False, "not applicable: the release's rows publish none of the QIs", mode)
    train_rows = np.stack([train.qi_codes[j] for j in qis], axis=1).astype(np.int64)
    return attack(rows, train_rows, np.asarray(control_qi, np.int64)[:, qis], space, attacks, seed, mode, n_cols)
