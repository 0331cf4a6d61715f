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
    counts = np.bincount(sa_codes, minlength=m)
    message = eligibility_message(what, size, counts, labels)
    if message:
        best = largest_feasible(counts)
        raise NotEligible(message, suggestion={what: best} if best >= 2 else None)


def distinct_value_groups(sa_codes: np.ndarray, size: int, m: int) -> Partition:
    """Partition records into groups of ``size`` or ``size + 1`` distinct SA values.

    Deterministic given the SA column and the record order (record index
    plays the role of the id).  The caller checks eligibility first.
    """
    n = len(sa_codes)
    counts = np.bincount(sa_codes, minlength=m)
    r = n // size
    if r == 0:
        raise NotEligible(f"A group needs {size} records but the table has only {n}.")
    # rank values by descending count (ties: lower code first)
    rank = np.empty(m, dtype=np.int64)
    rank[np.lexsort((np.arange(m), -counts))] = np.arange(m)
    order = np.lexsort((np.arange(n), rank[sa_codes]))
    group = np.empty(n, dtype=np.int64)
    group[order] = np.arange(n) % r
    sizes = np.bincount(group, minlength=r)
    return Partition(group=group, sizes=sizes)
