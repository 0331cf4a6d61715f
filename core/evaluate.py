"""Empirical query error: run a workload against a release, summarise by band.

Metric (seed 000 §6.1, seed 002 §6.1): relative error ``|a - a'| / a`` per
query with true answer ``a > 0``; the mean per band.  Estimates are used as
the estimators return them (possibly negative for unbiased reconstruction,
MECHANISMS.md section 0); clipping is for display only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import mechanisms
from .release import Release, jsonable
from .table import Dataset
from .workload import JointWorkload, Workload
from .workloads import WORKLOADS, WorkloadKind, make_workload  # noqa: F401 (re-exported)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Estimates of every query of a workload from one release."""

    mechanism: str
    params: Mapping[str, Any]
    seed: int
    workload: Workload
    estimates: np.ndarray

    @property
    def true(self) -> np.ndarray:
        return self.workload.true

    @property
    def relative_error(self) -> np.ndarray:
        """``|a - a'| / a`` per query; NaN where the true answer is 0."""
        true = self.true
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(true > 0, np.abs(true - self.estimates) / np.where(true > 0, true, 1), np.nan)

    def bands(self) -> list[dict[str, Any]]:
        """Mean relative error per band (the CLI's ``bands``).

        Each band carries ``queries`` (those with a true answer above 0) and
        ``thin``: fewer than :data:`core.workload.THIN_QUERIES` (30)
        queries, too few for its mean to be trusted.
        """
        from .workload import THIN_QUERIES

        err = self.relative_error
        out = []
        for band, member in zip(self.workload.bands, self.workload.membership):
            sel = member & np.isfinite(err)
            out.append({
                "name": band.name,
                "unit": band.unit,
                "lo": band.lo,
                "hi": band.hi,
                "queries": int(sel.sum()),
                "thin": bool(sel.sum() < THIN_QUERIES),
                "mean_relative_error": float(err[sel].mean()) if sel.any() else None,
            })
        return out

    def mse(self) -> float:
        return float(np.mean((self.estimates - self.true) ** 2)) if len(self.true) else float("nan")

    def to_json(self) -> dict[str, Any]:
        return jsonable({
            "mechanism": self.mechanism,
            "params": dict(self.params),
            "seed": self.seed,
            "workload": {"kind": self.workload.kind, **self.workload.settings, "queries_total": len(self.workload)},
            "bands": self.bands(),
        })


def evaluate_release(release: Release, workload: Workload) -> Evaluation:
    """Estimate every query of ``workload`` from ``release`` (joint queries: :func:`estimate_joint`)."""
    if isinstance(workload, JointWorkload):
        est = estimate_joint(release, workload)
    else:
        est = mechanisms.estimate(release, workload)
    return Evaluation(release.mechanism, dict(release.params), release.seed, workload, est)


def estimate_joint(release: Release, workload: JointWorkload) -> np.ndarray:
    """Estimates of joint queries ``P AND SA = a AND SA2 = b`` from a release that publishes both attributes.

    Only SPLU-Gen sanitized with ``sa2`` = the workload's second attribute
    publishes the pair; its estimates are the 8-state reconstruction of seed
    000 §5.2 (:func:`core.mechanisms.splu.estimate_two_many`).  Any other
    release publishes one sensitive attribute (or none beside the QIs) and is
    refused in one sentence (:class:`core.errors.NotEligible`).
    """
    from .errors import NotEligible
    from .mechanisms.splu import estimate_two_many

    title = mechanisms.get(release.mechanism).title
    second = workload.second
    if release.mechanism != "splu":
        raise NotEligible(f"{title} publishes one sensitive attribute; joint queries on '{release.source['sensitive']}' "
                          f"and '{second}' need SPLU-Gen with sa2 = {second} (seed 000 §5.2).")
    if release.state.get("sa2") != second:
        have = release.state.get("sa2")
        raise NotEligible(f"This SPLU-Gen release randomises {'no second attribute' if not have else repr(have)}; "
                          f"joint queries on '{second}' need sa2 = {second}.")
    from .mechanisms.base import share_groups

    share_groups(release, workload.groups)  # the pairs counted on the table's QI combinations (as estimate does)
    parts = estimate_two_many(release, workload.batches,
                              [workload.sa2_of(b) for b in range(len(workload.batches))])
    return np.concatenate(parts) if parts else np.zeros(0)


def evaluate(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None, workload: Workload,
             seed: int | None = None) -> Evaluation:
    """Sanitize ``data`` with ``mechanism`` and estimate every query of ``workload``."""
    release = mechanisms.sanitize(data, mechanism, raw, seed)
    return evaluate_release(release, workload)


def sweep(data: Dataset, mechanism: str, param: str, values: Sequence[Any], workload: Workload,
          base: Mapping[str, Any] | None = None, seed: int = 0,
          progress: Callable[[float], None] | None = None) -> list[Evaluation | str]:
    """Evaluate ``mechanism`` at each value of ``param``; an ineligible setting gives its message instead."""
    from .errors import WorkbenchError

    out: list[Evaluation | str] = []
    for i, value in enumerate(values):
        raw = {**(base or {}), param: value}
        try:
            out.append(evaluate(data, mechanism, raw, workload, seed))
        except WorkbenchError as exc:
            out.append(str(exc))
        if progress:
            progress((i + 1) / len(values))
    return out
