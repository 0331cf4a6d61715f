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
  comparable to our unbiased MLE).
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

    # same reports through our estimator must give the same numbers
    from core.release import CodedTable, Release

    release = mechanisms.sanitize(data, "uniform", {"p": p}, seed=0)
    table = CodedTable(columns={**{c: data.qi_codes[j] for j, c in enumerate(data.qi)}, data.sa: reports.astype(np.int32)},
                       labels={**{c: data.qi_labels[j] for j, c in enumerate(data.qi)}, data.sa: data.sa_labels})
    same = Release(**{**release.__dict__, "tables": {"release": table}, "state": dict(release.state)})
    ours = mechanisms.estimate(same, workload)[picks]
    agree = bool(np.allclose(ours, theirs, rtol=1e-9, atol=1e-6))
    return {"peer": "multi-freq-ldpy GRR (k-RR)", "mechanism": "uniform", "sanitize_s": t_san,
            "workload_s": t_q_full, "workload_note": f"timed on {n_q} queries, scaled to {len(workload)}",
            "estimates_agree": agree}


PEERS: dict[str, Callable[[Dataset, Workload, int], dict[str, Any]]] = {
    "uniform": grr_peer,
}
