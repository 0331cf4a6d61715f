"""Peer implementations run on the same data as ours, for the benchmark table.

Each peer is a function ``(data, workload, repeat) -> dict`` returning the
peer's timings (``sanitize_s``, ``workload_s``) and, where the outputs are
comparable, a check that both libraries compute the same thing.  A peer
whose package is not installed is reported as missing, never faked.

Peers:

* ``uniform`` vs multi-freq-ldpy's GRR (k-RR): UP with retention p is k-RR
  with epsilon = ln(gamma) (MECHANISMS.md section 0).  Sanitize = every
  record through ``GRR_Client``; a count query = the matching reports
  through ``GRR_Aggregator_MI``-style matrix inversion (their ``MI``
  without the clipping/renormalising post-processing, so the numbers are
  comparable to our unbiased MLE).  Their aggregator counts the reports
  in a Python loop; ``workload_numpy_s`` times the same query-by-query
  approach with the count in numpy (``np.bincount`` over the matching
  reports), a stronger baseline: what is then compared is answering each
  query with its own pass over the records against our one indexed pass
  for the whole workload.
* ``mondrian`` vs anonypy's ``Mondrian.partition`` (same k and l, numeric
  QIs as numbers, categorical ones as their integer codes, i.e. the ordered
  codes our Mondrian cuts on).  anonypy has no estimator, so only the
  partitioning is timed and the two partitions are compared record by
  record.  On tables above ``MONDRIAN_ROW_CAP`` rows both run on the first
  rows only (anonypy's pandas loop would take minutes).  pycanon (a
  k-anonymity / l-diversity checker) is not used: it pins old numpy and
  pandas and does not install beside ours.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from core import mechanisms

from core.table import Dataset
from core.workload import Workload

PEER_QUERY_CAP = 500  # peers answer queries one mask at a time: time a sample and scale


def _median_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def grr_peer(data: Dataset, workload: Workload, repeat: int) -> dict[str, Any]:
    try:
        from multi_freq_ldpy.pure_frequency_oracles.GRR import GRR_Client
    except ImportError:
        return {"peer": "multi-freq-ldpy GRR", "missing": "pip install multi-freq-ldpy"}
    p = 0.5
    m = data.m
    gamma = 1 + m * p / (1 - p)
    eps = float(np.log(gamma))
    sa = data.sa_codes.astype(np.int64)
    GRR_Client(int(sa[0]), m, eps)  # compile outside the timing

    def sanitize():
        return np.fromiter((GRR_Client(int(x), m, eps) for x in sa), dtype=np.int64, count=len(sa))

    t_san, reports = _median_time(sanitize, 1 if len(sa) > 100_000 else repeat)

    # their estimator, one query at a time: mask the matching reports, count, invert
    p_grr = np.exp(eps) / (np.exp(eps) + m - 1)
    q_grr = (1 - p_grr) / (m - 1)
    qi = data.qi_codes
    n_q = min(len(workload), PEER_QUERY_CAP)
    picks = np.linspace(0, len(workload) - 1, n_q).astype(int)

    def answer():
        out = np.empty(n_q)
        for k, i in enumerate(picks):
            batch, r = workload.locate(int(i))
            mask = np.ones(len(sa), dtype=bool)
            for j, a in enumerate(batch.attrs):
                mask &= qi[a] == batch.values[r, j]
            rep = reports[mask]
            counts = np.zeros(m)
            for x in rep:  # as in their GRR_Aggregator_MI
                counts[x] += 1
            est = (counts - len(rep) * q_grr) / (p_grr - q_grr)
            out[k] = est[batch.sa[r]].sum()
        return out

    t_q, theirs = _median_time(answer, 1)
    t_q_full = t_q * len(workload) / n_q

    # a stronger baseline: the same query-by-query approach with the report count in numpy
    # (np.bincount instead of their Python loop), so the comparison is not only about that loop
    def answer_numpy():
        out = np.empty(n_q)
        for k, i in enumerate(picks):
            batch, r = workload.locate(int(i))
            mask = np.ones(len(sa), dtype=bool)
            for j, a in enumerate(batch.attrs):
                mask &= qi[a] == batch.values[r, j]
            counts = np.bincount(reports[mask], minlength=m)
            est = (counts - mask.sum() * q_grr) / (p_grr - q_grr)
            out[k] = est[batch.sa[r]].sum()
        return out

    t_np, theirs_np = _median_time(answer_numpy, repeat)
    t_np_full = t_np * len(workload) / n_q

    # same reports through our estimator must give the same numbers
    from core.release import CodedTable, Release

    release = mechanisms.sanitize(data, "uniform", {"p": p}, seed=0)
    table = CodedTable(columns={**{c: data.qi_codes[j] for j, c in enumerate(data.qi)}, data.sa: reports.astype(np.int32)},
                       labels={**{c: data.qi_labels[j] for j, c in enumerate(data.qi)}, data.sa: data.sa_labels})
    same = Release(**{**release.__dict__, "tables": {"release": table}, "state": dict(release.state)})
    ours = mechanisms.estimate(same, workload)[picks]
    agree = bool(np.allclose(ours, theirs, rtol=1e-9, atol=1e-6) and np.allclose(ours, theirs_np, rtol=1e-9,
                                                                                    atol=1e-6))
    return {"peer": "multi-freq-ldpy GRR (k-RR)", "mechanism": "uniform", "sanitize_s": t_san,
            "workload_s": t_q_full, "workload_note": f"timed on {n_q} queries, scaled to {len(workload)}",
            "workload_numpy_s": t_np_full, "estimates_agree": agree}


MONDRIAN_ROW_CAP = 100_000


def anonypy_mondrian_peer(data: Dataset, workload: Workload, repeat: int) -> dict[str, Any]:
    try:
        from anonypy.mondrian import Mondrian as AnonypyMondrian
    except ImportError:
        return {"peer": "anonypy Mondrian", "missing": "pip install anonypy"}
    import pandas as pd

    from core.mechanisms.mondrian import mondrian_partition, required_l

    mech = mechanisms.get("mondrian")
    values = mech.resolve(None)
    k, l = int(values["k"]), required_l(values["beta"])
    n = min(data.n, MONDRIAN_ROW_CAP)
    codes = [c[:n] for c in data.qi_codes]
    sa = data.sa_codes[:n]
    frame = pd.DataFrame({q: (data.qi_labels[j][codes[j]].astype(float) if data.qi_numeric[j] else codes[j])
                          for j, q in enumerate(data.qi)})
    frame["sa"] = sa
    positions = [np.asarray(lab, float) if num else np.arange(len(lab), dtype=float)
                 for lab, num in zip(data.qi_labels, data.qi_numeric)]
    t_theirs, parts = _median_time(lambda: AnonypyMondrian(frame, list(data.qi), "sa").partition(k=k, l=l),
                                   1 if n > 20_000 else repeat)
    t_ours, ours = _median_time(lambda: mondrian_partition(codes, positions, sa, data.m, k, l), repeat)
    theirs = sorted(tuple(sorted(np.asarray(p).tolist())) for p in parts)
    order = np.argsort(ours.group, kind="stable")
    bounds = np.searchsorted(ours.group[order], np.arange(ours.n_groups + 1))
    mine = sorted(tuple(order[a:b].tolist()) for a, b in zip(bounds[:-1], bounds[1:]))
    note = f"partition only, k = {k}, l = {l}" + (f", first {n:,} rows" if n < data.n else "")
    return {"peer": f"anonypy Mondrian ({note})", "mechanism": "mondrian", "sanitize_s": t_theirs,
            "ours_sanitize_s": t_ours, "workload_s": None, "groups": len(theirs),
            "estimates_agree": mine == theirs, "agree_label": "same partition"}


PEERS: dict[str, Callable[[Dataset, Workload, int], dict[str, Any]]] = {
    "uniform": grr_peer,
    "mondrian": anonypy_mondrian_peer,
}
