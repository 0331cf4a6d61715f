"""One empirical risk and utility for every mechanism, measured from the release only.

The papers promise different things (rho1-rho2, small-sum error,
(lambda, delta), F'-privacy, alpha/beta, epsilon).  To put mechanisms on one
map, each release is attacked the same way, using only what is published
(for the interactive Laplace mechanism: the curator's noisy answers):

* **inference**: for each record the adversary estimates the SA
  distribution of the record's micro group (the records sharing all its QI
  values) with the mechanism's own estimator, and guesses the value with the
  largest estimate (ties: the globally most frequent value).  Scored as the
  share of records guessed right (Cormode's empirical privacy, cited in seed
  000 section 7) and as the *lift* over always guessing the global mode.
  Publishing the raw table gives the Bayes-optimal accuracy of the original
  (:func:`bayes_accuracy`).  Records are sampled (``records``) so the
  measure stays fast on 500K rows; the sample is the same for every
  mechanism and setting.
* **small-sum disclosure**: the share of small-count queries (true count
  1..10) answered within 30% relative error (lower = more private; seed 000
  wants the opposite of accuracy there).
* **presence**: the largest probability that a given person is in the table
  at all, where the mechanism publishes groups (seed 004's measure,
  ``privacy["max_presence"]``); 1 where records are published as they are.

Utility: the mean relative error of the large-count queries (all selectivity
bands pooled), and of the small ones for contrast.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from . import mechanisms
from .counting import QueryBatch
from .errors import WorkbenchError
from .evaluate import Evaluation, evaluate_release
from .release import Release, jsonable
from .table import Dataset
from .workload import Workload

SMALL_SUM_TOLERANCE = 0.3
DEFAULT_RECORDS = 2000


@dataclass(frozen=True, eq=False)
class Targets:
    """Micro groups of a sample of records, and what the original says about them."""

    values: np.ndarray  # (G, k) QI codes of each sampled micro group
    group_of: np.ndarray  # (R,) group index of each sampled record
    truth: np.ndarray  # (R,) true SA code of each sampled record
    mode_share: float  # share of the table holding the globally most frequent value
    mode: int  # code of that value


def targets(data: Dataset, records: int = DEFAULT_RECORDS, seed: int = 0) -> Targets:
    """A fixed sample of records (without replacement) and their micro groups."""
    rng = np.random.default_rng([seed, 0xA77AC])
    n = data.n
    pick = np.sort(rng.choice(n, size=min(records, n), replace=False))
    qi = np.stack([c[pick] for c in data.qi_codes], axis=1)
    values, group_of = np.unique(qi, axis=0, return_inverse=True)
    mode = int(np.argmax(data.sa_counts))
    return Targets(values=values, group_of=group_of.ravel(), truth=data.sa_codes[pick],
                   mode_share=float(data.sa_counts[mode] / n), mode=mode)


def group_batches(data: Dataset, t: Targets) -> list[QueryBatch]:
    """One query per (sampled micro group, SA value): ``QI = group's values AND SA = x``."""
    g, m = len(t.values), data.m
    values = np.repeat(t.values, m, axis=0)
    sa = np.tile(np.eye(m, dtype=bool), (g, 1))
    return [QueryBatch(attrs=tuple(range(len(data.qi))), values=values.astype(np.int64), sa=sa)]


def guesses(estimates: np.ndarray, t: Targets, m: int) -> np.ndarray:
    """The adversary's guess per sampled record: the value with the largest estimated count in its group.

    Ties (e.g. no information at all) go to the global mode, then to the lowest code.
    """
    est = estimates.reshape(len(t.values), m)
    best = est.max(axis=1, keepdims=True)
    tied = np.isclose(est, best, rtol=1e-9, atol=1e-9)
    guess = np.argmax(tied, axis=1)
    guess = np.where(tied[:, t.mode], t.mode, guess)
    return guess[t.group_of]


def bayes_accuracy(data: Dataset, t: Targets) -> float:
    """Accuracy of the best guess from the original table itself (the raw release's score)."""
    from .workload import data_records

    est = data_records(data).counts(group_batches(data, t)[0])
    est = np.einsum("qm,qm->q", est, group_batches(data, t)[0].sa.astype(float))
    return float(np.mean(guesses(est, t, data.m) == t.truth))


@dataclass(frozen=True)
class Point:
    """A mechanism at one setting, measured."""

    mechanism: str
    params: Mapping[str, Any]
    seed: int
    inference_accuracy: float
    inference_lift: float
    small_sum_disclosure: float | None
    presence: float
    large_error: float | None
    small_error: float | None
    bands: list = field(default_factory=list)
    #: the release's verdict on its mechanism's own guarantee (core.guarantee outcome) and whether it is plain
    verdict: str | None = None
    verdict_plain: bool | None = None

    @property
    def risk(self) -> float:
        return self.inference_lift

    @property
    def utility(self) -> float | None:
        return self.large_error

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["risk"] = self.risk
        out["utility"] = self.utility
        return jsonable(out)


def measure_release(data: Dataset, release: Release, workload: Workload, t: Targets,
                    evaluation: Evaluation | None = None) -> Point:
    """Risk and utility of one release against the sampled records and a seed-000 workload."""
    est = mechanisms.estimate(release, group_batches(data, t))
    guess = guesses(est, t, data.m)
    accuracy = float(np.mean(guess == t.truth))
    ev = evaluation or evaluate_release(release, workload)
    err = ev.relative_error
    small = workload.membership[0] if workload.bands and workload.bands[0].unit == "count" else None
    large = np.zeros(len(workload), bool)
    for band, member in zip(workload.bands, workload.membership):
        if band.unit == "selectivity":
            large |= member
    disclosure = small_error = large_error = None
    if small is not None and small.any():
        disclosure = float(np.mean(err[small] <= SMALL_SUM_TOLERANCE))
        small_error = float(np.nanmean(err[small]))
    if large.any():
        large_error = float(np.nanmean(err[large]))
    presence = float(release.privacy.get("max_presence", 1.0)) if isinstance(release.privacy, Mapping) else 1.0
    return Point(
        mechanism=release.mechanism,
        params={k: v for k, v in release.source.get("raw_params", {}).items()},
        seed=release.seed,
        inference_accuracy=accuracy,
        inference_lift=accuracy / t.mode_share if t.mode_share else float("nan"),
        small_sum_disclosure=disclosure,
        presence=presence,
        large_error=large_error,
        small_error=small_error,
        bands=ev.bands(),
        verdict=release.verdict.outcome if release.verdict is not None else None,
        verdict_plain=release.verdict.plain if release.verdict is not None else None,
    )


def setting_text(params: Mapping[str, Any]) -> str:
    """A setting as the pages and the CLI write it: ``rho2 = 1/6, delta = 0.05`` (``no parameters`` if empty)."""
    from .params import format_value

    return ", ".join(f"{k} = {format_value(v)}" for k, v in params.items()) or "no parameters"


def measure(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None, workload: Workload, t: Targets,
            seed: int = 0) -> Point:
    release = mechanisms.sanitize(data, mechanism, raw, seed)
    return measure_release(data, release, workload, t)


def sweep_jobs(names: Sequence[str], base: Mapping[str, Mapping[str, Any]] | None = None,
               sweeps: Mapping[str, Sequence[Any]] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The settings :func:`sweep_points` measures, in its order: ``(mechanism, raw parameters)``.

    Each mechanism along its main parameter's sweep (``sweeps[name]`` or
    its declared one) over ``base[name]``, or once at ``base[name]`` if it
    has none.  A page that measures each setting through its own cache
    (the Compare page's report) measures the same list.
    """
    jobs = []
    for name in names:
        mech = mechanisms.get(name)
        values = (sweeps or {}).get(name, mech.sweep)
        if mech.main_param and values:
            jobs += [(name, {**(base or {}).get(name, {}), mech.main_param: v}) for v in values]
        else:
            jobs.append((name, dict((base or {}).get(name, {}))))
    return jobs


def sweep_points(data: Dataset, names: Sequence[str], workload: Workload, t: Targets, seed: int = 0,
                 base: Mapping[str, Mapping[str, Any]] | None = None,
                 sweeps: Mapping[str, Sequence[Any]] | None = None,
                 progress: Callable[[float, str], None] | None = None) -> tuple[list[Point], list[str]]:
    """Every mechanism along its main parameter's sweep (or its single setting if it has none).

    Returns the measured points and one sentence per setting that could not
    be sanitized (not eligible on this table).
    """
    jobs = sweep_jobs(names, base, sweeps)
    points, skipped = [], []
    for i, (name, raw) in enumerate(jobs):
        if progress:
            progress(i / len(jobs), f"{mechanisms.get(name).title}: {raw}")
        try:
            points.append(measure(data, name, raw, workload, t, seed))
        except WorkbenchError as exc:
            skipped.append(f"{mechanisms.get(name).title} at {setting_text(raw)}: {exc}")
    if progress:
        progress(1.0, "done")
    return points, skipped


def pareto(points: Sequence[Point], risk: str = "inference_lift", utility: str = "large_error") -> list[int]:
    """Indices of the points no other point beats on both risk and error (lower is better on both)."""
    xs = [getattr(p, risk) for p in points]
    ys = [getattr(p, utility) for p in points]
    front = []
    for i, (x, y) in enumerate(zip(xs, ys)):
        if x is None or y is None or not np.isfinite(x) or not np.isfinite(y):
            continue
        dominated = any(
            xj is not None and yj is not None and xj <= x and yj <= y and (xj < x or yj < y)
            for j, (xj, yj) in enumerate(zip(xs, ys)) if j != i
        )
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: xs[i])
