"""AppTest of the SDR view on the Sanitize page and of seed 002's experiments on the Query error page."""

from __future__ import annotations

import pytest

from conftest import OPEN_VIEW, app, charts, frame_with, metrics, no_exception, plain, open_box

SANITIZE = "pages/1_Sanitize.py"
QUERY = "pages/3_Query_error.py"
TOY = {"data": "toy-sdr", "mech": "sdr", "rho1": "1/3", "rho2": "2/3", "seed": "1"}


def _subtables(at):
    return frame_with(at, "sub-table")


def test_view_shows_example1_subtables_and_retention_chart():
    at = app(SANITIZE, opened=OPEN_VIEW, query=TOY)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    table = _subtables(at)
    # seed 002 Example 1: T1 has 36 records over x1..x6, T2 6 records; gamma 4 and 10, p 1/3 and 3/5
    assert table["sub-table"].tolist() == ["T1", "T2"]
    assert table["rows"].tolist() == [36, 6]
    assert table["mᵢ (values)"].tolist() == [6, 6]
    assert table["values SA_i"].tolist() == ["x1, x2, x3, x4, x5, x6", "x4, x6, x7, x8, x9, x10"]
    assert table["γᵢ"].tolist() == pytest.approx([4, 10])
    assert table["pᵢ (retention)"].tolist() == pytest.approx([1 / 3, 3 / 5])
    assert "sdr_retention" in charts(at)
    bars = charts(at)["sdr_retention"]["data"][0]["y"]
    assert bars == pytest.approx([1 / 3, 3 / 5])
    # UP's line is named in the legend: a label on the plot overlapped the T1 bar
    assert not charts(at)["sdr_retention"]["layout"].get("annotations")
    assert charts(at)["sdr_retention"]["data"][1]["name"] == "UP: one p = 23.08% over all 10 values"
    m = metrics(at)
    assert m["sub-tables"] == "2"
    assert m["UP retention (one table, all values)"] == "23.08%"  # 3/13, Example 1 unpartitioned
    # the construction expander: Example 3's band order g1, g3, g2, g4, g5 and Example 4's merge
    groups = frame_with(at, "initial group")
    assert groups["initial group"].tolist() == ["g1", "g3", "g2", "g4", "g5"]
    assert groups["merged into"].tolist() == ["T1", "T1", "T1", "T2", "T2"]


@pytest.mark.slow  # three page runs: about 1 s of CPU (the conftest check)
def test_moving_rho2_changes_the_partition():
    at = app(SANITIZE, opened=OPEN_VIEW, query=TOY)
    no_exception(at)
    before = _subtables(at).copy()
    at.select_slider(key="w_m_sdr_rho2").set_value(0.5).run()
    no_exception(at)
    after = _subtables(at)
    assert not after.equals(before)
    assert at.query_params["rho2"] == "0.5"
    at.select_slider(key="w_m_sdr_delta").set_value(0.2).run()
    no_exception(at)
    # delta scales the bounds but never changes the partition
    assert _subtables(at)["rows"].tolist() == after["rows"].tolist()


def test_nothing_protected_is_refused_with_a_suggestion_that_works():
    # every value of toy-sdr has at least 1/42 of the records: rho1 = 0.02 protects none
    at = app(SANITIZE, opened=OPEN_VIEW, query={**TOY, "rho1": "0.02"})
    no_exception(at)
    assert at.warning and "protects no value" in plain(at.warning[0].value)
    button = next(b for b in at.button if b.key == "w_apply_suggestion")
    button.click().run()
    no_exception(at)
    # it runs now; values more frequent than rho1 stay outside (rho1, rho2)-privacy: a qualified meets, said once
    assert len(at.warning) == 1 and "protects no value" not in plain(at.warning[0].value)
    assert plain(at.warning[0].value).startswith("**Meets its guarantee, qualified:** for values with a share")
    assert "No nearby setting" not in plain(at.warning[0].value)
    assert "T1" in _subtables(at)["sub-table"].tolist()


def test_rho1_above_rho2_is_one_clear_error():
    at = app(SANITIZE, opened=OPEN_VIEW, query={**TOY, "rho1": "0.7", "rho2": "0.6"})
    no_exception(at)
    assert len(at.error) == 1 and "rho1 < rho2" in plain(at.error[0].value)


@pytest.mark.slow  # near the 1 s CPU mark of tests/conftest.py (the risk and people intervals it now measures)
def test_hospital_view_shows_many_subtables_above_up():
    at = app(SANITIZE, opened=OPEN_VIEW, query={"data": "hospital:20000", "mech": "sdr", "seed": "1"})
    no_exception(at)
    table = _subtables(at)
    assert len(table) > 5
    up = float(metrics(at)["UP retention (one table, all values)"].rstrip("%")) / 100
    assert (table["pᵢ (retention)"] > 10 * up).all()  # 1,200 codes: UP keeps almost nothing


@pytest.mark.slow
def test_query_error_experiments_run_on_the_loaded_table():
    at = app(QUERY, query={"data": "toy-sdr", "wl": "seed002", "cmp": "sdr,uniform"})
    no_exception(at)
    at.selectbox(key="w_exp_query_error").set_value("seed002-retention").run()
    no_exception(at)
    at.button(key="w_exp_run_seed002-retention").click().run()
    no_exception(at)
    table = frame_with(at, "PP retention (record-weighted)")
    assert table["L"].tolist() == [6, 5, 4, 3]
    assert "UP (paper)" in frame_with(at, "UP (paper)").columns
    # error against L with Anatomy (toy-sdr is skewed: Anatomy suppresses records first)
    at.selectbox(key="w_exp_query_error").set_value("seed002-error-vs-l").run()
    at.button(key="w_exp_run_seed002-error-vs-l").click().run()
    no_exception(at)
    errors = frame_with(at, "mechanism")
    assert set(errors["mechanism"]) == {"PP", "UP", "Ana"}
    assert any("suppressed" in i.value for i in at.info)
    at.selectbox(key="w_exp_query_error").set_value("seed002-scatter").run()
    at.button(key="w_exp_run_seed002-scatter").click().run()
    no_exception(at)
    assert any(k.startswith("exp_seed002-scatter_fig") for k in charts(at))


def test_bounds_page_sdr_error_text_inputs_move_the_curve():
    import json

    at = app("pages/2_Bounds.py", query={"bound": "sdr-error"})
    no_exception(at)
    m = metrics(at)
    assert m["sub-tables at your counts"] == "2 sub-tables"  # Example 1's T1, T2
    before = json.dumps(charts(at)["chart_curve"]["data"], sort_keys=True)
    at.text_input(key="w_b_sdr-error_counts").set_value("30,30,20,20,10,10,5,5,5,5,5,5").run()
    no_exception(at)
    assert json.dumps(charts(at)["chart_curve"]["data"], sort_keys=True) != before
    names = [t["name"] for t in charts(at)["chart_curve"]["data"]]
    at.text_input(key="w_b_sdr-error_ms").set_value("2,1000").run()
    no_exception(at)
    names2 = [t["name"] for t in charts(at)["chart_curve"]["data"]]
    assert any("m = 1000" in n for n in names2) and names2 != names
    at.text_input(key="w_b_sdr-error_counts").set_value("a,b").run()
    no_exception(at)
    assert at.error and "whole numbers" in plain(at.error[0].value)


# ------------------------------------------------------------------ toy-sdr opens with Example 1's parameters
DIAGONAL = "P[x → x] = pᵢ + (1 − pᵢ)/mᵢ"


def _toy_from_home():
    at = app()
    at.selectbox(key="w_sample").set_value("toy-sdr").run()
    no_exception(at)
    at.switch_page(SANITIZE).run()
    open_box(at, "w_open_view")  # the view of the sub-tables is drawn only while open
    at.selectbox(key="w_mech").set_value("sdr").run()
    no_exception(at)
    return at


@pytest.mark.slow  # over 1 s of CPU (the conftest check)
def test_toy_sdr_chosen_on_home_opens_with_example1_exactly():
    at = _toy_from_home()
    assert not at.error and not at.warning
    assert at.query_params["rho1"] == "1/3" and at.query_params["rho2"] == "2/3"
    table = _subtables(at)
    assert table["rows"].tolist() == [36, 6]
    assert table["γᵢ"].tolist() == pytest.approx([4, 10], abs=1e-12)  # 0.333/0.667 gave 4.006/10.015
    # the paper's diagonal entries: 4/9 and 2/3
    assert table[DIAGONAL].tolist() == pytest.approx([4 / 9, 2 / 3], abs=1e-12)
    # the grid leads with what to compare; the long list of values comes last
    assert list(table.columns[:6]) == ["sub-table", "rows", "mᵢ (values)", "γᵢ", "pᵢ (retention)", DIAGONAL]
    assert table.columns[-1] == "values SA_i"
    assert any("seed 002 Example 1" in c.value and "ρ₁ = 1/3, ρ₂ = 2/3" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "w_use_paper"]


@pytest.mark.slow
def test_a_moved_slider_gets_the_paper_values_back_in_one_click():
    at = _toy_from_home()
    at.select_slider(key="w_m_sdr_rho2").set_value(0.665).run()
    no_exception(at)
    assert _subtables(at)["γᵢ"].tolist() != pytest.approx([4, 10])
    button = next(b for b in at.button if b.key == "w_use_paper")
    assert "ρ₁ = 1/3, ρ₂ = 2/3" in button.label
    button.click().run()
    no_exception(at)
    assert at.query_params["rho2"] == "2/3"
    assert _subtables(at)["γᵢ"].tolist() == pytest.approx([4, 10], abs=1e-12)


@pytest.mark.slow
def test_another_table_takes_the_suggestion_back_but_keeps_what_the_user_moved():
    at = _toy_from_home()
    at.select_slider(key="w_m_sdr_rho2").set_value(0.5).run()
    at.switch_page("pages/0_Home.py").run()
    at.selectbox(key="w_sample").set_value("adult").run()
    no_exception(at)
    stored = at.session_state["wb_params"]["sdr"]
    assert "rho1" not in stored or stored["rho1"] == pytest.approx(1 / 13)  # back to the default
    assert stored["rho2"] == 0.5  # moved by the user: kept
    assert "rho1" not in at.session_state["wb_params"].get("uniform", {})


def test_a_links_own_parameters_win_over_the_tables_suggestion():
    at = app(SANITIZE, opened=OPEN_VIEW, query={"data": "toy-sdr", "mech": "sdr", "rho1": "0.2", "seed": "1"})
    no_exception(at)
    assert at.query_params["rho1"] == "0.2" and at.query_params["rho2"] == "2/3"
    assert [b for b in at.button if b.key == "w_use_paper"]
