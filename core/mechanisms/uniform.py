"""Uniform perturbation (UP): retention p, or (rho1, rho2)-privacy -> gamma -> p.

Each record keeps its SA value with probability p; otherwise the value is
replaced by one drawn uniformly from the whole SA domain (possibly the same
value).  QI values are never changed.  This is k-ary randomized response
with epsilon_LDP = ln(gamma).

Guarantee (:meth:`Uniform.guarantee`): (rho1, rho2)-privacy (seed 002
eq. 6, after Evfimievski et al.): a value whose share of the table is at
most rho1 is believed with probability at most rho2 after seeing a record's
published value.  Checked on the release: the amplification
``gamma = (p + q)/q`` of the retention p and domain m it published must be at
most ``rho2 (1 - rho1) / (rho1 (1 - rho2))``.  Values more frequent than
rho1 are outside the definition; the verdict lists them with their largest
posterior (``outside``), as it does for SDR.

References
----------
seed 002 (Chaytor & Wang), eqs. (4), (6), (7); seed 001 Lemma 1;
MECHANISMS.md section 0.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from ..bounds.retention import gamma_from_rho, retention_from_gamma
from ..counting import QueryBatch
from .. import guarantee as G
from ..errors import ParameterError
from ..params import Param
from .. import rng as _rng
from ..engine.combos import Combos
from ..engine.protocol import Chunk, Plan
from ..release import Release
from ..table import Dataset
from .base import Mechanism, grid_counts, grid_select, observed, published_records

RHO1 = Param("rho1", "ρ₁", "Prior belief bound: values believed with at most this probability beforehand are protected.",
             1 / 13, low=0, high=1, closed="neither", step=0.005, safer="higher", paper="seed 002 §6.2: 1/13")
RHO2 = Param("rho2", "ρ₂", "Posterior belief bound: after seeing the release, the adversary's belief stays below this.",
             1 / 6, low=0, high=1, closed="neither", step=0.005, safer="lower", paper="seed 002 §6.2: 1/6 (L = 6)")


def check_rho(values: Mapping[str, Any], owner: str) -> None:
    if values["rho1"] >= values["rho2"]:
        raise ParameterError(
            f"{owner} needs rho1 < rho2 (a posterior bound above the prior); got rho1 = {values['rho1']:.4g} "
            f"and rho2 = {values['rho2']:.4g}."
        )


def up_parameters(p: float, m: int) -> dict[str, float]:
    """gamma, the transition entries and p for retention ``p`` over ``m`` values (seed 002 eq. 4)."""
    q = (1 - p) / m
    return {"p": p, "m": m, "gamma": (p + q) / q if q > 0 else float("inf"),
            "diagonal": p + q, "off_diagonal": q}


def posterior(share, gamma: float):
    """Largest posterior of a value with prior ``share`` under amplification ``gamma``: ``f g / (f g + 1 - f)``."""
    share = np.asarray(share, dtype=float)
    if not np.isfinite(gamma):
        return np.where(share > 0, 1.0, 0.0)
    return share * gamma / (share * gamma + 1 - share)


def rho_verdict(name: str, promise: str, data: Dataset, p: float, m: int, rho1: float, rho2: float,
                **extra) -> G.Verdict:
    """(rho1, rho2)-privacy of uniform perturbation with retention ``p`` over ``m`` values (UP and RP's UP part)."""
    got = up_parameters(p, m)["gamma"]
    allowed = gamma_from_rho(rho1, rho2)
    reached = float(posterior(rho1, got))
    figures = {"p": float(p), "gamma": float(got), "gamma_allowed": float(allowed),
               "posterior_at_rho1": reached, "rho2": float(rho2)}
    fail = None
    if got > allowed * (1 + 1e-9):
        fail = G.failure(f"posterior ≤ ρ₂ = {rho2:.4g} for a prior ρ₁ = {rho1:.4g}", reached, rho2,
                         data.n, data.n, "records (all randomised with this p)")
    shares = data.sa_counts / data.n
    out = (shares > rho1 + 1e-12) & (data.sa_counts > 0)
    outside = None
    if out.any():
        worst = float(posterior(shares[out], got).max())
        outside = {"values": [str(v) for v in data.sa_labels[out]], "records": int(data.sa_counts[out].sum()),
                   "of": data.n, "largest_posterior": worst,
                   "why": (f"for values with a share ≤ ρ₁ = {rho1:.4g} only: {int(out.sum())} value(s) with "
                           f"{int(data.sa_counts[out].sum()):,} records are more frequent than ρ₁, so (ρ₁, ρ₂)-privacy "
                           f"says nothing about them (posterior up to {worst:.3g})")}
    return G.judge(name, promise, {**figures, **extra}, [fail], outside=outside)


def perturb(sa: np.ndarray, p: float, m: int, rng: np.random.Generator) -> np.ndarray:
    """Keep each value with probability p, else draw uniformly from 0..m-1 (vectorised, numpy generator).

    The releases use :func:`perturb_keyed` (draws keyed by record); this
    form stays for simulations that draw many independent releases.
    """
    keep = rng.random(len(sa)) < p
    return np.where(keep, sa, rng.integers(0, m, size=len(sa))).astype(sa.dtype)


def perturb_keyed(sa: np.ndarray, p, m, seed: int, purpose: str, start: int) -> np.ndarray:
    """UP's draw for records ``start .. start + len(sa) - 1``: keep with probability p, else uniform on 0..m-1.

    Two words of the record's block of ``purpose`` (:mod:`core.rng`): the
    first decides keep (``u < p``), the second the replacement value
    (``floor(u m)``, possibly the record's own), so the draw of a record
    does not depend on the batch it is in.  ``p`` and ``m`` may be one per
    record (SDR's sub-tables, RP's sampled records).
    """
    sa = np.asarray(sa)
    u = _rng.uniforms(seed, purpose, start, len(sa), 2)
    m = np.asarray(m, dtype=np.float64)
    other = np.minimum(np.floor(u[:, 1] * m), m - 1).astype(np.int64)
    return np.where(u[:, 0] < p, sa, other).astype(sa.dtype)


class UniformPlan(Plan):
    """UP's plan: retention ``p`` over ``m`` values; no ranks (per-record draws of purpose ``"up"`` only)."""

    def __init__(self, seed: int, sa: str, p: float, m: int, n: int, **fields):
        super().__init__(seed=seed, **fields)
        self.sa, self.p, self.m, self.n = sa, float(p), int(m), int(n)

    def apply(self, chunk: Chunk) -> dict[str, np.ndarray]:
        return {self.sa: perturb_keyed(chunk.sa, self.p, self.m, self.seed, "up", chunk.start)}

    def tally(self, chunk: Chunk, out) -> dict[str, int]:
        return {"unchanged": int(np.count_nonzero(out[self.sa] == chunk.sa))}

    def finish(self, totals) -> dict[str, Any]:
        return {"share_unchanged": totals.get("unchanged", 0) / self.n if self.n else 0.0}


def mle(observed_count: np.ndarray, set_size: np.ndarray, selected: np.ndarray, p: float, m: int) -> np.ndarray:
    """Unbiased estimate of the true count of the selected values in a set of records.

    ``F'_x = (O_x/|S| - (1-p)/m) / p`` per value (seed 001 Lemma 1, seed 002
    eq. 7), times |S|, summed over the ``selected`` values.  May be negative;
    callers report it as is.
    """
    return (observed_count - selected * set_size * (1 - p) / m) / p


def grid_mle(release: Release, conditions: np.ndarray) -> np.ndarray:
    """(C, m): UP's estimate of each (condition, SA value) of the risk's grid (:meth:`Mechanism.estimate_grid`).

    :func:`mle` of each value's published count with the condition's whole
    published count as the set size and one selected value, as
    :meth:`Uniform.estimate` computes it query by query.
    """
    counts = grid_counts(published_records(release), conditions)
    return mle(grid_select(counts), counts.sum(axis=1)[:, None], 1, release.state["p"], release.state["m"])


class Uniform(Mechanism):
    name = "uniform"
    title = "Uniform perturbation (UP)"
    paper = "seeds 001 and 002 (retention replacement, Agrawal et al.)"
    summary = ("Every record keeps its sensitive value with probability p and otherwise gets a value drawn "
               "uniformly from the whole domain. Counts are reconstructed with an unbiased estimator. "
               "Set p directly, or let (ρ₁, ρ₂)-privacy fix the largest p allowed.")
    order = 10
    params = (
        Param("p", "p", "Retention: chance a record keeps its true value. Empty = the largest p that (ρ₁, ρ₂)-privacy allows.",
              None, low=0, high=1, closed="right", optional=True, step=0.01, safer="lower",
              paper="derived from ρ₁, ρ₂ (seed 002 eq. 4, 6)"),
        RHO1,
        RHO2,
    )
    main_param = "p"
    sweep = (0.1, 0.2, 0.3, 0.46, 0.6, 0.8)
    bounds = ("retention",)

    def check_params(self, values: dict[str, Any]) -> None:
        if values["p"] is None:
            check_rho(values, self.name)

    def derived(self, data: Dataset, values: Mapping[str, Any]) -> dict[str, Any]:
        m = data.m
        if values["p"] is None:
            gamma = gamma_from_rho(values["rho1"], values["rho2"])
            p = retention_from_gamma(gamma, m)
        else:
            p = values["p"]
        out = up_parameters(p, m)
        # the smallest rho2 this p guarantees for the given rho1 (seed 002 eq. 6 solved for rho2)
        g, r1 = out["gamma"], values["rho1"]
        out["rho2_guaranteed"] = g * r1 / (1 - r1 + g * r1) if np.isfinite(g) else 1.0
        return out

    planned = True

    def plan(self, summary: Combos, values: Mapping[str, Any], seed: int) -> UniformPlan:
        """Every record keeps its value with probability p, else a uniform one (:func:`perturb_keyed`, purpose ``"up"``).

        ``privacy.share_unchanged`` is tallied over the records.
        """
        d = self.derived(summary, values)
        p, m = d["p"], summary.m
        return UniformPlan(
            seed, summary.sa_name, p, m, summary.n,
            labels={summary.sa_name: summary.sa_labels},
            published={"p": p, "m": m, "gamma": d["gamma"], "domain": [str(v) for v in summary.sa_labels]},
            privacy={"gamma": d["gamma"], "rho1": values["rho1"], "rho2_guaranteed": d["rho2_guaranteed"]},
            state={"p": p, "m": m},
        )

    def estimate(self, release: Release, batch: QueryBatch, rng: np.random.Generator) -> np.ndarray:
        o, size = observed(release, batch)
        return mle(o, size, batch.sa.sum(axis=1), release.state["p"], release.state["m"])

    def estimate_grid(self, release: Release, conditions: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`estimate` of the grid, each condition counted once (one value selected: ``selected`` = 1)."""
        return grid_mle(release, conditions)

    # ---------------------------------------------------------- guarantee
    def promise(self, values: Mapping[str, Any]) -> str:
        return (f"(ρ₁, ρ₂)-privacy with ρ₁ = {values['rho1']:.4g}, ρ₂ = {values['rho2']:.4g}: a value held by at "
                f"most a share ρ₁ of the table is believed with probability at most ρ₂ after seeing a record's "
                f"published value (seed 002 eq. 6).")

    def guarantee(self, data: Dataset, values: Mapping[str, Any], release: Release) -> G.Verdict:
        """(rho1, rho2)-privacy of the published p and m (module docstring)."""
        pub = release.published
        return rho_verdict(self.name, self.promise(values), data, float(pub["p"]), int(pub["m"]),
                           values["rho1"], values["rho2"])

    def nearest(self, data: Dataset, values: Mapping[str, Any], verdict: G.Verdict):
        """The largest p (rho1, rho2)-privacy allows, rounded down to 4 decimals, then p = auto (exactly it)."""
        if values["p"] is None or not values["rho1"] < values["rho2"]:
            return
        best = retention_from_gamma(gamma_from_rho(values["rho1"], values["rho2"]), data.m)
        yield {"p": float(np.floor(best * 1e4) / 1e4)}
        yield {"p": None}


MECHANISMS = [Uniform()]
