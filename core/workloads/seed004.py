"""Seed 004's GROUP BY workload (Ambiguity and PriView, §9.1, Fig. 13-14).

The paper's queries are::

    SELECT QT_1, ..., QT_i, count(*) FROM data WHERE S = v GROUP BY QT_1, ..., QT_i

with the grouped QI attributes picked at random, v varied, and three
batches of selectivity 1%, 5% and 10% (Fig. 13(a)); Fig. 13(b) varies the
number of attributes in the selection condition (3, 4, 5).  Each cell of a
GROUP BY's answer is one count query ``QT_1 = a_1 AND ... AND S = v``.

Choices where the paper is silent (written down here, tested in
tests/test_seed004.py):

* **Selectivity** is the share of the table that the WHERE clause selects
  (the records the GROUP BY counts).  ``S = v`` alone offers only the SA
  values' shares, so the WHERE may add a range on one numeric QI that is
  not grouped (``age >= 50`` or ``age < 31``, published as a mask) or an
  equality on a categorical QI that is not grouped (``sex = Female``): among
  every ``S = v``, ``S = v AND A >= x`` / ``A < x`` and ``S = v AND B = b``
  whose share is within 25% of the target, one is drawn at random ("vary
  the value v"); when none is, the closest is used.  The achieved share is
  recorded per GROUP BY.
* **Cells**: only non-empty cells are queries (a GROUP BY returns no empty
  group, and the relative error of a zero count is undefined).  A GROUP BY
  with more than ``max_cells`` cells keeps a uniform sample of them, so a
  3-attribute GROUP BY at 10% of census:500000 stays fast.
* **Fig. 13(b)** (:func:`seed004_attrs`): GROUP BY d attributes WHERE
  ``S = v`` with v drawn in proportion to its share (no range: every cell's
  condition has exactly d QI attributes); bands by d.

All counting is vectorised: one pass over the records per GROUP BY
(``np.unique`` of the grouped codes among the WHERE's records).

References
----------
seed 004 (Hui Wang, JCST 2010) §9.1 "Queries", §9.3, Fig. 13-14.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..counting import QueryBatch, Records
from ..errors import ParameterError, clip
from ..params import Param
from ..table import Dataset
from ..workload import Band, Workload
from . import WorkloadKind

TOLERANCE = 0.25


@dataclass(frozen=True, eq=False)
class GroupByWorkload(Workload):
    """A :class:`Workload` whose queries are the cells of GROUP BY queries.

    Per query: ``n_attrs`` (grouped attributes), ``groupby`` (which GROUP
    BY), ``target`` (the selectivity batch it was drawn for).  Per GROUP BY:
    ``where`` (its WHERE clause as text) and ``where_share`` (the share of
    the table the WHERE selects).
    """

    n_attrs: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    groupby: np.ndarray = field(default_factory=lambda: np.zeros(0, int))
    target: np.ndarray = field(default_factory=lambda: np.zeros(0))
    where: tuple[str, ...] = ()
    where_share: np.ndarray = field(default_factory=lambda: np.zeros(0))
    grouped: tuple[tuple[str, ...], ...] = ()


def parse_list(text, name: str, kind=float, low=None, high=None, limit: int = 10) -> list:
    """``"0.01,0.05,0.1"`` -> [0.01, 0.05, 0.1]; one clear sentence when it is not such a list."""
    if isinstance(text, (list, tuple)):
        parts = list(text)
    else:
        parts = [p for p in str(text).replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    try:
        vals = [kind(float(p)) if kind is int else kind(p) for p in parts]
        if kind is int and any(float(p) != int(float(p)) for p in parts):
            raise ValueError
    except (TypeError, ValueError):
        vals = []
    ok = bool(vals) and len(vals) <= limit and all(
        (low is None or v >= low) and (high is None or v <= high) for v in vals)
    if not ok:
        rng = f" between {low} and {high}" if low is not None and high is not None else ""
        raise ParameterError(f"The '{name}' setting lists up to {limit} numbers{rng}, separated by commas. "
                             f"Got {clip(text)!r}.")
    return list(dict.fromkeys(vals))


def _where_candidates(data: Dataset, range_attrs: Sequence[int]):
    """Every WHERE clause ``S = v``, ``S = v AND A_r >= x`` / ``< x`` (numeric A_r) or ``S = v AND A_r = x``
    (categorical A_r): (v, r, op, x, count) arrays, op 0 none, 1 ``>=``, 2 ``<``, 3 ``=``."""
    m = data.m
    cnt = data.sa_counts.astype(float)
    vs, rs, ops, xs, counts = [np.arange(m)], [np.full(m, -1)], [np.zeros(m, int)], [np.zeros(m, int)], [cnt]
    for r in range_attrs:
        dom = data.domains[r]
        # codes are narrow (uint8 for census): widen before the arithmetic
        table = np.bincount(data.qi_codes[r].astype(np.int64) * m + data.sa_codes, minlength=dom * m).reshape(dom, m)
        if not data.qi_numeric[r]:
            vs.append(np.tile(np.arange(m), dom))
            rs.append(np.full(dom * m, r))
            ops.append(np.full(dom * m, 3))
            xs.append(np.repeat(np.arange(dom), m))
            counts.append(table.ravel().astype(float))
            continue
        below = np.cumsum(table, axis=0)  # below[x - 1, v] = count with code < x
        for op, values in ((1, cnt[None, :] - below[:-1]), (2, below[:-1])):  # op 1: >= x, op 2: < x
            x = np.repeat(np.arange(1, dom), m)
            v = np.tile(np.arange(m), dom - 1)
            vs.append(v)
            rs.append(np.full(len(v), r))
            ops.append(np.full(len(v), op))
            xs.append(x)
            counts.append(values.ravel().astype(float))
    out = [np.concatenate(a) for a in (vs, rs, ops, xs, counts)]
    keep = out[4] > 0
    return [a[keep] for a in out]


def _label(value) -> str:
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    return str(value)


def groupby_workload(data: Dataset, selectivities: Sequence[float], attrs: Sequence[int], groupbys: int,
                     max_cells: int, seed: int, range_condition: bool = True, by: str = "selectivity",
                     kind: str = "seed004", records: Records | None = None) -> GroupByWorkload:
    """GROUP BY queries for every (selectivity, number of attributes) pair; bands ``by`` either."""
    k = len(data.qi)
    if not k:
        raise ParameterError("The workload needs at least one QI column.")
    if groupbys < 1 or max_cells < 1:
        raise ParameterError(f"The 'groupbys' and 'max_cells' settings must be at least 1. Got {groupbys} "
                             f"and {max_cells}.")
    if max(attrs) > k:
        raise ParameterError(f"A GROUP BY on {max(attrs)} attributes needs {max(attrs)} QI columns; "
                             f"the table has {k}.")
    rng = np.random.default_rng(seed)
    n = data.n
    batches, true_parts, n_attrs, gb_ids, targets = [], [], [], [], []
    wheres, shares, grouped_names = [], [], []
    codes = data.qi_codes
    for s in selectivities:
        for d in attrs:
            for _ in range(groupbys):
                grouped = sorted(rng.choice(k, size=d, replace=False).tolist())
                range_attrs = [a for a in range(k) if a not in grouped] if range_condition else []
                v_c, r_c, op_c, x_c, cnt_c = _where_candidates(data, range_attrs)
                if s is None:  # Fig. 13(b): S = v only, v drawn in proportion to its share
                    plain = np.flatnonzero(r_c < 0)
                    pick = int(rng.choice(plain, p=cnt_c[plain] / cnt_c[plain].sum()))
                else:
                    share = cnt_c / n
                    near = np.flatnonzero(np.abs(share - s) <= TOLERANCE * s)
                    pick = int(rng.choice(near)) if len(near) else int(np.argmin(np.abs(share - s)))
                v, r, op, x = int(v_c[pick]), int(r_c[pick]), int(op_c[pick]), int(x_c[pick])
                where = data.sa_codes == v
                text = f"{data.sa} = {data.sa_labels[v]}"
                if r >= 0:
                    where &= (codes[r] >= x) if op == 1 else (codes[r] < x) if op == 2 else (codes[r] == x)
                    text += f" AND {data.qi[r]} {('>=', '<', '=')[op - 1]} {_label(data.qi_labels[r][x])}"
                rows = np.flatnonzero(where)
                cells, counts = np.unique(np.stack([codes[a][rows] for a in grouped], axis=1), axis=0,
                                          return_counts=True)
                if len(cells) > max_cells:
                    keep = np.sort(rng.choice(len(cells), size=max_cells, replace=False))
                    cells, counts = cells[keep], counts[keep]
                q = len(cells)
                batch_attrs = tuple(sorted(grouped + ([r] if r >= 0 else [])))
                masks = []
                for a in batch_attrs:
                    mask = np.zeros((q, data.domains[a]), dtype=bool)
                    if a in grouped:
                        mask[np.arange(q), cells[:, grouped.index(a)]] = True
                    elif op == 3:
                        mask[:, x] = True
                    else:
                        mask[:, x:] = op == 1
                        mask[:, :x] = op == 2
                    masks.append(mask)
                sa = np.zeros((q, data.m), dtype=bool)
                sa[:, v] = True
                batches.append(QueryBatch(attrs=batch_attrs, sa=sa, masks=tuple(masks)))
                true_parts.append(counts.astype(float))
                n_attrs.append(np.full(q, d))
                gb_ids.append(np.full(q, len(wheres)))
                targets.append(np.full(q, np.nan if s is None else s))
                wheres.append(text)
                shares.append(len(rows) / n)
                grouped_names.append(tuple(data.qi[a] for a in grouped))
    cat = (lambda parts, dt: np.concatenate(parts).astype(dt) if parts else np.zeros(0, dt))
    true = cat(true_parts, float)
    n_attrs_a, gb_a, target_a = cat(n_attrs, int), cat(gb_ids, int), cat(targets, float)
    if by == "selectivity":
        bands = tuple(Band(f"WHERE selects ≈ {s:.0%}".replace(".0%", "%"), "selectivity", s, None)
                      for s in selectivities)
        membership = np.stack([np.isclose(target_a, s) for s in selectivities]) if len(true) else \
            np.zeros((len(bands), 0), bool)
    else:
        bands = tuple(Band(f"{d} attribute{'s' if d != 1 else ''} in the condition", "count", 1, None)
                      for d in attrs)
        membership = np.stack([n_attrs_a == d for d in attrs]) if len(true) else np.zeros((len(bands), 0), bool)
    settings = {"selectivities": [s for s in selectivities if s is not None], "attrs": list(attrs),
                "groupbys": groupbys, "max_cells": max_cells, "seed": seed}
    return GroupByWorkload(kind=kind, seed=seed, n_records=n, batches=tuple(batches), true=true, bands=bands,
                           membership=membership, settings=settings, n_attrs=n_attrs_a, groupby=gb_a,
                           target=target_a, where=tuple(wheres), where_share=np.array(shares),
                           grouped=tuple(grouped_names))


def seed004(data: Dataset, selectivities="0.01,0.05,0.1", attrs="1,2,3", groupbys: int = 4,
            max_cells: int = 200, seed: int = 0, records: Records | None = None) -> GroupByWorkload:
    """Fig. 13(a) / Fig. 14: GROUP BY 1..3 attributes WHERE S = v (AND a range), bands by selectivity."""
    sel = parse_list(selectivities, "selectivities", float, 1e-6, 1.0)
    att = parse_list(attrs, "attrs", int, 1, 8)
    return groupby_workload(data, sel, att, groupbys, max_cells, seed, True, "selectivity", "seed004", records)


def seed004_attrs(data: Dataset, attrs="3,4,5", groupbys: int = 4, max_cells: int = 200, seed: int = 0,
                  records: Records | None = None) -> GroupByWorkload:
    """Fig. 13(b): GROUP BY d attributes WHERE S = v, bands by d (the number of attributes in a cell's condition)."""
    att = parse_list(attrs, "attrs", int, 1, 8)
    return groupby_workload(data, [None], att, groupbys, max_cells, seed, False, "attrs", "seed004-attrs", records)


_SEED = Param("seed", "seed", "Random seed of the query generator (same seed, same queries).", 0,
              kind="int", low=0, high=2**31 - 1)
_CELLS = Param("max_cells", "cells", "Largest number of GROUP BY cells (count queries) kept per GROUP BY.", 200,
               kind="int", low=1, high=100_000, paper="ours: the paper keeps every cell")
_GROUPBYS = Param("groupbys", "G", "GROUP BY queries drawn per setting (selectivity x number of attributes).", 4,
                  kind="int", low=1, high=200, paper="seed 004 §9.1: not stated")

WORKLOADS = [
    WorkloadKind(
        "seed004", "GROUP BY cells at 1%, 5%, 10% selectivity (seed 004)", seed004, "groupbys",
        "SELECT QT₁..QTᵢ, count(*) WHERE S = v GROUP BY QT₁..QTᵢ with 1 to 3 random QI attributes; the WHERE "
        "selects about 1%, 5% or 10% of the table (S = v, plus a range such as age ≥ 50 or a value such as "
        "sex = Female on an attribute not grouped, when needed). Every non-empty cell of the answer is one "
        "count query.",
        params=(Param("selectivities", "s", "Shares of the table the WHERE clause selects, comma separated.",
                      "0.01,0.05,0.1", kind="text", paper="seed 004 §9.1: 1%, 5%, 10%"),
                Param("attrs", "i", "Numbers of grouped QI attributes, comma separated.", "1,2,3", kind="text",
                      paper="seed 004 §9.1: 1 to 3"),
                _GROUPBYS, _CELLS, _SEED),
        paper="seed 004 §9.1, Fig. 13(a)", order=40),
    WorkloadKind(
        "seed004-attrs", "GROUP BY cells on 3, 4, 5 attributes (seed 004 Fig. 13b)", seed004_attrs, "groupbys",
        "GROUP BY d random QI attributes WHERE S = v, for d = 3, 4, 5: every non-empty cell is a count query "
        "whose condition involves d attributes; errors are reported per d.",
        params=(Param("attrs", "d", "Numbers of attributes in the condition, comma separated.", "3,4,5",
                      kind="text", paper="seed 004 Fig. 13(b): 3, 4, 5"), _GROUPBYS, _CELLS, _SEED),
        paper="seed 004 §9.3, Fig. 13(b)", order=41),
]
