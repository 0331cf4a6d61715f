"""Groups of distinct SA values: SPLU-Gen's decoy groups and Anatomy's l-diverse groups.

MECHANISMS.md section 1, step 2: sort records by (SA value, id) with values
in descending order of count, then send the record at position i to group
``i mod r`` with ``r = floor(N / gamma)``.  A value's run has length at most
``r`` whenever the largest count is at most ``N / gamma``, and positions in
one group are ``r`` apart, so no group repeats a value.  The ``N mod gamma``
records past position ``r * gamma`` land in groups ``0 .. N mod gamma - 1``,
so groups have gamma or gamma + 1 members and no record is dropped (the
paper deletes them; we keep them, as MECHANISMS.md asks).  That holds
whenever ``N mod gamma <= floor(N / gamma)``, always true for
``N >= gamma (gamma - 1)``; on smaller tables the leftovers wrap around and
a few groups get more members (e.g. N = 7, gamma = 4: one group of 7),
still with distinct values.

The sorted layout above fixes which values share groups: value runs that
lie ``r`` positions apart always meet, so a value's decoys come from two or
three other values only.  SPLU-Gen's reconstruction (seed 000 §5.1)
assumes the opposite, that a record whose value is not s has s among its
decoys with a chance that does not depend on the record (its value, hence
its QI values).  Given a random generator, :func:`distinct_value_groups`
therefore mixes the layout (:func:`_mixed_layout`): the same columns of
``r`` records, each column's rows permuted at random, and the one value
whose run straddles two columns kept out of rows it already occupies.  The
groups are still a function of the SA column and the ids only (plus the
seed), never of the QI values, and still distinct-valued with sizes gamma or
gamma + 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import NotEligible


@dataclass(frozen=True, eq=False)
class Partition:
    """``group[i]`` is record i's group; groups hold distinct SA values."""

    group: np.ndarray  # (N,) int
    sizes: np.ndarray  # (r,) int

    @property
    def n_groups(self) -> int:
        return len(self.sizes)


def largest_feasible(counts: np.ndarray) -> int:
    """Largest gamma (or l) such that every count is at most N / gamma."""
    n = int(counts.sum())
    return int(n // int(counts.max()))


def eligibility_message(what: str, size: int, counts: np.ndarray, labels: np.ndarray) -> str | None:
    """None if groups of ``size`` distinct values exist; else the reason, in one sentence."""
    n = int(counts.sum())
    top = int(np.argmax(counts))
    if counts[top] * size <= n:
        return None
    best = largest_feasible(counts)
    hint = (f"largest feasible {what} is {best}" if best >= 2
            else f"no {what} of 2 or more is feasible, because one value covers more than half the table")
    return (f"{what} = {size} needs every sensitive value to have at most N/{size} = {n // size:,} records; "
            f"'{labels[top]}' has {int(counts[top]):,}; {hint}.")


def check_distinct_groups(what: str, size: int, sa_codes: np.ndarray, labels: np.ndarray, m: int) -> None:
    check_distinct_counts(what, size, np.bincount(sa_codes, minlength=m), labels)


def check_distinct_counts(what: str, size: int, counts: np.ndarray, labels: np.ndarray) -> None:
    """NotEligible (with the largest feasible size as suggestion) unless groups of ``size`` distinct values exist."""
    message = eligibility_message(what, size, counts, labels)
    if message:
        best = largest_feasible(counts)
        raise NotEligible(message, suggestion={what: best} if best >= 2 else None)


def distinct_value_groups(sa_codes: np.ndarray, size: int, m: int,
                          rng: np.random.Generator | None = None) -> Partition:
    """Partition records into groups of ``size`` or ``size + 1`` distinct SA values.

    Parameters
    ----------
    sa_codes : ndarray (N,) of int
    size : int
        gamma (SPLU-Gen) or l (Anatomy).
    m : int
        SA domain size.
    rng : numpy.random.Generator, optional
        None: the sorted layout (MECHANISMS.md section 1 step 2),
        deterministic given the SA column and the record order (record index
        plays the role of the id).  A generator: the mixed layout of
        :func:`_mixed_layout`, in which which values share a group is
        random.  Tiny tables whose residue does not fit one extra record per
        group (``N mod size > N // size``) always get the sorted layout.

    The caller checks eligibility first.
    """
    n = len(sa_codes)
    counts = np.bincount(sa_codes, minlength=m)
    r = n // size
    if r == 0:
        raise NotEligible(f"A group needs {size} records but the table has only {n}.")
    # rank values by descending count (ties: lower code first)
    rank = np.empty(m, dtype=np.int64)
    rank[np.lexsort((np.arange(m), -counts))] = np.arange(m)
    group = np.empty(n, dtype=np.int64)
    if rng is not None and n - r * size <= r:
        # value runs with a random order inside each run, so the records of a
        # value that land in the straddling part or the residue are a random subset
        shuffled = rng.permutation(n)
        order = shuffled[np.argsort(rank[sa_codes][shuffled], kind="stable")]
        group[order] = _mixed_layout(np.asarray(sa_codes)[order], r, size, rng)
    else:
        order = np.argsort(rank[sa_codes], kind="stable")  # by (value rank, id)
        group[order] = np.arange(n) % r
    sizes = np.bincount(group, minlength=r)
    return Partition(group=group, sizes=sizes)


def _mixed_layout(sa_sorted: np.ndarray, r: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Group of each record of the value-sorted list, with random value co-occurrence.

    The sorted list is cut into ``size`` columns of ``r`` records (column c
    holds positions ``c r .. (c+1) r - 1``) and the ``N - r size`` residual
    records.  A value's run has at most ``r`` records, so it lies in at most
    two adjacent columns, and only the value holding positions ``c r - 1``
    and ``c r`` can meet itself in a row shared by columns c - 1 and c.  Each
    column's rows are permuted at random; then each record of that
    straddling value that landed in a row where column c - 1 already holds
    the value is swapped with a random row holding neither (there are
    enough: the value's ``k`` records in column c - 1 and ``j`` in column c
    satisfy ``k + j <= r``).  Residual records (fewer than ``size``, and at
    most ``r``) go to distinct random rows whose last column does not hold
    their value (a residual value can only also lie in the last column).
    Row = group.

    Returns
    -------
    ndarray (N,) of int
        The group of the record at each position of ``sa_sorted``.
    """
    n = len(sa_sorted)
    main = r * size
    rows = np.empty(main, dtype=np.int64)  # rows[c * r + i] = row of the column-c record i
    col_vals = np.empty((size, r), dtype=sa_sorted.dtype)  # value per (column, row)
    for c in range(size):
        perm = rng.permutation(r)  # record i of column c goes to row perm[i]
        vals = sa_sorted[c * r:(c + 1) * r]
        if c:
            v = sa_sorted[c * r]
            if sa_sorted[c * r - 1] == v:  # the run of v straddles columns c - 1 and c
                taken = col_vals[c - 1] == v
                mine = vals == v
                bad = np.flatnonzero(mine & taken[perm])
                if len(bad):
                    # rows without v in either column, as targets for the clashing records
                    holder = np.zeros(r, dtype=bool)
                    holder[perm[mine]] = True
                    free = np.flatnonzero(~taken & ~holder)
                    target_rows = rng.choice(free, size=len(bad), replace=False)
                    inverse = np.empty(r, dtype=np.int64)
                    inverse[perm] = np.arange(r)
                    partners = inverse[target_rows]  # the records of column c now in those rows
                    perm[bad], perm[partners] = target_rows, perm[bad].copy()
        rows[c * r:(c + 1) * r] = perm
        col_vals[c, perm] = vals
    group = np.empty(n, dtype=np.int64)
    group[:main] = rows
    rest = sa_sorted[main:]
    if len(rest):
        used = np.zeros(r, dtype=bool)
        for k, v in enumerate(rest):  # fewer than ``size`` records
            free = np.flatnonzero((col_vals[size - 1] != v) & ~used)
            g = int(rng.choice(free))
            used[g] = True
            group[main + k] = g
    return group


# ------------------------------------------------------------------ the sorted layout from counts
@dataclass(frozen=True, eq=False)
class Layout:
    """The sorted layout of :func:`distinct_value_groups` computed from the SA counts alone.

    The record of value ``v`` with rank ``k`` among the value's records
    (input order) sits at position ``start[v] + k`` of the (value rank, id)
    order and goes to group ``(start[v] + k) mod r``: the same groups as
    ``distinct_value_groups(sa_codes, size, m)`` without the records.
    """

    counts: np.ndarray  # (m,) records per value
    start: np.ndarray  # (m,) first sorted position of each value
    r: int  # number of groups

    @property
    def n(self) -> int:
        return int(self.counts.sum())

    @property
    def n_groups(self) -> int:
        return self.r

    def group(self, sa: np.ndarray, rank: np.ndarray) -> np.ndarray:
        """Group of each record given its SA code and its rank among its value's records."""
        return (self.start[np.asarray(sa, dtype=np.int64)] + np.asarray(rank, dtype=np.int64)) % self.r

    @property
    def sizes(self) -> np.ndarray:
        """(r,) records per group."""
        if not self.r:
            return np.zeros(0, np.int64)
        # position p goes to group p mod r: every group gets n // r, the first n mod r one more
        return np.full(self.r, self.n // self.r, dtype=np.int64) + (np.arange(self.r) < self.n % self.r)

    def st_rows(self, gid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(published group id, value) of every record, sorted by id then value: the ST's rows, without sorting n keys.

        ``gid[g]`` is group ``g``'s published id.  The values in
        sorted-position order, laid out as a ``(ceil(n / r), r)`` matrix, put
        group ``g``'s values in column ``g``; each column is sorted (values
        are distinct in a group, so this is the order by value), and the
        columns are read in the order of their ids.  The same rows and order
        as sorting :meth:`members` by ``(gid, value)``; ids are int32 below
        2**31 groups and values the narrowest unsigned type (1 byte a record
        for up to 255 values).
        """
        m = len(self.counts)
        n, r = self.n, self.r
        vt = np.uint8 if m < 2**8 - 1 else np.uint16 if m < 2**16 - 1 else np.uint32
        by_start = np.argsort(self.start, kind="stable")
        k = -(-n // r) if r else 0
        grid = np.full(k * r, m, dtype=vt)  # m: an empty cell of the last row
        grid[:n] = np.repeat(by_start.astype(vt), self.counts[by_start])
        grid = grid.reshape(k, r)
        grid.sort(axis=0)
        inverse = np.empty(r, dtype=np.int64)
        inverse[np.asarray(gid, dtype=np.int64)] = np.arange(r)
        flat = grid[:, inverse].T.ravel()  # column of id 0, then id 1, ...: each group's sorted values
        del grid
        value = flat[flat != m]
        ids = np.repeat(np.arange(r, dtype=np.int32 if r < 2**31 else np.int64), self.sizes[inverse])
        return ids, value

    def members(self) -> tuple[np.ndarray, np.ndarray]:
        """(group, value) of every record, one pair per record, in sorted-position order (the ST's rows)."""
        by_start = np.argsort(self.start, kind="stable")
        value = np.repeat(by_start, self.counts[by_start])  # the values in sorted-position order
        return np.arange(self.n, dtype=np.int64) % self.r, value


def sorted_layout(counts: np.ndarray, size: int) -> Layout:
    """:class:`Layout` of groups of ``size`` (or ``size + 1``) distinct values from SA ``counts``.

    Values are ranked by descending count (ties: lower code first), as in
    :func:`distinct_value_groups`; the caller checks eligibility first.
    """
    counts = np.asarray(counts, dtype=np.int64)
    n, m = int(counts.sum()), len(counts)
    r = n // size
    if r == 0:
        raise NotEligible(f"A group needs {size} records but the table has only {n}.")
    order = np.lexsort((np.arange(m), -counts))
    start = np.empty(m, dtype=np.int64)
    start[order] = np.concatenate(([0], np.cumsum(counts[order])[:-1]))
    return Layout(counts=counts, start=start, r=r)
