"""The one protocol every engine runs: a mechanism plans from counts, then applies the plan to chunks of records.

A release is made in two steps (issue 15; ``/work/notes/DESIGN15.md`` §3):

1. ``Mechanism.plan(summary, values, seed) -> Plan``: everything the
   mechanism decides for the whole table (decoy groups, micro groups to
   resample, noisy histograms, group-level draws), computed from compact
   counts (:class:`core.engine.combos.Combos`), never from a copy of every
   row.  A plan is small and picklable: no per-record arrays.
2. ``Plan.apply(chunk) -> {column: codes}``: the published columns of the
   records of one :class:`Chunk` (any contiguous run of records, in any
   order of work).  Every per-record draw comes from :mod:`core.rng` with
   the record's position as counter, and every per-record decision that
   depends on other records goes through the record's *rank* (below), so
   the output of a record does not depend on how the table was cut.

The engine (:mod:`core.engine.local`, :mod:`core.engine.dask`) then puts
the records in the published order (sorted by :func:`core.rng.order_keys`,
ties by position), adds the plan's static tables and builds the
:class:`core.release.Published` with :meth:`Plan.published_result`.

Ranks
-----
``Plan.rank_by`` says which key a plan needs ranks for:

* ``None``: no rank (per-record draws only: UP, DBR).
* ``"sa"``: key = the record's SA code (``0 .. m-1``).
* ``"qi"``: key = the index of the record's QI combination among the
  distinct QI combinations of the summary (:meth:`Combos.qi_groups`, sorted
  lexicographically by codes).
* ``"qi_sa"``: key = the index of the record's (QI..., SA) combination among
  the summary's rows (:class:`Combos` is sorted by (QI..., SA)).

``Chunk.key`` carries that key and ``Chunk.rank`` the record's rank among
the records with the same key **over the whole table**, in input order
(0 for the first such record of the table): the engine adds the counts of
the earlier chunks (an exclusive prefix sum) to the rank within the chunk.
A plan maps (key, rank) to the record's group with ``searchsorted`` on
cumulative counts, so *which* of several identical records goes where is
decided by position, and the randomness that matters comes from
:mod:`core.rng`.

Output columns
--------------
The per-record table (named :attr:`Plan.table`, e.g. ``"release"`` or
``"qit"``) holds the QI columns unchanged (codes with the dataset's labels)
when :attr:`Plan.keep_qi` is true, then the columns :meth:`Plan.apply`
returns, in the order of :attr:`Plan.labels` (``labels[name]`` is the label
array the codes index, or None for plain values such as group ids).  An
output column named like a QI replaces it in place.  ``apply`` may return
a boolean ``"_keep"`` column: records with False are left out of the
release (Ambiguity's unplaced records).  :attr:`Plan.table` None means the
release has no per-record table (Laplace: its release is answers).

Tallies
-------
Some published figures depend on every record's output (UP's share of
unchanged values).  :meth:`Plan.tally` returns integer sums for one chunk;
the engine adds them over all chunks (integers, so the sum is exact in any
order) and :meth:`Plan.finish` turns the totals into privacy figures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from ..release import CodedTable, Published

#: the keys a plan may rank records by (see the module docstring)
RANK_KEYS = (None, "sa", "qi", "qi_sa")


@dataclass(frozen=True, eq=False)
class Chunk:
    """A contiguous run of records: positions ``start .. start + n - 1`` of the bound table.

    Attributes
    ----------
    start : int
        Position of the first record in the table (after rows with missing
        values were dropped): the counter of its draws in :mod:`core.rng`.
    qi : tuple of ndarray (n,)
        QI codes, one array per QI column (any integer dtype).
    sa : ndarray (n,)
        SA codes (any integer dtype).
    key : ndarray (n,) of int64 or None
        The key of :attr:`Plan.rank_by` for each record (None when the plan
        ranks nothing).
    rank : ndarray (n,) of int64 or None
        Rank of each record among the records of the whole table with the
        same key, in input order.
    """

    start: int
    qi: tuple[np.ndarray, ...]
    sa: np.ndarray
    key: np.ndarray | None = None
    rank: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.sa)

    @property
    def stop(self) -> int:
        return self.start + len(self.sa)


@dataclass(eq=False)
class Plan:
    """What a mechanism decided for the whole table; applied to chunks of records by an engine.

    Subclasses (a plain class with its own ``__init__`` calling
    ``super().__init__(seed=..., **fields)``, or a ``kw_only`` dataclass)
    set the fields in ``Mechanism.plan`` and override
    :meth:`apply` (and :meth:`tally` / :meth:`finish` when a published
    figure needs every record's output).  A plan must stay small and
    picklable (the Dask engine ships it to every worker): no per-record
    arrays, only per-value, per-group or per-combination tables.

    Attributes
    ----------
    seed : int
        The release seed (the key of every draw, :mod:`core.rng`).
    rank_by : {None, "sa", "qi", "qi_sa"}
        Which rank :meth:`apply` needs (module docstring).
    table : str or None
        Name of the per-record published table; None when the release has
        none (only :attr:`tables`).
    keep_qi : bool
        The per-record table starts with the QI columns, unchanged.
    labels : dict
        ``{output column: label array or None}`` in table order: the columns
        :meth:`apply` returns.
    tables : dict of CodedTable
        Static tables built from counts (Anatomy's ST, Laplace's noisy
        histogram), published after the per-record table.
    published, privacy, state : dict
        As :class:`core.release.Published`; :meth:`finish` may add privacy
        figures.
    notes : tuple of str
    rows_out : int or None
        Rows of the release when it is not the per-record table's length.
    """

    seed: int
    rank_by: str | None = None
    table: str | None = "release"
    keep_qi: bool = True
    labels: dict[str, np.ndarray | None] = field(default_factory=dict)
    tables: dict[str, CodedTable] = field(default_factory=dict)
    published: dict[str, Any] = field(default_factory=dict)
    privacy: dict[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    state: dict[str, Any] = field(default_factory=dict)
    rows_out: int | None = None

    def __post_init__(self):
        if self.rank_by not in RANK_KEYS:
            raise ValueError(f"rank_by must be one of {RANK_KEYS}, not {self.rank_by!r}")

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        """The output columns (codes) of the records of ``chunk``, keyed as :attr:`labels`.

        Must depend only on the plan, the chunk's records, their positions
        (``chunk.start + i``) and their ranks, never on the chunk's length
        or on other chunks.
        """
        return {}

    def in_order(self, order: np.ndarray) -> dict[str, np.ndarray] | None:
        """The output columns of every record at once, already in the published ``order``; None (the default)
        to be applied batch by batch.

        An engine may call it instead of :meth:`apply` (the local engine
        does, when the plan publishes every record and has no tallies); it
        must give what :meth:`apply` over all the chunks, put in ``order``,
        would.  For a plan that keeps per-record values between slider
        moves in the app (bucketization's dealing slots): one gather in
        published order instead of one per batch and another to reorder.
        """
        return None

    def tally(self, chunk: Chunk, out: Mapping[str, np.ndarray]) -> dict[str, int]:
        """Integer sums over ``chunk`` that :meth:`finish` needs (added over all chunks by the engine)."""
        return {}

    def finish(self, totals: Mapping[str, int]) -> dict[str, Any]:
        """Privacy figures computed from the tallies of the whole table (merged into :attr:`privacy`)."""
        return {}

    def published_result(self, tables: Mapping[str, CodedTable], totals: Mapping[str, int]) -> Published:
        """The :class:`core.release.Published` of this plan, given the per-record table(s) the engine built."""
        privacy = {**self.privacy, **self.finish(dict(totals))}
        return Published(tables={**tables, **self.tables}, published=dict(self.published), privacy=privacy,
                         notes=tuple(self.notes), state=dict(self.state), rows_out=self.rows_out)


def add_tallies(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    """``a + b`` key by key (tallies of two chunks)."""
    out = dict(a)
    for k, v in b.items():
        out[k] = int(out.get(k, 0)) + int(v)
    return out


def ranks(key: np.ndarray, n_keys: int, before: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Rank of each record among the records with the same key, and the chunk's counts per key.

    Parameters
    ----------
    key : ndarray (n,) of int
        Key of each record of one chunk, in input order (``0 .. n_keys-1``).
    n_keys : int
    before : ndarray (n_keys,) of int64, optional
        Records of each key in the earlier chunks (exclusive prefix sum over
        chunks); zeros by default.

    Returns
    -------
    rank : ndarray (n,) of int64
        ``before[key] +`` the number of earlier records of the chunk with the
        same key.
    counts : ndarray (n_keys,) of int64
        Records of each key in this chunk (add to ``before`` for the next).
    """
    key = np.asarray(key, dtype=np.int64)
    n = len(key)
    counts = np.bincount(key, minlength=n_keys).astype(np.int64)
    if n == 0:
        return np.zeros(0, dtype=np.int64), counts
    # a stable sort of 16-bit keys is a radix sort (about 10x faster than sorting int64 keys)
    small = key.astype(np.uint16) if n_keys <= 1 << 16 else key
    order = np.argsort(small, kind="stable")
    first = np.cumsum(counts) - counts  # where each key's run starts in ``order``
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n, dtype=np.int64) - first[key[order]]
    if before is not None:
        rank += np.asarray(before, dtype=np.int64)[key]
    return rank, counts


__all__ = ["Chunk", "Plan", "RANK_KEYS", "add_tallies", "ranks"]
