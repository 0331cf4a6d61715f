"""Parameter widgets step finely and reach the papers' values exactly (issue 13 §5).

Sliders over presets only jumped coarsely (ε ln 3 -> 2, θ 8 -> 16, α and β
0.1 -> 0.2) and a plain slider showed ρ₁ = 1/13 as 0.077 but stepped to
0.080 off its own grid.  Every numeric parameter declared anywhere (the
mechanisms, the bounds, the workloads, the recommender, the experiments)
must now be drawn so that its default and every preset is a stop of the
widget, exactly, and the stop after it is one declared step away at most.
"""

from __future__ import annotations

import math

import pytest

from core import experiments
from core.bounds import BOUNDS
from core.evaluate import WORKLOADS
from core.mechanisms import MECHANISMS
from core.recommend import SETTINGS
from pages.ui.fmt import preset_label
from pages.ui.params import MAX_SLIDER_STEPS, _range, grid_options


def _declared():
    for name, m in MECHANISMS.items():
        yield from ((f"mechanism {name}", p) for p in m.params)
    for name, b in BOUNDS.items():
        yield from ((f"bound {name}", p) for p in b.params)
    for name, w in WORKLOADS.items():
        yield from ((f"workload {name}", p) for p in w.params)
    yield from (("recommender", p) for p in SETTINGS)
    for page in ("query_error", "attacks", "bounds", "sanitize", "tradeoffs"):
        for e in experiments.for_page(page):
            yield from ((f"experiment {e.name}", p) for p in e.params)


NUMERIC = [(owner, p) for owner, p in _declared() if p.kind in {"int", "float"}]


def _stops(p, value):
    """The stops of the widget drawn for ``p`` holding ``value``; None when it is typed (any value reachable)."""
    options = grid_options(p, (value,))
    if options is not None:
        return options
    lo, hi = _range(p)
    if p.kind == "int" and lo is not None and hi is not None and (hi - lo) / (p.step or 1) <= MAX_SLIDER_STEPS:
        step = int(p.step or 1)
        return list(range(lo, hi + 1, step))
    return None  # a number box: any value in range can be typed


@pytest.mark.parametrize("owner, p", NUMERIC, ids=[f"{o}:{p.name}" for o, p in NUMERIC])
def test_default_and_presets_are_stops_exactly_and_the_next_stop_is_one_fine_step(owner, p):
    wanted = [v for v in (p.default, *p.presets) if v is not None and p.contains(float(v))]
    # the stops are computed without the value itself, as for a fresh widget
    stops = grid_options(p) if grid_options(p) is not None else _stops(p, None)
    if stops is None:
        return
    for v in wanted:
        assert any(s == v for s in stops), f"{owner}: {p.name} = {v!r} is no stop of its widget"
        i = next(i for i, s in enumerate(stops) if s == v)
        if i + 1 < len(stops):  # ArrowRight moves to the next stop: at most one declared step on
            assert stops[i + 1] - v <= (p.step or 1) + 1e-12, (owner, p.name, v, stops[i + 1])
            assert stops[i + 1] > v


def test_the_issue_cases():
    eps = grid_options(MECHANISMS["laplace"].param("epsilon"))
    i = eps.index(math.log(3))
    assert eps[i + 1] == 1.1 and eps[i - 1] == 1.09  # ln 3 -> 1.1, not 2
    theta = grid_options(MECHANISMS["bucketization"].param("theta"))
    assert theta[theta.index(8.0) + 1] == 8.5  # not 16
    for name in ("ambiguity", "priview", "mondrian"):
        beta = grid_options(MECHANISMS[name].param("beta"))
        assert beta[beta.index(0.1) + 1] == 0.105  # not 0.2
    alpha = grid_options(MECHANISMS["ambiguity"].param("alpha"))
    assert alpha[alpha.index(0.1) + 1] == 0.105
    rho1 = grid_options(MECHANISMS["uniform"].param("rho1"))
    assert 1 / 13 in rho1 and rho1[rho1.index(1 / 13) + 1] == 0.08 and rho1[rho1.index(1 / 13) - 1] == 0.075
    assert 1 / 7 in grid_options(MECHANISMS["priview"].param("beta"))


def test_papers_values_are_labelled_as_the_papers_write_them():
    assert preset_label(1 / 13) == "1/13 ≈ 0.07692"
    assert preset_label(math.log(3)) == "ln 3 ≈ 1.099"
    assert preset_label(1 / 7) == "1/7 ≈ 0.1429"
    assert preset_label(0.08) == "0.08" and preset_label(8.5) == "8.5"


def test_a_stored_value_off_the_grid_stays_a_stop_and_others_do_not_appear():
    p = MECHANISMS["uniform"].param("rho1")
    plain = grid_options(p)
    assert grid_options(p, (0.0771,)) == sorted([*plain, 0.0771])
    assert grid_options(p, (None, "x", 2.0, float("nan"))) == plain  # invalid extras are ignored


@pytest.mark.slow
def test_a_typed_float_over_a_wide_range_steps_by_one():
    # differential inference's x in [1, 1e7] has no declared step: +/- moved it by 99,999.99
    from conftest import app, no_exception

    at = app("pages/2_Bounds.py", query={"bound": "differential-inference"})
    no_exception(at)
    box = at.number_input(key="w_b_differential-inference_x")
    assert box.value == 100.0 and box.step == 1.0
    box.increment().run()
    no_exception(at)
    assert at.number_input(key="w_b_differential-inference_x").value == 101.0
