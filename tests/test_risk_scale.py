"""The risk scale a steward signs (issue 22): core.risk.assess, its interval, sentence and reconciliation."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from core import mechanisms, risk
from core.errors import NotEligible, ParameterError
from core.guarantee import FAILS, MEETS
from core.mechanisms.base import Mechanism, observed, qi_table
from core.release import Published
from core.table import bind, make_table


class Raw(Mechanism):
    """Publishes the table as it is (a test double: the worst case for privacy)."""

    name = "raw-test"

    def sanitize(self, data, values, rng):
        return Published(tables={"release": qi_table(data, rng.permutation(data.n), data.sa_codes)})

    def estimate(self, release, batch, rng):
        return observed(release, batch)[0]


@pytest.fixture
def raw(monkeypatch):
    monkeypatch.setitem(mechanisms.MECHANISMS, "raw-test", Raw())
    return "raw-test"


def people(n=4000, seed=0):
    """Most people unique on their QIs (age x zip x sex), an SA unrelated to them: a person-level secret."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"age": rng.integers(20, 80, n), "zip": rng.integers(0, 200, n).astype(str),
                          "sex": rng.choice(["f", "m"], n),
                          "s": rng.choice([f"v{i}" for i in range(6)], n)})
    return bind(make_table(frame, "people"), "s", ["age", "zip", "sex"])


def test_the_issue_figures_follow_from_anonymeters_formula():
    """27.6% and 13.2% over 1,000 attacks each give 0.165 [0.128, 0.203] (the issue, measured with anonymeter)."""
    value, low, high = risk.residual(risk.Rate.of(1000, 276), risk.Rate.of(1000, 132))
    assert value == pytest.approx(0.1655, abs=5e-4)
    assert (round(low, 3), round(high, 3)) == (0.128, 0.203)


def test_wilson_rate_against_a_hand_computation():
    # Wilson (1927): centre (k + z^2/2) / (n + z^2), half-width z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)
    z = 1.959963984540054
    r = risk.Rate.of(50, 10)
    assert r.value == pytest.approx((10 + z * z / 2) / (50 + z * z))
    assert r.error == pytest.approx(z / (50 + z * z) * math.sqrt(10 * 40 / 50 + z * z / 4))


def test_the_raw_table_scores_high(raw):
    data = people()
    a = risk.assess(data, raw, {}, 3, attacks=500)
    rec = a.attacker("records")
    # a training target's nearest row is its own (mostly unique QIs), a control target's is a stranger's
    assert rec.train.share > 0.8 and rec.control.share < 0.3
    assert a.risk > 0.7 and a.interval[0] > 0.6
    assert a.signed.attacker in ("records", "mechanism")


def test_a_heavily_noised_release_scores_near_zero():
    data = people()
    a = risk.assess(data, "uniform", {"p": 0.02}, 3, attacks=500)
    assert a.risk < 0.06 and a.interval[0] < 0.01
    for x in a.by:
        assert x.low <= x.risk <= x.high


def test_noise_orders_the_risk():
    data = people(seed=1)
    lo = risk.assess(data, "uniform", {"p": 0.1}, 4, attacks=500)
    hi = risk.assess(data, "uniform", {"p": 0.9}, 4, attacks=500)
    assert hi.interval[0] > lo.interval[1]


def test_same_seeds_same_figures_and_json_is_safe():
    data = people(seed=2)
    a = risk.assess(data, "anatomy", {"l": 3}, 7, attacks=200, split_seed=5)
    b = risk.assess(data, "anatomy", {"l": 3}, 7, attacks=200, split_seed=5)
    ja, jb = a.to_json(), b.to_json()
    assert json.dumps(ja, sort_keys=True) == json.dumps(jb, sort_keys=True)
    assert ja["split"] == {"seed": 5, "control_share": 0.2, "train": 3200, "control": 800}
    assert ja["attacks"] == 200 and ja["measurement_seed"] == 7 and ja["interval"][0] <= ja["risk"]
    other = risk.assess(data, "anatomy", {"l": 3}, 7, attacks=200, split_seed=6)
    assert other.to_json() != ja


def test_split_holds_out_a_fifth_and_is_seeded():
    train, control = risk.split(1000, 3)
    assert len(control) == 200 and len(train) == 800
    assert not set(train) & set(control)
    np.testing.assert_array_equal(risk.split(1000, 3)[1], control)
    assert not np.array_equal(risk.split(1000, 4)[1], control)


def test_an_answers_only_release_has_no_record_reader():
    a = risk.assess(people(seed=3), "laplace", {}, 0, attacks=100)
    assert [x.attacker for x in a.by] == ["mechanism"]


def test_sentence_reads_the_signed_attacker():
    data = people(seed=4)
    a = risk.assess(data, "uniform", {"p": 0.5}, 1, attacks=300)
    s = a.signed
    text = a.sentence(["age", "zip", "sex"], "diagnosis")
    assert text.startswith("An attacker who knows a person's age, zip and sex guesses their diagnosis right ")
    assert f"{s.train.share:.1%} of the time from this release, and {s.control.share:.1%} of the time" in text
    assert f"adds {s.risk:.3f} of the possible risk (95% interval {s.low:.3f}-{s.high:.3f})." in text


def test_bad_settings_are_one_sentence():
    data = people(n=200)
    with pytest.raises(ParameterError, match="'attacks'"):
        risk.assess(data, "uniform", {}, 0, attacks=5)
    with pytest.raises(ParameterError, match="'split_seed'"):
        risk.assess(data, "uniform", {}, 0, split_seed=-1)
    with pytest.raises(NotEligible, match="too few to hold out"):
        risk.assess(people(n=30), "uniform", {}, 0)


# ------------------------------------------------------------------ verdict beside risk
def test_reconcile_says_when_a_meets_is_as_risky_as_a_fails():
    others = [(FAILS, 0.013), (FAILS, 0.169), (MEETS, 0.04)]
    text = risk.reconcile(MEETS, (0.165, 0.128, 0.203), others)
    assert text.startswith("Meets its own guarantee, but its measured risk") and "as high as settings that fail" in text


def test_reconcile_says_when_a_fails_is_as_safe_as_a_meets():
    text = risk.reconcile(FAILS, (0.013, 0.0, 0.049), [(MEETS, 0.087), (MEETS, 0.008)])
    assert text.startswith("Fails its own guarantee, yet its measured risk")


def test_reconcile_agrees_when_they_agree():
    assert "agrees" in risk.reconcile(MEETS, (0.01, 0.0, 0.03), [(FAILS, 0.2)])
    assert "agrees" in risk.reconcile(FAILS, (0.3, 0.25, 0.35), [(MEETS, 0.05)])


def test_reconcile_without_other_settings_uses_fixed_marks():
    assert "is high" in risk.reconcile(MEETS, (0.2, 0.15, 0.25))
    assert "agrees" in risk.reconcile(MEETS, (0.2, 0.05, 0.25))  # the interval reaches below the mark
    assert "is low" in risk.reconcile(FAILS, (0.0, 0.0, 0.01))
    assert "agrees" in risk.reconcile(FAILS, (0.0, 0.0, 0.05))
