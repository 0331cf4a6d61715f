"""AppTest of the Query error page: workload settings, comparison table and chart, sweep, scatter."""

from __future__ import annotations

import pytest

from conftest import app, chart_data, charts, frame_with, no_exception
from core.evaluate import WORKLOADS
from core.mechanisms import MECHANISMS

PAGE = "pages/3_Query_error.py"
SMALL = {"wl": "seed000", "wl.queries": "600", "cmp": "uniform,anatomy,dbr"}


def _bands(at):
    return frame_with(at, "band")


def test_renders_comparison_sweep_and_scatter():
    at = app(PAGE, query=SMALL)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    table = _bands(at)
    assert list(table.columns[:2]) == ["band", "queries"]
    assert {MECHANISMS[n].title for n in ("uniform", "anatomy", "dbr")} <= set(table.columns)
    assert table["band"].iloc[0].startswith("small counts")
    assert {"chart_bands", "chart_sweep", "chart_scatter"} <= set(charts(at))
    scatter = charts(at)["chart_scatter"]
    assert scatter["layout"]["xaxis"]["type"] == "log" and scatter["layout"]["yaxis"]["type"] == "log"
    # hover shows the query text
    assert " AND " in str(scatter["data"][0]["customdata"][0])
    assert at.get("progress")


@pytest.mark.slow
def test_every_widget_moves():
    at = app(PAGE, query=SMALL)
    no_exception(at)
    table0 = _bands(at).copy()

    at.number_input(key="w_wl_seed000_seed").set_value(3).run()
    no_exception(at)
    table1 = _bands(at).copy()
    assert not table1.equals(table0)

    at.number_input(key="w_wl_seed000_queries").set_value(400).run()
    no_exception(at)
    at.slider(key="w_wl_seed000_max_attrs").set_value(2).run()
    no_exception(at)
    assert at.query_params["wl.max_attrs"] == "2"
    assert at.query_params["wl.queries"] == "400"

    at.multiselect(key="w_q_compare").set_value(["uniform", "laplace"]).run()
    no_exception(at)
    assert MECHANISMS["laplace"].title in _bands(at).columns
    assert MECHANISMS["anatomy"].title not in _bands(at).columns

    bands_before = chart_data(at)
    at.toggle(key="w_q_log").set_value(False).run()
    no_exception(at)
    assert charts(at)["chart_bands"]["layout"]["yaxis"].get("type") != "log"

    at.selectbox(key="w_q_sweep_mech").set_value("anatomy").run()
    no_exception(at)
    at.text_input(key="w_q_sweep_values_anatomy").set_value("2, 4, 12").run()
    no_exception(at)
    # l = 12 is not eligible on Adult: its message is shown, the other points are drawn
    assert any("l = 12" in w.value and "largest feasible" in w.value for w in at.warning)
    sweep = charts(at)["chart_sweep"]
    assert sweep["data"][0]["x"] == [2.0, 4.0]

    at.selectbox(key="w_q_scatter").set_value("laplace").run()
    no_exception(at)
    assert "Laplace" in charts(at)["chart_scatter"]["layout"]["title"]["text"]

    if len(WORKLOADS) > 1:
        other = [k for k in WORKLOADS if k != "seed000"][0]
        at.selectbox(key="w_q_kind").set_value(other).run()
        no_exception(at)
        assert at.query_params["wl"] == other
        assert chart_data(at) != bands_before


def test_bad_sweep_values_and_ineligible_comparison_are_messages():
    at = app(PAGE, query={**SMALL, "mech": "anatomy", "l": "12", "cmp": "anatomy,dbr"})
    no_exception(at)
    assert any("left out" in w.value and "largest feasible l is 7" in w.value for w in at.warning)
    assert MECHANISMS["dbr"].title in _bands(at).columns
    at.text_input(key="w_q_sweep_values_anatomy").set_value("3, abc, 1").run()
    no_exception(at)
    errors = [e.value for e in at.error]
    assert any("Got abc" in e for e in errors) and any("Got 1" in e for e in errors)


def test_bad_workload_setting_in_a_link_is_reported_and_ignored():
    at = app(PAGE, query={**SMALL, "wl.queries": "1", "cmp": "dbr"})
    no_exception(at)
    assert any("Ignored from the link" in w.value and "Got 1" in w.value for w in at.warning)
    assert at.number_input(key="w_wl_seed000_queries").value == 5000  # the declared default


def test_nothing_to_compare_says_what_to_do():
    at = app(PAGE, query=SMALL)
    at.multiselect(key="w_q_compare").set_value([]).run()
    no_exception(at)
    assert any("Choose at least one mechanism" in i.value for i in at.info)
