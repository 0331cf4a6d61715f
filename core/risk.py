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

**The risk scale a steward signs** (issue 22, :func:`assess`).  What a release
teaches about the *population* is also true of people who are not in the
table (seed 003's point: that is utility, not a privacy loss); what it teaches
about *the person* is not.  So every release is attacked the same way against
a control set:

* the table is split with ``split_seed`` into a training part (80%) and a
  control part (20%); a *measurement release* is built from the training part
  with the same mechanism, parameters and seed (the release that is published
  is still built from the whole table);
* ``attacks`` training records and ``attacks`` control records are sampled
  (seeded); an attacker who knows each target's QIs guesses its SA from the
  measurement release, in two ways: **mechanism** (the mechanism's own
  estimator of the target's micro group SA distribution, the guess its
  largest value: the attacker who knows the mechanism) and **records** (the
  SA of the nearest published record on the QIs, Gower distance, ties broken
  at random: the method of anonymeter, Giomi et al., PETS 2023, for an
  attacker who reads only the published rows; releases that publish no
  records per person have no such attacker);
* risk = (training success - control success) / (1 - control success), with
  anonymeter's 95% interval (Wilson score rates, error propagated), clipped
  to [0, 1]; the figure signed is the attacker with the higher risk;
* the baseline is a guess drawn from the prior (the SA distribution the
  measurement release estimates); it shows what guessing alone achieves;
* **singling out** (:mod:`core.singling_out`, anonymeter's
  SinglingOutEvaluator): predicates on the QIs built from the measurement
  release's per-person rows, each isolating one published row, scored by how
  many isolate exactly one person of the training part vs of the control
  part; "not applicable" where the release has no row per person.  Reported
  beside the signed figure, not folded into it (:class:`RiskAssessment`).
"""

from __future__ import annotations

import hashlib
import math
import threading
import weakref
from collections import OrderedDict
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from . import mechanisms
from .counting import QueryBatch, unique_rows
from .errors import NotEligible, ParameterError, WorkbenchError
from .engine.combos import Combos
from .evaluate import Evaluation, evaluate_release
from .mechanisms.base import grid_batch, grid_counts, grid_select, share_groups
from .rates import Rate, residual  # noqa: F401  (anonymeter's rates, shared with core.singling_out)
from .release import Release, jsonable
from .table import Dataset, subset
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
    values, group_of = unique_rows(qi)
    mode = int(np.argmax(data.sa_counts))
    return Targets(values=values, group_of=group_of.ravel(), truth=data.sa_codes[pick],
                   mode_share=float(data.sa_counts[mode] / n), mode=mode)


def group_batches(data: Dataset, t: Targets) -> list[QueryBatch]:
    """One query per (sampled micro group, SA value): ``QI = group's values AND SA = x``.

    What the attacks ask, as queries; they are answered as a grid instead
    (:func:`core.mechanisms.estimate_grid`: the same numbers, each group
    counted once), since this batch holds ``G * m * m`` counts once answered.
    """
    return [grid_batch(t.values, data.m)]


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

    est = grid_select(grid_counts(data_records(data), t.values))  # the table's own counts, each group once
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
    #: the risk scale (:func:`assess`, with :data:`MAP_ATTACKS` attacks): added risk, its 95% interval, the
    #: attacker it is signed by and that attacker's success on training and control records; None when the
    #: measurement release (80% of the table) cannot be made
    added_risk: float | None = None
    risk_low: float | None = None
    risk_high: float | None = None
    risk_attacker: str | None = None
    train_success: float | None = None
    control_success: float | None = None

    @property
    def risk(self) -> float:
        """The map's risk: the added risk of :func:`assess` (the inference lift for a point measured without it)."""
        return self.added_risk if self.added_risk is not None else self.inference_lift

    @property
    def utility(self) -> float | None:
        return self.large_error

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["risk"] = self.risk
        out["utility"] = self.utility
        return jsonable(out)


#: attacks per attacker of the map's risk measurement (fewer than :data:`DEFAULT_ATTACKS`: a map measures dozens
#: of settings; the intervals say how much that costs in precision)
MAP_ATTACKS = 500


def measure_release(data: Dataset, release: Release, workload: Workload, t: Targets,
                    evaluation: Evaluation | None = None, attacks: int | None = MAP_ATTACKS) -> Point:
    """Risk and utility of one release against the sampled records and a seed-000 workload.

    With ``attacks`` (default :data:`MAP_ATTACKS`; None: skip) the release's
    setting is also assessed on the risk scale (:func:`assess`, split seed
    :data:`DEFAULT_SPLIT_SEED`): one more sanitization, of 80% of the table.
    """
    share_groups(release, workload.groups)  # every estimate below counts on the table's QI combinations
    est = mechanisms.estimate_grid(release, t.values, data.m)
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
        **_scale(data, release, attacks),
    )


def _scale(data: Dataset, release: Release, attacks: int | None) -> dict[str, Any]:
    """The risk-scale fields of a :class:`Point` (empty when not asked or the measurement cannot be made)."""
    if attacks is None:
        return {}
    try:
        a = assess(data, release.mechanism, release.source.get("raw_params", {}), release.seed, attacks=attacks,
                   singling=False)
    except WorkbenchError:
        return {}
    s = a.signed
    return {"added_risk": s.risk, "risk_low": s.low, "risk_high": s.high, "risk_attacker": s.attacker,
            "train_success": s.train.share, "control_success": s.control.share}


def setting_text(params: Mapping[str, Any]) -> str:
    """A setting as the pages and the CLI write it: ``rho2 = 1/6, delta = 0.05`` (``no parameters`` if empty)."""
    from .params import format_value

    return ", ".join(f"{k} = {format_value(v)}" for k, v in params.items()) or "no parameters"


def measure(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None, workload: Workload, t: Targets,
            seed: int = 0, attacks: int | None = MAP_ATTACKS) -> Point:
    release = mechanisms.sanitize(data, mechanism, raw, seed)
    return measure_release(data, release, workload, t, attacks=attacks)


def outcome(data: Dataset, mechanism: str, raw: Mapping[str, Any] | None, workload: Workload, t: Targets,
            seed: int = 0, attacks: int | None = MAP_ATTACKS) -> tuple[str, Any]:
    """One setting of the map: ``("point", Point)``, or ``("skipped", sentence)`` if it cannot run on ``data``.

    The sentence names the setting (``SPLU-Gen at gamma = 10: ...``), so
    every page and the CLI say the same thing about a setting that cannot run.
    """
    mech = mechanisms.get(mechanism)
    try:
        values = mech.resolve(raw or {})
        e = mech.eligibility(data, values)
        if not e.ok:
            return "skipped", f"{mech.title} at {setting_text(raw or {})}: {e.message}"
        return "point", measure(data, mechanism, values, workload, t, seed, attacks)
    except WorkbenchError as exc:
        return "skipped", f"{mech.title} at {setting_text(raw or {})}: {exc}"


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
                 progress: Callable[[float, str], None] | None = None,
                 attacks: int | None = MAP_ATTACKS) -> tuple[list[Point], list[str]]:
    """Every mechanism along its main parameter's sweep (or its single setting if it has none).

    Returns the measured points and one sentence per setting that could not
    be sanitized (not eligible on this table).  ``attacks``: of each point's
    risk-scale assessment (None: none, the points carry the inference lift only).
    """
    jobs = sweep_jobs(names, base, sweeps)
    points, skipped = [], []
    for i, (name, raw) in enumerate(jobs):
        if progress:
            progress(i / len(jobs), f"{mechanisms.get(name).title}: {raw}")
        kind, value = outcome(data, name, raw, workload, t, seed, attacks)
        (points if kind == "point" else skipped).append(value)
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


# ====================================================================== the risk scale (issue 22)
#: share of the table held out of the measurement release as the control set (anonymeter's example: 80/20)
CONTROL_SHARE = 0.2
#: attacks per attacker on the training part and on the control part (the issue's measurement: 1,000)
DEFAULT_ATTACKS = 1000
#: seed of the training/control split when none is given
DEFAULT_SPLIT_SEED = 0
#: confidence level of every interval
CONFIDENCE = 0.95
#: risk figures a reader can call high / low when no other setting is at hand (:func:`reconcile`)
HIGH_RISK = 0.10
LOW_RISK = 0.02


@dataclass(frozen=True)
class Attack:
    """One attacker's figures: success on training records, on control records, and the added risk."""

    attacker: str  # "mechanism" or "records"
    train: Rate
    control: Rate
    risk: float
    low: float
    high: float

    def to_json(self) -> dict[str, Any]:
        return {"attacker": self.attacker, "attacks": self.train.n,
                "train_success": self.train.share, "control_success": self.control.share,
                "risk": self.risk, "interval": [self.low, self.high]}


@dataclass(frozen=True)
class RiskAssessment:
    """The measured risk of one release (:func:`assess`): what a steward signs.

    ``risk`` / ``interval`` are the signed figure: the attribute-inference
    attacker (of ``by``) with the higher risk.  ``singling_out`` (a
    :class:`core.singling_out.SinglingOut`, or None when not measured) is
    reported beside it and is *not* part of the signed figure that the pages,
    the map, the recommender and ``--max-risk`` read.  Why (our choice, the
    issue is silent): every mechanism here that publishes rows per person
    publishes each person's QI values as they are (UP, RP, SDR, SPLU-Gen, DBR,
    Anatomy, bucketization; PriView all QIs but one), so their singling-out
    risk is the same for every setting (0.998 on Adult) while Mondrian's is 0
    at every k >= 2.  Taking the largest of the attacks would put every setting
    of seven mechanisms at that one figure: the scale could no longer tell a
    setting from another, and the sliders a steward moves would not move it.
    Singling out answers "does the release isolate a person?", which the
    choice of mechanism (which QIs it publishes), not the setting, decides;
    it is shown in its own sentence wherever the signed figure is.

    ``split`` records how the measurement release was made: ``{"seed",
    "control_share", "train", "control"}``; ``measurement_seed`` is the seed
    it was sanitized with (the release's own).
    """

    mechanism: str
    params: Mapping[str, Any]
    seed: int
    measurement_seed: int
    split: Mapping[str, Any]
    attacks: int
    by: tuple[Attack, ...]
    baseline: Rate
    sa_values: int
    seconds: float = field(default=0.0, compare=False)
    singling_out: Any = None  # core.singling_out.SinglingOut (None: not measured)

    @property
    def signed(self) -> Attack:
        return max(self.by, key=lambda a: (a.risk, a.high))

    @property
    def risk(self) -> float:
        return self.signed.risk

    @property
    def interval(self) -> tuple[float, float]:
        return (self.signed.low, self.signed.high)

    def attacker(self, name: str) -> Attack | None:
        return next((a for a in self.by if a.attacker == name), None)

    def to_json(self) -> dict[str, Any]:
        """JSON-safe and the same for the same inputs and seeds (no timing): it goes into the manifest."""
        s = self.signed
        return jsonable({
            "method": "attribute inference on the SA from the QIs, training vs control (anonymeter's risk)",
            "mechanism": self.mechanism, "params": dict(self.params), "seed": self.seed,
            "measurement_seed": self.measurement_seed, "split": dict(self.split), "attacks": self.attacks,
            "confidence": CONFIDENCE, "risk": s.risk, "interval": [s.low, s.high], "signed_by": s.attacker,
            "train_success": s.train.share, "control_success": s.control.share,
            "baseline_success": self.baseline.share,
            "attackers": [a.to_json() for a in self.by],
            **({} if self.singling_out is None else {"singling_out": self.singling_out.to_json()}),
        })

    def sentence(self, qi_names: Sequence[str], sa_name: str) -> str:
        """The plain-language figure (issue 22): who guesses what, how often, and the added risk."""
        s = self.signed
        text = risk_sentence(s.train.share, s.control.share, s.risk, s.low, s.high, qi_names, sa_name)
        return text if self.singling_out is None else f"{text} {self.singling_out.clause()}"


def risk_sentence(train: float, control: float, value: float, low: float, high: float, qi_names: Sequence[str],
                  sa_name: str) -> str:
    """The risk scale's plain sentence from its figures (:meth:`RiskAssessment.sentence`, a map's Point).

    >>> risk_sentence(0.276, 0.132, 0.165, 0.128, 0.203, ["age", "sex"], "occupation")
    "An attacker who knows a person's age and sex guesses their occupation right 27.6% of the time from this release, and 13.2% of the time for people not in the table; the release itself adds 0.165 of the possible risk (95% interval 0.128-0.203)."
    """
    return (f"An attacker who knows a person's {_listing(list(qi_names))} guesses their {sa_name} right "
            f"{train:.1%} of the time from this release, and {control:.1%} of the time for "
            f"people not in the table; the release itself adds {value:.3f} of the possible risk "
            f"(95% interval {low:.3f}-{high:.3f}).")


def _listing(names: list[str]) -> str:
    if len(names) <= 1:
        return "".join(names) or "nothing"
    return ", ".join(names[:-1]) + " and " + names[-1]


def reconcile(outcome: str, risk: RiskAssessment | tuple[float, float, float],
              others: Sequence[tuple[str, float]] = ()) -> str:
    """One sentence setting the verdict (its own guarantee) beside the measured risk.

    Parameters
    ----------
    outcome : str
        The verdict's outcome (:data:`core.guarantee.MEETS`, ``FAILS`` or ``CANNOT_RUN``).
    risk : RiskAssessment or (risk, low, high)
    others : sequence of (outcome, risk)
        Other settings measured on the same table (the map's points); when
        given, "high" means as high as the lowest risk of a setting that fails
        its guarantee and "low" as low as the highest of one that meets it.
        Without them, the fixed marks :data:`HIGH_RISK` (the interval's lower
        end above it) and :data:`LOW_RISK` (its upper end below it) are used
        (our choice; the issue names none).

    Examples
    --------
    >>> reconcile("meets", (0.165, 0.128, 0.203), [("fails", 0.013), ("fails", 0.169)])
    'Meets its own guarantee, but its measured risk (0.165, 95% interval 0.128-0.203) is as high as settings that fail theirs (0.013).'
    """
    from .guarantee import CANNOT_RUN, FAILS, MEETS

    value, low, high = (risk.risk, *risk.interval) if isinstance(risk, RiskAssessment) else risk
    figure = f"{value:.3f}, 95% interval {low:.3f}-{high:.3f}"
    fails = [r for o, r in others if o == FAILS and r is not None and math.isfinite(r)]
    meets = [r for o, r in others if o == MEETS and r is not None and math.isfinite(r)]
    if outcome == CANNOT_RUN:
        return "Cannot run on this table, so nothing is published and there is no risk to measure."
    if outcome == MEETS:
        if fails and value >= min(fails):
            return (f"Meets its own guarantee, but its measured risk ({figure}) is as high as settings that fail "
                    f"theirs ({min(fails):.3f}).")
        if not others and low > HIGH_RISK:
            return (f"Meets its own guarantee, but its measured risk is high ({figure}: above {HIGH_RISK:g} even "
                    "at the interval's lower end).")
        return f"Meets its own guarantee, and its measured risk agrees ({figure})."
    if outcome == FAILS:
        if meets and value <= max(meets):
            return (f"Fails its own guarantee, yet its measured risk ({figure}) is as low as settings that meet "
                    f"theirs ({max(meets):.3f}).")
        if not others and high < LOW_RISK:
            return (f"Fails its own guarantee, yet its measured risk is low ({figure}: below {LOW_RISK:g} even at "
                    "the interval's upper end).")
        return f"Fails its own guarantee, and its measured risk agrees ({figure})."
    raise ValueError(f"unknown verdict outcome {outcome!r}")


def split(n: int, split_seed: int, control_share: float = CONTROL_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """``(training rows, control rows)``, both sorted: a seeded random ``control_share`` held out."""
    rng = np.random.default_rng([int(split_seed), 0xC0_17_01])
    n_control = int(round(n * control_share))
    held = np.zeros(n, bool)
    held[rng.choice(n, size=n_control, replace=False)] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


#: the training part of each table (:func:`training_part`): dataset -> (split seed, train rows, control rows, part)
_PARTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PARTS_LOCK = threading.Lock()


def training_part(data: Dataset, split_seed: int) -> tuple[np.ndarray, np.ndarray, Dataset]:
    """``(training rows, control rows, the training part as a Dataset)`` of :func:`split`, one per table.

    Every setting measured on a table (a map's sweep, the Sanitize page's
    slider) is assessed on the same split, so the training part is cut once
    and the same :class:`core.table.Dataset` object is sanitized each time:
    what the mechanisms keep per dataset (its combinations, Mondrian's
    partitions, the app's per-record memos) is then computed once for all the
    settings instead of once per setting.  Kept beside ``data`` (a weak
    reference: it goes with the table) for its latest split seed only; the
    part holds 80% of the table's codes.
    """
    with _PARTS_LOCK:
        got = _PARTS.get(data)
    if got is not None and got[0] == split_seed:
        return got[1], got[2], got[3]

    train_rows, control_rows = split(data.n, split_seed)
    train = subset(data, train_rows, f"risk-split-{split_seed}")
    try:
        with _PARTS_LOCK:
            _PARTS[data] = (split_seed, train_rows, control_rows, train)
    except TypeError:  # an object that cannot be weakly referenced: not kept
        pass
    return train_rows, control_rows, train


def assess(data: Dataset, mechanism: str, params: Mapping[str, Any] | None, seed: int, *,
           attacks: int = DEFAULT_ATTACKS, split_seed: int = DEFAULT_SPLIT_SEED,
           singling: bool = True) -> RiskAssessment:
    """The measured risk of the release of ``mechanism`` at ``params`` with ``seed`` on ``data``.

    The table is split (:func:`split`, ``split_seed``); a measurement release
    is built from the training part with ``params`` and ``seed``; ``attacks``
    training and ``attacks`` control records (fewer on a small table: at most
    the control part's size) are attacked by each attacker of the module
    docstring; the signed risk is the higher.  Same inputs and seeds, same
    figures (:meth:`RiskAssessment.to_json` byte for byte).  ``singling``:
    also measure singling out (:func:`core.singling_out.assess_release`,
    ``attacks`` predicates, multivariate, seeded with ``(seed, split_seed,
    0x5106)``; the map's points skip it, it is not part of their figure).

    Raises the mechanism's ParameterError for a bad parameter, and
    NotEligible (one sentence) when the training part cannot be sanitized
    with these parameters, or the table is too small to hold out a control set.

    Cost: one sanitization of 80% of the table plus the attacks
    (``bench/risk.py``: about 0.1-0.9 s on Adult by mechanism, a few seconds
    on 1M rows).
    """
    import time

    start = time.perf_counter()
    s = setup(data, mechanism, params, seed, attacks=attacks, split_seed=split_seed)
    k, rng, train, release = s.k, s.rng, s.train, s.release
    mode = int(np.argmax(train.sa_counts))
    share_groups(release, Combos.of(train).groups)  # counted on the training part's QI combinations (kept with it)
    by = []
    est_t = _mechanism_guess(train, release, s.t_qi, mode)
    est_c = _mechanism_guess(train, release, s.c_qi, mode)
    by.append(_attack("mechanism", est_t == s.t_sa, est_c == s.c_sa))
    if s.view is not None:
        # one index for both sets of targets
        both = s.view.success(train, np.concatenate([s.t_qi, s.c_qi]), np.concatenate([s.t_sa, s.c_sa]))
        by.append(_attack("records", both[:k], both[k:]))
    base = rng.choice(train.m, size=k, p=_prior(release, train))
    singled = None
    if singling:
        from . import singling_out

        control_rows = training_part(data, s.split_seed)[1]  # the split cut for the measurement release
        singled = singling_out.assess_release(release, train, np.stack([c[control_rows] for c in data.qi_codes], 1),
                                              int(attacks), (s.seed, s.split_seed, singling_out.SEED_TAG))
    return RiskAssessment(
        mechanism=release.mechanism, params=dict(release.source.get("raw_params", {})), seed=s.seed,
        measurement_seed=s.seed,
        split={"seed": s.split_seed, "control_share": CONTROL_SHARE, "train": int(train.n),
               "control": int(data.n - train.n)},
        attacks=int(k), by=tuple(by), baseline=Rate.of(k, int(np.sum(base == s.t_sa))), sa_values=int(data.m),
        seconds=time.perf_counter() - start, singling_out=singled)


@dataclass(frozen=True, eq=False)
class Setup:
    """What :func:`assess` attacks: the training part, its measurement release, its rows and the targets.

    ``t_qi`` / ``t_sa``: QI codes and SA codes of the sampled training
    records; ``c_qi`` / ``c_sa``: of the sampled control records; ``rng`` the
    measurement's generator after the targets were drawn (ties and baseline).
    """

    seed: int
    split_seed: int
    train: Dataset
    release: Release
    view: "RowView | None"
    k: int
    t_qi: np.ndarray
    t_sa: np.ndarray
    c_qi: np.ndarray
    c_sa: np.ndarray
    rng: np.random.Generator


def setup(data: Dataset, mechanism: str, params: Mapping[str, Any] | None, seed: int, *,
          attacks: int = DEFAULT_ATTACKS, split_seed: int = DEFAULT_SPLIT_SEED) -> Setup:
    """The split, the measurement release, its published rows and the sampled targets (:func:`assess`)."""
    seed = mechanisms.check_seed(seed)
    if isinstance(attacks, bool) or not isinstance(attacks, (int, np.integer)) or attacks < 10:
        raise ParameterError(f"The 'attacks' setting of the risk measurement must be a whole number of at least 10. "
                             f"Got {attacks!r}.")
    if isinstance(split_seed, bool) or not isinstance(split_seed, (int, np.integer)) or split_seed < 0:
        raise ParameterError(f"The 'split_seed' setting of the risk measurement must be a whole number of at least 0. "
                             f"Got {split_seed!r}.")
    split_seed = int(split_seed)
    if int(round(data.n * CONTROL_SHARE)) < 10:
        raise NotEligible(f"The table has {data.n:,} records: too few to hold out a control set of at least 10 "
                          "to measure the risk against; load a larger table.")
    train_rows, control_rows, train = training_part(data, split_seed)
    try:
        release = mechanisms.sanitize(train, mechanism, params, seed)
    except WorkbenchError as exc:
        if isinstance(exc, ParameterError):
            raise
        raise NotEligible(f"The risk is measured on a release of 80% of the table, which cannot be made: {exc}") \
            from None
    rng = np.random.default_rng([seed, split_seed, 0x715C])
    k = min(int(attacks), len(control_rows), len(train_rows))
    t_pick = np.sort(rng.choice(len(train_rows), size=k, replace=False))  # positions in the training part
    c_pick = control_rows[np.sort(rng.choice(len(control_rows), size=k, replace=False))]  # rows of the table
    view = published_rows(release, train, np.random.default_rng([seed, split_seed, 0x20_3E]))
    return Setup(seed, split_seed, train, release, view, k,
                 np.stack([c[t_pick] for c in train.qi_codes], axis=1), train.sa_codes[t_pick],
                 np.stack([c[c_pick] for c in data.qi_codes], axis=1), data.sa_codes[c_pick], rng)


def _attack(name: str, hit_train: np.ndarray, hit_control: np.ndarray) -> Attack:
    """An attacker's figures from its per-target successes (True/False, or a chance of success)."""
    a = Rate.of(len(hit_train), float(np.sum(hit_train)))
    c = Rate.of(len(hit_control), float(np.sum(hit_control)))
    value, low, high = residual(a, c)
    return Attack(name, a, c, value, low, high)


def _mechanism_guess(data: Dataset, release: Release, qi: np.ndarray, mode: int) -> np.ndarray:
    """The attacker who knows the mechanism: its estimator's largest SA value in each target's micro group."""
    values, group_of = unique_rows(qi)
    t = Targets(values=values, group_of=group_of.ravel(), truth=np.zeros(len(qi), np.int64), mode_share=0.0,
                mode=mode)
    est = mechanisms.estimate_grid(release, values, data.m)
    return guesses(est, t, data.m)


def _prior(release: Release, data: Dataset) -> np.ndarray:
    """The SA distribution the release estimates (the whole table's, as the mechanism's estimator reads it)."""
    batch = QueryBatch(attrs=(), values=np.zeros((data.m, 0), np.int64), sa=np.eye(data.m, dtype=bool))
    # every estimator answers the empty QI condition (unbiased ones may go below 0: clipped)
    est = np.clip(np.nan_to_num(np.asarray(mechanisms.estimate(release, [batch]), float)), 0, None)
    if est.sum() <= 0:
        est = data.sa_counts.astype(float)
    return est / est.sum()


# ---------------------------------------------------------------------- the record-reading attacker
#: cells of the (targets x published combinations) distance matrix computed at a time
_CHUNK_CELLS = 4_000_000


def _key(v) -> str:
    """A label as text, integral floats without ``.0`` (Mondrian writes 37, not 37.0)."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


@dataclass(frozen=True, eq=False)
class RowView:
    """The published rows as an attacker who reads only them sees them: QI labels and an SA code per row.

    ``labels[j]`` are the published labels of QI j and ``codes[j]`` index
    them; ``sa`` is each row's published SA code (the table's SA codes).
    """

    labels: tuple[np.ndarray, ...]
    codes: tuple[np.ndarray, ...]
    sa: np.ndarray

    def frame(self, data: Dataset) -> "Any":
        """The rows as a DataFrame of labels with the table's column names (the reference's input)."""
        import pandas as pd

        out = {c: np.asarray(self.labels[j], dtype=object)[self.codes[j]] for j, c in enumerate(data.qi)}
        out[data.sa] = data.sa_labels[self.sa]
        return pd.DataFrame(out)

    def success(self, data: Dataset, qi: np.ndarray, truth: np.ndarray) -> np.ndarray:
        """Per target, the chance that the SA of its nearest published row is its own SA (``truth``).

        The attacker takes the nearest published row to the target's QIs
        (codes of ``data``) and guesses its SA; among rows at the same
        smallest distance it takes one at random (anonymeter takes the first
        its sort returns, which is as random for shuffled rows).  Returned is
        that guess's chance of being right, the share of the tied rows that
        hold ``truth``: the expected success over the attacker's tie-breaking,
        so the figure does not move with a coin (summed, it counts successes
        as anonymeter does, with a smaller variance).

        Distance: anonymeter's Gower distance (``gower_distance`` in
        anonymeter/neighbors/mixed_types_kneighbors.py): per numeric QI whose
        published labels are the table's, ``|a - b|`` over the column's range;
        per other QI, 0 if the labels are equal, else 1.  Computed against the
        distinct published QI combinations; a target with an exact match (the
        smallest distance there is) is looked up, the others scanned in chunks
        (:func:`_nearest`, whose answer is kept for the next release publishing the same combinations).
        """
        d = len(data.qi)
        numeric, pub, tgt, scale, sizes = [], [], [], [], []
        for j in range(d):
            lab_pub = np.asarray(self.labels[j])
            lab_tab = np.asarray(data.qi_labels[j])
            same = len(lab_pub) == len(lab_tab) and np.array_equal(lab_pub.astype(object), lab_tab.astype(object))
            if same:
                tcodes = np.asarray(qi[:, j], np.int64)
            else:  # published labels differ (generalized): matched by text, a value not published matches nothing
                index = {_key(v): i for i, v in enumerate(lab_pub)}
                tcodes = np.array([index.get(_key(v), -1) for v in lab_tab], dtype=np.int64)[qi[:, j]]
            pub.append(np.asarray(self.codes[j], dtype=np.int64))
            tgt.append(tcodes)
            sizes.append(len(lab_pub))
            is_num = bool(data.qi_numeric[j]) and same
            numeric.append(is_num)
            if is_num:
                vals = lab_tab.astype(float)
                scale.append((vals, float(np.nanmax(vals) - np.nanmin(vals)) or 1.0))
            else:
                scale.append(None)
        # distinct published combinations, rows grouped by combination
        if float(np.prod([float(s) + 1 for s in sizes])) < 2.0 ** 62:
            key = np.zeros(len(self.sa), np.int64)
            for p, s in zip(pub, sizes):
                key = key * (s + 1) + p
            combo_key, combo_of = np.unique(key, return_inverse=True)
        else:
            combo_of = np.unique(np.stack(pub, axis=1), axis=0, return_inverse=True)[1]
            combo_key = None
        combo_of = combo_of.ravel()
        order = np.argsort(combo_of, kind="stable")
        counts = np.bincount(combo_of)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        first = order[starts]  # one row of each combination
        combo_vals = [p[first] for p in pub]
        n_t = len(qi)
        best = np.full(n_t, -1, np.int64)  # combination drawn for each target
        if combo_key is not None:  # exact matches by key (a target value never published has code -1)
            tk = np.zeros(n_t, np.int64)
            for t, s in zip(tgt, sizes):
                tk = tk * (s + 1) + np.where(t < 0, s, t)
            pos = np.minimum(np.searchsorted(combo_key, tk), len(combo_key) - 1)
            hit = combo_key[pos] == tk
            best[hit] = pos[hit]
        todo = np.flatnonzero(best < 0)
        C, m = len(counts), data.m
        # rows per (combination, SA value): sorted keys ``combination * m + SA`` and their counts
        pair_key, pair_count = np.unique(combo_of.astype(np.int64) * m + np.asarray(self.sa, np.int64),
                                         return_counts=True)

        def rows_holding(combo: np.ndarray, value: np.ndarray) -> np.ndarray:
            """Published rows of each combination ``combo[i]`` holding SA ``value[i]`` (0 where none)."""
            if not len(pair_key):
                return np.zeros(len(combo))
            k = combo * m + value
            pos = np.minimum(np.searchsorted(pair_key, k), len(pair_key) - 1)
            return np.where(pair_key[pos] == k, pair_count[pos], 0).astype(np.float64)

        truth = np.asarray(truth, np.int64)
        out = np.zeros(n_t)
        hit = best >= 0
        if hit.any():
            out[hit] = rows_holding(best[hit], truth[hit]) / counts[best[hit]]
        if not len(todo):
            return out
        # the nearest combinations of each scanned target (ties: all of them), their rows and those holding its value
        right, rows = np.zeros(len(todo)), np.zeros(len(todo))  # sums of whole numbers: exact in any order
        for who, combo in _nearest(combo_vals, [t[todo] for t in tgt], numeric, scale, C):
            right += np.bincount(who, weights=rows_holding(combo, truth[todo][who]), minlength=len(todo))
            rows += np.bincount(who, weights=counts[combo].astype(np.float64), minlength=len(todo))
        out[todo] = right / rows
        return out


#: the nearest combinations of recent target sets (:func:`_nearest`): digest of the inputs -> its chunks' pairs
_NEAREST: "OrderedDict[bytes, list[tuple[np.ndarray, np.ndarray]]]" = OrderedDict()
#: answers kept, and the most (target, combination) pairs one may hold (16 bytes a pair: 4 MiB, 32 MiB in all)
_NEAREST_KEEP, _NEAREST_PAIRS = 8, 250_000
_NEAREST_LOCK = threading.Lock()


def _nearest(combo_vals: list, tgt: list, numeric: list, scale: list, C: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(target, combination)`` pairs, chunk by chunk: each target's combinations at the smallest Gower distance.

    All tied combinations are paired with their target.  ``combo_vals[j]`` /
    ``tgt[j]``: QI j's code of every published combination / of every target
    (-1: a value never published); ``scale[j]`` the numeric QI's values and
    range.  The distance is summed in QI order as :meth:`RowView.success`
    defines it: per QI, a table of the term of each value the targets hold to
    every combination, rows gathered per chunk of :data:`_CHUNK_CELLS` cells
    (the same sums bit for bit as adding the terms computed per pair; a QI
    whose table would be larger than a chunk is computed per pair).

    The pairs depend on the combinations and the targets only, not on the SA
    published with them, and most record releases of a table publish the
    same QI combinations (UP, RP, SDR, SPLU-Gen and DBR keep every record's
    QI values, Anatomy and bucketization publish the QI table as it is; only
    the SA or the order changes), so a map's sweep asks the same question
    again and again: the latest :data:`_NEAREST_KEEP` answers of at most
    :data:`_NEAREST_PAIRS` pairs are kept, keyed by a BLAKE2 digest of every
    input.  A larger answer (ties with many combinations) is computed again
    each time, one chunk in memory at a time.
    """
    h = hashlib.blake2b(digest_size=32)
    h.update(np.asarray([C, len(tgt)], np.int64).tobytes())
    for j, (cv, tv) in enumerate(zip(combo_vals, tgt)):
        h.update(np.asarray([len(cv), len(tv), bool(numeric[j])], np.int64).tobytes())
        h.update(np.ascontiguousarray(cv, np.int64).tobytes())
        h.update(np.ascontiguousarray(tv, np.int64).tobytes())
        if numeric[j]:
            vals, width = scale[j]
            h.update(np.ascontiguousarray(vals, np.float64).tobytes())
            h.update(np.float64(width).tobytes())
    key = h.digest()
    with _NEAREST_LOCK:
        got = _NEAREST.get(key)
        if got is not None:
            _NEAREST.move_to_end(key)
    if got is not None:
        yield from got
        return
    n = len(tgt[0]) if tgt else 0
    terms = []
    for j in range(len(tgt)):
        tv, inv = np.unique(tgt[j], return_inverse=True)
        if len(tv) * C > _CHUNK_CELLS:
            terms.append(None)
        elif numeric[j]:
            vals, width = scale[j]
            terms.append((np.abs(vals[tv][:, None] - vals[combo_vals[j]][None, :]) / width, inv.ravel()))
        else:
            terms.append(((tv[:, None] != combo_vals[j][None, :]).astype(np.float64), inv.ravel()))
    chunk = max(1, _CHUNK_CELLS // max(C, 1))
    kept: list | None = []
    total = 0
    for s0 in range(0, n, chunk):
        size = min(chunk, n - s0)
        dist = np.zeros((size, C), np.float64)
        for j in range(len(tgt)):
            if terms[j] is not None:
                table, inv = terms[j]
                dist += table[inv[s0:s0 + chunk]]
            elif numeric[j]:
                vals, width = scale[j]
                dist += np.abs(vals[tgt[j][s0:s0 + chunk]][:, None] - vals[combo_vals[j]][None, :]) / width
            else:
                dist += tgt[j][s0:s0 + chunk][:, None] != combo_vals[j][None, :]
        who, combo = np.nonzero(dist == dist.min(axis=1, keepdims=True))
        del dist
        pair = (who + s0, combo)
        total += len(who)
        if kept is not None:
            kept = kept + [pair] if total <= _NEAREST_PAIRS else None
        yield pair
    if kept is not None:
        with _NEAREST_LOCK:
            _NEAREST[key] = kept
            while len(_NEAREST) > _NEAREST_KEEP:
                _NEAREST.popitem(last=False)


def published_rows(release: Release, data: Dataset, rng: np.random.Generator) -> RowView | None:
    """The release's published rows as one table of QI labels and an SA per row, or None if it has none.

    * a table of records (UP, RP, SDR, SPLU-Gen, DBR, Mondrian): its rows as
      published (Mondrian's generalized labels compare as published: a
      generalized value matches only the same generalized value);
    * a QI table and a sensitive table joined by a group id (Anatomy,
      F'-bucketization, PriView): each QI row with an SA value drawn from its
      group's sensitive table (any of its QI columns in the sensitive table
      drawn with it); the join an attacker without the mechanism makes;
    * Ambiguity (one table per QI) and Laplace (answers only) publish no
      rows per person: None.

    None too for a release of no rows (every record held back: Ambiguity on
    a small table with one QI): there is no row to read, and the
    mechanism's attacker alone is scored.
    """
    view = _published_rows(release, data, rng)
    return None if view is None or not len(view.sa) else view


def _published_rows(release: Release, data: Dataset, rng: np.random.Generator) -> RowView | None:
    """:func:`published_rows`, empty or not."""
    qi, sa = list(data.qi), data.sa
    tables = release.tables
    for t in tables.values():
        if all(c in t.columns for c in qi) and sa in t.columns:
            return RowView(tuple(np.asarray(t.labels[c]) for c in qi), tuple(np.asarray(t.columns[c]) for c in qi),
                           _sa_codes(t, sa, data))
    st = next((t for t in tables.values() if sa in t.columns and "count" in t.columns), None)
    if st is None:
        return None
    key = next((c for c in st.columns if c not in (sa, "count") and st.labels.get(c) is None), None)
    qt = next((t for t in tables.values() if t is not st and key in t.columns
               and sum(c in t.columns for c in qi) > 0), None)
    if key is None or qt is None or not all(c in qt.columns or c in st.columns for c in qi):
        return None
    # each QI row draws one row of its group's sensitive table, with probability proportional to its count
    g_st = np.asarray(st.columns[key], np.int64)
    w = np.asarray(st.columns["count"], float)
    order = np.lexsort((np.arange(len(g_st)), g_st))
    g_sorted, w_sorted = g_st[order], w[order]
    cum = np.cumsum(w_sorted)
    groups, start = np.unique(g_sorted, return_index=True)
    end = np.append(start[1:], len(g_sorted))
    base = np.where(start > 0, cum[start - 1], 0.0)
    g_q = np.asarray(qt.columns[key], np.int64)
    gi = np.searchsorted(groups, g_q)
    gi_c = np.minimum(gi, len(groups) - 1)
    keep = groups[gi_c] == g_q  # QI rows whose group lists SA values
    lo, hi = base[gi_c], cum[end[gi_c] - 1]
    u = lo + rng.random(len(g_q)) * (hi - lo)
    pick = order[np.minimum(np.searchsorted(cum, u, side="right"), end[gi_c] - 1)]
    labels, codes = [], []
    for c in qi:
        src, col = (qt, np.asarray(qt.columns[c])) if c in qt.columns else (st, np.asarray(st.columns[c])[pick])
        labels.append(np.asarray(src.labels[c]))
        codes.append(col[keep])
    sa_codes = _sa_codes(st, sa, data)[pick][keep]
    return RowView(tuple(labels), tuple(codes), sa_codes)


def _sa_codes(t, sa: str, data: Dataset) -> np.ndarray:
    """A published SA column as the table's SA codes (labels matched by text when they differ)."""
    lab = t.labels.get(sa)
    col = np.asarray(t.columns[sa], np.int64)
    if lab is None or (len(lab) == data.m and np.array_equal(np.asarray(lab, object), data.sa_labels.astype(object))):
        return col
    index = {_key(v): i for i, v in enumerate(data.sa_labels)}
    to_table = np.array([index.get(_key(v), -1) for v in lab], np.int64)
    return to_table[col]


# ------------------------------------------------------------------ the manifest's risk block
#: the risk is measured on tables of at most this many records (issue 22: within 5 s at 1M rows); a larger
#: table's manifest says it was not measured and why, on every engine alike (same manifest bytes)
RISK_ROWS = 1_000_000


def risk_block(data: Dataset, setting, verdict=None) -> dict[str, Any]:
    """The manifest's risk block: the release's measured risk in plain words, beside its verdict.

    :func:`core.risk.assess` attacks a measurement release of a seeded 80%
    of the table and scores each attacker against the held-out 20%; the
    block holds its figures (risk, 95% interval, split, attacks,
    measurement seed; ``singling_out``: :mod:`core.singling_out`'s N,
    mode, seed and figures, or why it does not apply), ``sentence`` (the plain-language figure) and
    ``beside_verdict`` (one sentence setting the verdict and the risk side
    by side, :func:`core.risk.reconcile`).  A table of more than
    :data:`RISK_ROWS` records, or one the measurement cannot run on, gets
    ``{"measured": false, "why": ...}``: said, never silently missing.
    Same table, setting and seed, same block (no timings).
    """
    return beside_verdict(assessed_block(data, setting), verdict)


def assessed_block(data: Dataset, setting) -> dict[str, Any]:
    """The risk block of :func:`risk_block` without the sentence beside the verdict (the pages cache this)."""
    if data.n > RISK_ROWS:
        return unmeasured(data.n)
    try:
        assessment = assess(data, setting.mechanism, dict(setting.params), int(setting.seed))
    except WorkbenchError as exc:
        return {"measured": False, "why": str(exc)}
    return {"measured": True, **assessment.to_json(), "sentence": assessment.sentence(list(data.qi), data.sa)}


def beside_verdict(block: Mapping[str, Any], verdict) -> dict[str, Any]:
    """``block`` with ``beside_verdict``: the verdict (a :class:`core.guarantee.Verdict`) and the measured risk
    reconciled in one sentence (:func:`reconcile`), a qualified meet never reconciled as a plain one."""
    from .guarantee import PLAIN, STANDING_LABELS

    block = dict(block)
    if verdict is not None and block.get("measured"):
        try:
            text = reconcile(verdict.outcome, (block["risk"], *block["interval"]))
        except ValueError:  # an outcome reconcile does not name: the verdict's line stands alone
            return block
        standing = getattr(verdict, "standing", PLAIN)
        if text.startswith("Meets its own guarantee") and standing != PLAIN:
            # a qualified, vacuous or little-publishing meet is never reconciled as a plain one
            text = STANDING_LABELS[standing].replace("its guarantee", "its own guarantee", 1).capitalize() + \
                text[len("Meets its own guarantee"):]
        block["beside_verdict"] = text
    return block


#: the risk block of a release whose request turned the measurement off (said in the manifest, not left out)
NOT_ASKED = {"measured": False, "why": "The risk measurement was turned off for this release."}


def unmeasured(rows: int) -> dict[str, Any]:
    return {"measured": False,
            "why": f"The table has {rows:,} records; the risk is measured on tables of at most {RISK_ROWS:,} "
                   "(a seeded sample of this table, loaded as its own table, can be measured)."}
