"""AppTest of the Bounds page: every registered curve, its parameter widgets, chart, notes, errors."""

from __future__ import annotations

import json

import pytest

from conftest import app, charts, metrics, no_exception
from core.bounds import BOUNDS
from pages.ui.params import grid_options, widget_key

PAGE = "pages/2_Bounds.py"


def _curve_chart(at) -> dict:
    return charts(at)["chart_curve"]


def _unfollow(at):
    """Untick "Follow the release" when the current mechanism fixes some of the curve's parameters."""
    if any(t.key == "w_bound_follow" for t in at.toggle):
        at.toggle(key="w_bound_follow").set_value(False).run()
        no_exception(at)
    return at


def _moved(p, value):
    """Another valid value of a declared parameter (one step up, or down at the top)."""
    options = grid_options(p, (value,))
    if options is not None:  # a select_slider: the next stop (what ArrowRight does), or the one before at the top
        i = options.index(value)
        return options[i + 1] if i + 1 < len(options) else options[i - 1]
    step = p.step or 1
    lo = p.low + (step if p.closed in {"right", "neither"} else 0) if p.low is not None else None
    hi = p.high - (step if p.closed in {"left", "neither"} else 0) if p.high is not None else None
    new = value + step
    if hi is not None and new > hi:
        new = value - step
    if lo is not None and new < lo:
        new = lo
    return int(new) if p.kind == "int" else float(new)


@pytest.mark.parametrize("name", list(BOUNDS))
@pytest.mark.slow
def test_every_bound_renders_and_every_slider_moves_its_curve(name):
    at = _unfollow(app(PAGE, query={"bound": name}))
    no_exception(at)
    assert at.selectbox(key="w_bound").value == name
    fig = _curve_chart(at)
    shown = {w.key: w.value for w in [*at.slider, *at.number_input, *at.select_slider, *at.text_input]}
    curve = BOUNDS[name].curve({p.name: shown[widget_key(f"b_{name}", p)] for p in BOUNDS[name].params})
    names = [trace["name"] for trace in fig["data"]]
    for key in curve.series:  # every series labelled with Curve.label
        assert curve.label(key) in names
    assert any(c.value == curve.caption for c in at.caption)
    assert any(e.label == "What this curve shows" for e in at.expander)
    if curve.log_y:
        assert fig["layout"]["yaxis"]["type"] == "log"
    for p in BOUNDS[name].params:
        if p.kind == "text":
            continue  # free text (e.g. sdr-error's counts) has no generic "next value": its module's AppTest moves it
        key = widget_key(f"b_{name}", p)
        widget = next((w for w in [*at.slider, *at.number_input, *at.select_slider] if w.key == key), None)
        assert widget is not None, key
        before = json.dumps(_curve_chart(at)["data"], sort_keys=True) + json.dumps(metrics(at))
        widget.set_value(_moved(p, widget.value)).run()
        no_exception(at)
        after = json.dumps(_curve_chart(at)["data"], sort_keys=True) + json.dumps(metrics(at))
        assert after != before, f"moving {p.name} changed nothing"
        assert at.query_params[f"bound.{p.name}"]


@pytest.mark.skipif("splu-utility" not in BOUNDS, reason="SPLU utility curve not registered")
def test_published_formula_is_drawn_distinctly():
    at = app(PAGE, query={"bound": "splu-utility"})
    no_exception(at)
    traces = {t["name"]: t for t in _curve_chart(at)["data"]}
    published = next(t for n, t in traces.items() if "as published (incorrect)" in n)
    exact = next(t for n, t in traces.items() if n.startswith("exact"))
    assert published["line"].get("dash") in {"dot", "dash"}
    assert exact["line"].get("dash") in (None, "solid")
    shapes = _curve_chart(at)["layout"].get("shapes", [])
    assert shapes, "T_E is drawn as a horizontal line"
    assert "T_f exact" in metrics(at)


@pytest.mark.skipif("splu-privacy" not in BOUNDS, reason="SPLU privacy curve not registered")
def test_gamma_moves_the_privacy_read_out():
    at = app(PAGE, query={"bound": "splu-privacy"})
    before = metrics(at)["T_p (small-sum privacy)"]
    at.slider(key="w_b_splu-privacy_gamma").set_value(5).run()
    no_exception(at)
    assert metrics(at)["T_p (small-sum privacy)"] != before


@pytest.mark.skipif("retention" not in BOUNDS, reason="retention curve not registered")
def test_invalid_parameter_combination_is_one_error():
    at = _unfollow(app(PAGE, query={"bound": "retention"}))
    at.select_slider(key="w_b_retention_rho1").set_value(0.5).run()
    no_exception(at)
    assert len(at.error) == 1 and "rho1" in at.error[0].value
    assert "chart_curve" not in charts(at)


@pytest.mark.slow  # over 1 s of CPU (the conftest check)
def test_bound_choice_survives_a_page_switch():
    names = list(BOUNDS)
    at = app(PAGE)
    at.selectbox(key="w_bound").set_value(names[-1]).run()
    at.switch_page("pages/0_Home.py").run()
    at.switch_page(PAGE).run()
    no_exception(at)
    assert at.selectbox(key="w_bound").value == names[-1]


@pytest.mark.slow
def test_curve_follows_the_release_until_unticked():
    """SPLU at gamma = 4 on Adult: the SPLU curves are drawn at gamma = 4, moved with the Sanitize page."""
    at = app(PAGE, query={"data": "adult", "mech": "splu", "gamma": "4", "bound": "splu-utility"})
    no_exception(at)
    gamma = at.slider(key="w_b_splu-utility_gamma")
    assert gamma.value == 4 and gamma.disabled
    assert any(c.value.startswith("From the release: γ = 4") for c in at.caption)
    at4 = metrics(at)["T_f exact"]
    at.switch_page("pages/1_Sanitize.py").run()
    at.slider(key="w_m_splu_gamma").set_value(6).run()
    at.switch_page(PAGE).run()
    no_exception(at)
    assert at.slider(key="w_b_splu-utility_gamma").value == 6
    assert metrics(at)["T_f exact"] != at4
    # untick: the slider is the user's again
    _unfollow(at)
    assert not at.slider(key="w_b_splu-utility_gamma").disabled
    at.slider(key="w_b_splu-utility_gamma").set_value(9).run()
    no_exception(at)
    assert at.query_params["bound.gamma"] == "9"


def test_linked_values_come_from_the_release_and_the_table():
    """Bound.linked: shared names in range, m and counts from the table, out-of-range values ignored."""
    from core.table import load_dataset

    data = load_dataset("toy-sdr")
    assert BOUNDS["retention"].linked({"rho1": 0.1, "rho2": 0.2, "gamma": 3}, data) == \
        {"rho1": 0.1, "rho2": 0.2, "m": data.m}
    assert BOUNDS["sdr-error"].linked({}, data)["counts"] == ",".join(str(int(c)) for c in data.sa_counts)
    assert BOUNDS["splu-utility"].linked({"gamma": 500}) == {}  # outside 2..50: the curve keeps its own
