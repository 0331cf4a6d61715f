"""A guided tour on the papers' toy tables, for teaching.

Each :class:`Step` is one idea from one paper, shown on a table small enough
to read whole: a plain-language text, the toy table, and a few *checks*,
each a number computed live by the same core code the pages use, set beside
the number the paper prints.  A check that no longer matches the paper is
shown as such on the page and fails the tests (``tests/test_tour.py``), so
the tour doubles as a reproduction of the papers' worked examples.

Steps whose mechanism or curve is not registered are left out
(:func:`steps`), so the tour never shows a broken step.  ``link`` is the
query string of the page where the step can be explored further with the
same table and parameters (the pages restore their state from the URL).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

from . import bounds, mechanisms
from .table import load_dataset


@dataclass(frozen=True)
class Check:
    """One number computed here beside the number the paper prints."""

    quantity: str
    value: float
    paper: str
    target: float
    tol: float = 5e-4

    @property
    def ok(self) -> bool:
        return bool(np.isfinite(self.value) and abs(self.value - self.target) <= self.tol)


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    paper: str
    sample: str
    sensitive: str
    text: str
    run: Callable[[], list[Check]]
    link: str = ""
    needs: tuple[str, ...] = field(default=())  # mechanisms or curves the step uses
    #: an analytical curve drawn instead of the table: (bound name, parameters)
    curve: tuple[str, dict] | None = None
    #: a small worked-example table drawn instead of a sample (a function returning a DataFrame)
    table: Callable[[], object] | None = None

    def available(self) -> bool:
        return all(n in mechanisms.MECHANISMS or n in bounds.BOUNDS for n in self.needs)


def frac(x: float, limit: int = 1000) -> str:
    """A probability as the papers print it: ``4/13`` when it is a small fraction."""
    f = Fraction(float(x)).limit_denominator(limit)
    if f.denominator == 1 or abs(float(f) - x) > 1e-9:
        return f"{x:.4g}"
    return f"{f.numerator}/{f.denominator}"


# ------------------------------------------------------------------ steps
def _up() -> list[Check]:
    data = load_dataset("toy-sdr", "sa")
    mech = mechanisms.get("uniform")
    d = mech.derived(data, mech.resolve({"rho1": 1 / 3, "rho2": 2 / 3}))
    return [
        Check("domain size m", d["m"], "10", 10, 0),
        Check("amplification γ", d["gamma"], "4", 4),
        Check("keep own value, P[x→x]", d["diagonal"], "4/13", 4 / 13),
        Check("become a given other value, P[x→y]", d["off_diagonal"], "1/13", 1 / 13),
        Check("retention p", d["p"], "3/13", 3 / 13),
    ]


def _sdr() -> list[Check]:
    data = load_dataset("toy-sdr", "sa")
    release = mechanisms.sanitize(data, "sdr", {"rho1": 1 / 3, "rho2": 2 / 3}, seed=1)
    t1, t2 = release.published["subtables"]
    return [
        Check("T1 records", t1["rows"], "36", 36, 0),
        Check("T1 amplification γ1", t1["gamma"], "4", 4),
        Check("T1 keep own value (diagonal)", t1["p"] + (1 - t1["p"]) / t1["m"], "4/9", 4 / 9),
        Check("T2 records", t2["rows"], "6", 6, 0),
        Check("T2 amplification γ2", t2["gamma"], "10", 10),
        Check("T2 keep own value (diagonal)", t2["p"] + (1 - t2["p"]) / t2["m"], "2/3", 2 / 3),
        Check("error bound ε(Part), δ = 0.05", release.published["eps_part"], "2.02", 2.02, 5e-3),
    ]


def _splu_privacy() -> list[Check]:
    curve = bounds.get("splu-privacy").curve({"gamma": 10, "eps": 0.3, "alpha": 3, "f_max": 6})
    tp = dict(zip(curve.x.tolist(), curve.series["privacy"].tolist()))
    return [
        Check("T_p(5): chance a count of 5 is published >30% off (γ = 10)", tp[5], "0.480", 0.480),
        Check("T_p(1)", tp[1], "0.613", 0.613),
        Check("T_p(4): the sawtooth dips", tp[4], "0.429", 0.429),
        Check("T_p = min over counts 1..3", curve.notes["T_p"], "≥ 0.6 (paper's claim)", 0.6126),
    ]


def _splu_utility() -> list[Check]:
    curve = bounds.get("splu-utility").curve({"gamma": 10, "eps": 0.1, "t_e": 0.1, "f_max": 1000})
    at = {s: dict(zip(curve.x.tolist(), curve.series[s].tolist())) for s in curve.series}
    return [
        Check("f = 100: exact chance of ≥10% error", at["exact"][100], "0.316 (exact)", 0.316),
        Check("f = 100: corrected Chebyshev bound", at["chebyshev"][100], "0.90", 0.90),
        Check("f = 100: the paper's bound 1/(γ ε² f²)", at["published"][100], "0.001 (wrong)", 0.001, 1e-6),
        Check("f = 900: exact", at["exact"][900], "0.00167", 0.00167, 5e-5),
    ]


def _splu_release() -> list[Check]:
    data = load_dataset("toy-splu", "disease")
    release = mechanisms.sanitize(data, "splu", {"gamma": 3}, seed=1)
    sizes = release.published["group_sizes"]
    return [
        Check("records in, records out", release.rows_out, "9 = 9 (none deleted)", 9, 0),
        Check("decoy groups of γ = 3 distinct diseases", release.published["groups"], "3", 3, 0),
        Check("largest group", max(int(s) for s in sizes), "3", 3, 0),
        Check("adversary's best posterior", release.privacy["max_posterior"], "1/3", 1 / 3),
    ]


def _reconstruction() -> list[Check]:
    from .mechanisms.reconstruction import sample_counts, threshold

    # Example 5.15: a micro group of 5 records of x1 and 15 of x2 sampled down to s_g = 15 records,
    # repeated over 4,000 groups at once: x1 keeps 3 or 4 records, 3.75 on average
    reps = 4000
    counts = sample_counts(np.repeat(np.arange(reps), 2), np.tile([5, 15], reps), np.full(reps, 20),
                           np.full(reps, 15), np.random.default_rng(5)).reshape(reps, 2)
    f, p, m, lam, delta = 0.75, 0.5, 2, 0.5, 0.5
    return [
        Check("Example 5.15: x1 records kept of 5 (mean of 4,000 samples)", float(counts[:, 0].mean()),
              "3.75", 3.75, 0.03),
        Check("every sample has exactly s_g = 15 records", float(counts.sum(axis=1).min()), "15", 15, 0),
        Check("size threshold s_g for f = 3/4, p = λ = δ = 1/2, m = 2", float(threshold(f, p, m, lam, delta)),
              "2 ln(1/δ)(fp + (1-p)/m)/(λpf)² = 24.6", 2 * np.log(2) * (f * p + (1 - p) / m) / (lam * p * f) ** 2,
              1e-9),
    ]


def _inference() -> list[Check]:
    from .bounds.differential import bias_factor

    return [
        Check("E[Y/X] / (y/x) at ε = 0.1, x = 100 (Theorem 2)", float(bias_factor(100, 0.1)), "1.02", 1.02, 1e-9),
        Check("the same at x = 1,000", float(bias_factor(1000, 0.1)), "1.0002", 1.0002, 1e-9),
    ]


# seed 003 Example 3: 50 records, o = 1 (x1..x8), 6 (x9..x12), 9 (x13, x14); f'_i = 2 f_i + 0.05
_EX3 = np.array([1] * 8 + [6] * 4 + [9] * 2)


def _ex3_fp() -> np.ndarray:
    return 2 * _EX3 / _EX3.sum() + 0.05


def _buckets_table():
    import pandas as pd

    from .mechanisms.bucketization_algorithm import caps

    fp = _ex3_fp()
    rows = [0, 8, 12]
    return pd.DataFrame({"values": ["x1 … x8", "x9 … x12", "x13, x14"], "o_i": _EX3[rows],
                         "f_i": [frac(f) for f in _EX3[rows] / 50], "f'_i": [f"{v:.2f}" for v in fp[rows]],
                         "max in a bucket of 4": caps(fp, 4)[rows], "of 14": caps(fp, 14)[rows]})


def _buckets() -> list[Check]:
    from .mechanisms.bucketization_algorithm import caps, two_size

    fp = _ex3_fp()
    best = two_size(_EX3, fp, 50)
    a1 = np.minimum(caps(fp, 4) * 9, _EX3)
    a2 = np.minimum(caps(fp, 14) * 1, _EX3)
    return [
        Check("smaller bucket size S1 (with b1 buckets)", best.s1, "4", 4, 0),
        Check("b1", best.b1, "9", 9, 0),
        Check("larger bucket size S2 (with b2 buckets)", best.s2, "14", 14, 0),
        Check("b2", best.b2, "1", 1, 0),
        Check("records buckets of 4 can hold, Σ a_i1 (≥ 36 needed)", a1.sum(), "42", 42, 0),
        Check("records the bucket of 14 can hold, Σ a_i2 (≥ 14 needed)", a2.sum(), "34", 34, 0),
    ]


_FIG2_GROUPS = [0, 0, 0, 0, 1, 1, 1, 1]  # seed 004 Fig. 2: G1 = {Alan..Henry}, G2 = {Alice..Helen}


def _ambiguity() -> list[Check]:
    from .counting import QueryBatch
    from .mechanisms.ambiguity import group_stats, release_from_groups

    data = load_dataset("toy-ambiguity", "disease")
    release = release_from_groups(data, "ambiguity", _FIG2_GROUPS)
    stats = group_stats(release)
    age = data.qi_labels[data.qi.index("age")].astype(int)
    zipcode = data.qi_labels[data.qi.index("zipcode")].astype(int)
    sa = (data.sa_labels.astype(str) == "diabetes")[None]
    q2 = QueryBatch(attrs=(data.qi.index("age"), data.qi.index("zipcode")), sa=sa,
                    masks=((age >= 50)[None], (zipcode == 23000)[None]))
    return [
        Check("presence of a person covered by G1: 4 / (4 × 1 × 3)", float(stats["presence"][0]), "1/3", 1 / 3),
        Check("presence, G2: 4 / (3 × 1 × 3)", float(stats["presence"][1]), "4/9", 4 / 9),
        Check("association of Alice with leukemia (2 of 4)", float(stats["association"][1]), "1/2", 1 / 2),
        Check("estimate of Q2: age ≥ 50, zip 23000, diabetes", float(mechanisms.estimate(release, [q2])[0]),
              "1/6 + 2/9 = 7/18", 7 / 18),
    ]


STEPS: tuple[Step, ...] = (
    Step(
        "up", "1. Randomized response on a small domain", "seed 002, Example 1", "toy-sdr", "sa",
        "Each record keeps its sensitive value with probability *p* and otherwise takes a value drawn "
        "uniformly from all *m* values. The privacy promise (ρ₁, ρ₂) = (1/3, 2/3) says: a value an adversary "
        "believed with at most 1/3 before must stay at most 2/3 after seeing the release. That fixes the "
        "amplification γ (how much more likely your own value is than any other) and hence *p*. With 10 values, "
        "a record keeps its own value only 4 times in 13.",
        _up, "Sanitize?data=toy-sdr&sa=sa&mech=uniform&rho1=1/3&rho2=2/3&seed=1", ("uniform",)),
    Step(
        "sdr", "2. Smaller domains keep more: splitting the table", "seed 002, Examples 1-4", "toy-sdr", "sa",
        "Algorithm PP splits the table into sub-tables whose values are balanced, and randomizes each over its "
        "own, smaller set of values. The same (1/3, 2/3) promise then allows γ = 4 in T1 and γ = 10 in T2, so "
        "records keep their value 4 in 9 and 2 in 3 times instead of 4 in 13: more truth survives, same "
        "privacy.",
        _sdr, "Sanitize?data=toy-sdr&sa=sa&mech=sdr&rho1=1/3&rho2=2/3&seed=1", ("sdr",)),
    Step(
        "splu-release", "3. Decoy groups: small sums hidden, nothing deleted", "seed 000, Fig. 2", "toy-splu",
        "disease",
        "SPLU-Gen puts each patient in a decoy group of γ patients with different diseases and publishes, for "
        "each patient, a disease drawn from the group. An adversary who knows a patient is in the table can "
        "only say that each of the group's γ diseases is equally likely. The groups themselves are not "
        "published.",
        _splu_release, "Sanitize?data=toy-splu&sa=disease&mech=splu&gamma=3&seed=1", ("splu",)),
    Step(
        "splu-privacy", "4. Why a count of 5 is safe: the binomial sawtooth", "seed 000, Example 1 and Fig. 5",
        "", "",
        "A disease held by *f* people is published about *f* times, but as a binomial draw: with γ = 10, the "
        "published count of a true 5 is more than 30% off 48% of the time. Small counts stay uncertain; the "
        "curve zig-zags because counts are whole numbers.",
        _splu_privacy, "Bounds?bound=splu-privacy&bound.gamma=10&bound.eps=0.3&bound.alpha=3", ("splu-privacy",),
        ("splu-privacy", {"gamma": 10, "eps": 0.3, "alpha": 3, "f_max": 12})),
    Step(
        "splu-utility", "5. Large sums stay accurate, and a wrong formula", "seed 000, Theorem 3", "", "",
        "For large counts the relative error shrinks. The paper's Theorem 3 promises far more than is true: "
        "for a count of 100 it says a 10% error happens with chance 0.001; the exact chance is 0.316. The "
        "workbench draws the exact value, a correct bound, and the published formula labelled as incorrect.",
        _splu_utility, "Bounds?bound=splu-utility&bound.gamma=10&bound.eps=0.1", ("splu-utility",),
        ("splu-utility", {"gamma": 10, "eps": 0.1, "t_e": 0.1, "f_max": 1000})),
    Step(
        "reconstruction", "6. Big groups give themselves away", "seed 001, Theorem 5.13 and Example 5.15",
        "", "",
        "If many records share the same known attributes, their randomized values average out and reveal the "
        "group's true mix. (λ, δ)-reconstruction privacy caps how many independent draws a group may have "
        "(the size threshold s_g); a larger group publishes a scaled-up sample of s_g draws instead.",
        _reconstruction, "Bounds?bound=reconstruction-threshold&bound.p=0.5&bound.lambda=0.5&bound.delta=0.5&bound.m=2",
        ("reconstruction",), ("reconstruction-threshold", {"m": 2, "p": 0.5, "lambda": 0.5, "delta": 0.5})),
    Step(
        "inference", "7. Noise on answers does not stop inference", "seed 003, Example 1 and Theorem 2", "", "",
        "Differential privacy adds Laplace noise to each answer, hiding whether one person is in the data. But "
        "an adversary who asks \"how many women in zip 61434?\" (x) and \"how many of them have HIV?\" (y) "
        "reads the share y/x from the two noisy answers almost exactly once x is large: the noise is the same "
        "few units whatever x is. The curve is the bias of the noisy ratio against the group size x.",
        _inference, "Bounds?bound=differential-inference&bound.epsilon=0.1", ("differential-inference",),
        ("differential-inference", {"epsilon": 0.1, "ratio": 0.5, "x": 100.0})),
    Step(
        "buckets", "8. Each value its own limit: buckets of two sizes", "seed 003, Example 3", "", "",
        "F'-privacy lets each sensitive value have its own limit f'_i on its share inside any bucket: rare values "
        "(here x1 … x8, one record each) need big buckets to stay below their limit, common ones fit in small "
        "buckets. With buckets of one size all would be as big as the rarest value needs; two sizes (nine "
        "buckets of 4 and one of 14) lose much less. The table gives each value's records o_i, share f_i, limit "
        "f'_i = 2 f_i + 0.05 and how many of its records a bucket of 4 or of 14 may hold (floor(f'_i S)).",
        _buckets, "Sanitize?data=toy-bucket&sa=disease&mech=bucketization&theta=2&seed=1", ("bucketization",),
        table=_buckets_table),
    Step(
        "ambiguity", "9. Hiding who is in the table: Ambiguity", "seed 004, Fig. 1(a), Fig. 2 and §6",
        "toy-ambiguity", "disease",
        "Ambiguity publishes, for each group of people, the distinct values of each attribute in separate "
        "tables, and the group's diseases with counts. An adversary who knows your age, gender and zip code "
        "sees many combinations a group could contain, so is only 1 in 3 sure you are in the data at all, and "
        "then only 1 in 2 sure of your disease. Counts are estimated by assuming every combination equally "
        "likely.",
        _ambiguity, "Attacks?data=toy-ambiguity&sa=disease&mech=ambiguity", ("ambiguity",)),
)


def steps() -> list[Step]:
    """The tour's steps whose mechanisms and curves are available."""
    return [s for s in STEPS if s.available()]


def get(key: str) -> Step:
    for s in STEPS:
        if s.key == key:
            return s
    raise KeyError(key)
