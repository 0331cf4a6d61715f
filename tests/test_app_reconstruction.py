"""AppTest of the reconstruction-privacy views: the Attacks page tabs and the Sanitize page view."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from conftest import OPEN_VIEW, app, charts, frame_with, metrics, no_exception, plain

ATTACKS = "pages/4_Attacks.py"
SANITIZE = "pages/1_Sanitize.py"


def _markdown(at) -> str:
    return "\n".join(plain(m.value) for m in at.markdown)


def _tab_labels(at) -> list[str]:
    """The attack views' full titles, one per tab (the tab shows its short label, the title heads the tab)."""
    from pages.ui.layout import TAB_LABELS

    full = {v: k for k, v in TAB_LABELS.items()}
    return [full.get(t.label, t.label) for t in at.tabs]


@pytest.mark.slow
def test_attacks_page_lists_both_views():
    at = app(ATTACKS)
    no_exception(at)
    labels = _tab_labels(at)
    assert "Micro-group reconstruction (seed 001)" in labels
    assert "Reconstruction from Laplace answers (seed 001 §6.3)" in labels
    assert not at.error, [e.value for e in at.error]


@pytest.mark.slow
def test_done_when_adult_micro_group_reconstruction():
    # Adult, occupation as SA, seven QIs, p = 0.46, lambda = delta = 0.5: 123 of 14,668 groups open under plain
    # UP, 0 in the RP release, and for the most exposed group the two estimate distributions side by side
    at = app(ATTACKS, query={"lambda": "0.5", "delta": "0.5", "mech": "reconstruction"})
    no_exception(at)
    text = _markdown(at)
    assert "plain UP leaves 123 of 14,668 micro groups open to reconstruction" in text
    assert "Algorithm 1 closes all of them: 0 open in the RP release" in text
    figs = charts(at)
    hist = figs["atk_reconstruction_hist"]
    names = [t["name"] for t in hist["data"]]
    assert names == ["plain UP", "RP (Algorithm 1)"]
    assert "atk_reconstruction_truth" in figs
    verdict = frame_with(at, "independent trials")
    assert list(verdict["release"]) == ["plain UP", "RP (Algorithm 1)"]
    assert list(verdict["test (bounds ≥ δ)"]) == ["OPEN", "private"]
    # the RP estimate is noisier: larger simulated chances of an error beyond lambda
    up, rp = verdict.iloc[0], verdict.iloc[1]
    assert rp["simulated, below −λ"] > up["simulated, below −λ"]
    assert rp["independent trials"] < up["independent trials"]


def _sidebar(at) -> str:
    return " ".join(c.value for c in at.sidebar.caption)


@pytest.mark.slow
def test_the_tab_the_sidebar_and_the_sanitize_page_show_the_same_lambda_and_delta():
    # a link without lambda/delta: the paper's 0.3/0.3 everywhere (the tab used to start at 0.5 on its own)
    at = app(ATTACKS, query={"mech": "reconstruction"})
    no_exception(at)
    assert at.select_slider(key="w_atk_reconstruction_lambda").value == 0.3
    assert at.select_slider(key="w_atk_reconstruction_delta").value == 0.3
    assert "λ = 0.3, δ = 0.3" in _sidebar(at)
    assert "plain UP leaves 0 of 14,668 micro groups open" in _markdown(at)
    # one click shows the attack at 0.5, and the sidebar, the link and the Sanitize page follow in the same run
    at.button(key="atk_reconstruction_demo").click().run()
    no_exception(at)
    assert "plain UP leaves 123 of 14,668 micro groups open" in _markdown(at)
    assert "λ = 0.5, δ = 0.5" in _sidebar(at)
    assert at.query_params["lambda"] == "0.5" and at.query_params["delta"] == "0.5"
    # a slider moved in the tab shows in the sidebar in the same run, not one run late
    at.select_slider(key="w_atk_reconstruction_delta").set_value(0.4).run()
    no_exception(at)
    assert "δ = 0.4" in _sidebar(at)
    at.switch_page(SANITIZE).run()
    no_exception(at)
    assert at.select_slider(key="w_m_reconstruction_lambda").value == 0.5
    assert at.select_slider(key="w_m_reconstruction_delta").value == 0.4


@pytest.mark.slow
def test_attack_widgets_move():
    at = app(ATTACKS, query={"lambda": "0.5", "delta": "0.5", "mech": "reconstruction"})
    no_exception(at)
    first = json.dumps(charts(at)["atk_reconstruction_hist"]["data"], sort_keys=True)
    # another target among the exposed groups
    assert len(at.selectbox(key="atk_reconstruction_group").options) == 100
    at.selectbox(key="atk_reconstruction_group").select_index(3).run()
    no_exception(at)
    assert json.dumps(charts(at)["atk_reconstruction_hist"]["data"], sort_keys=True) != first
    # another value of the group, fewer releases
    at.selectbox(key="atk_reconstruction_value").select_index(1).run()
    no_exception(at)
    at.select_slider(key="atk_reconstruction_releases").set_value(500).run()
    no_exception(at)
    # by QI values: cascading selects, each limited to values that occur with the ones before
    at.radio(key="atk_reconstruction_mode").set_value("by its QI values").run()
    no_exception(at)
    age = at.selectbox(key="atk_reconstruction_qi_0")
    assert age.value is not None
    at.selectbox(key="atk_reconstruction_qi_0").select_index(0).run()
    no_exception(at)
    assert "atk_reconstruction_hist" in charts(at)
    # parameters: the paper's defaults lambda = delta = 0.3 leave no group open
    at.select_slider(key="w_atk_reconstruction_lambda").set_value(0.3).run()
    at.select_slider(key="w_atk_reconstruction_delta").set_value(0.3).run()
    no_exception(at)
    assert "plain UP leaves 0 of 14,668 micro groups open" in _markdown(at)
    # lambda = delta = 0.9: not eligible, said in one sentence, nothing breaks
    at.select_slider(key="w_atk_reconstruction_lambda").set_value(0.9).run()
    at.select_slider(key="w_atk_reconstruction_delta").set_value(0.9).run()
    no_exception(at)
    assert any("lower p to at most" in w.value for w in at.warning)
    assert not at.error
    assert any("cannot repair it" in c.value for c in at.caption)
    assert list(frame_with(at, "independent trials")["release"]) == ["plain UP"]


@pytest.mark.slow
def test_output_perturbation_view():
    at = app(ATTACKS)
    no_exception(at)
    table = frame_with(at, "f in T")
    assert len(table) == 7 and (table["|g|"] >= 100).all()
    assert "atk_outpert_chart" in charts(at)
    at.slider(key="atk_outpert_groups").set_value(3).run()
    no_exception(at)
    assert len(frame_with(at, "f in T")) == 3
    at.radio(key="atk_outpert_chart_lam").set_value(0.3).run()
    no_exception(at)
    at.number_input(key="atk_outpert_min").set_value(5000).run()
    no_exception(at)
    assert any("No micro group has at least 5,000 records" in w.value for w in at.warning)
    at.number_input(key="atk_outpert_min").set_value(100).run()
    at.multiselect(key="atk_outpert_eps").set_value([]).run()
    no_exception(at)
    assert any("Choose at least one" in i.value for i in at.info)


def test_sanitize_view_lists_resampled_groups():
    at = app(SANITIZE, opened=OPEN_VIEW, query={"mech": "reconstruction", "lambda": "0.5", "delta": "0.5"})
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    m = metrics(at)
    assert m["micro groups"] == "14,668"
    assert m["open under plain UP"] == "123 groups" and m["open in this release"] == "0 groups"
    groups = frame_with(at, "records randomised")
    assert len(groups) == 123
    assert (groups["records randomised"] <= groups["threshold s_g (records)"]).all()
    assert (groups["records |g|"] > groups["threshold s_g (records)"]).all()
    assert "recon_scatter" in charts(at)


def test_sanitize_view_without_open_groups():
    at = app(SANITIZE, opened=OPEN_VIEW, query={"mech": "reconstruction"})
    no_exception(at)
    assert metrics(at)["open under plain UP"] == "0 groups"
    # said once, by the verdict (a warning: the guarantee is vacuous), not again as an info box
    assert [w.value for w in at.warning if "uniform perturbation under another name" in w.value]
    assert not [i.value for i in at.info if "plain UP" in i.value or "plain uniform" in i.value]


@pytest.mark.parametrize("query", [{"mech": "reconstruction", "lambda": "0.9", "delta": "0.9"}])
def test_sanitize_not_eligible_offers_the_largest_p(query):
    at = app(SANITIZE, opened=OPEN_VIEW, query=query)
    no_exception(at)
    assert any("lower p to at most" in w.value for w in at.warning)
    at.button(key="w_apply_suggestion").click().run()
    no_exception(at)
    assert metrics(at)["open in this release"] == "0 groups"


@pytest.mark.slow
def test_violations_experiment_on_the_attacks_page():
    at = app(ATTACKS)
    at.selectbox(key="w_exp_attacks").set_value("seed001-violations").run()
    at.button(key="w_exp_run_seed001-violations").click().run()
    no_exception(at)
    keys = set(charts(at))
    assert {f"exp_seed001-violations_fig_{i}" for i in range(4)} <= keys
    assert "violating groups (%)" in frame_with(at, "violating groups (%)").columns


@pytest.mark.slow
def test_error_experiment_on_the_query_error_page():
    at = app("pages/3_Query_error.py")
    no_exception(at)
    at.selectbox(key="w_exp_query_error").set_value("seed001-error").run()
    at.slider(key="w_exp_seed001-error_releases").set_value(1).run()
    at.number_input(key="w_exp_seed001-error_queries").set_value(300).run()
    at.button(key="w_exp_run_seed001-error").click().run()
    no_exception(at)
    table = frame_with(at, "RP / UP (large)")
    assert list(table["p"]) == [0.14, 0.22, 0.30, 0.38, 0.46]
    assert (table["violating groups under RP (%)"] == 0).all()


@pytest.mark.slow
def test_sanitize_scatter_says_when_it_draws_fewer_points(monkeypatch):
    """Adult's micro groups make fewer than 1,000 distinct (share, size) points of each colour: nothing is
    thinned and the caption says nothing of it; at 100 points a colour it says so (the legend names the counts,
    tests/test_reconstruction_experiments.py)."""
    at = app(SANITIZE, opened=OPEN_VIEW, query={"mech": "reconstruction", "lambda": "0.5", "delta": "0.5"})
    no_exception(at)
    assert "at most 1,000 points" not in " ".join(c.value for c in at.caption)
    from pages.ui.views import reconstruction as view

    monkeypatch.setattr(view, "SCATTER_POINTS", 100)
    at = app(SANITIZE, opened=OPEN_VIEW, query={"mech": "reconstruction", "lambda": "0.5", "delta": "0.5"})
    no_exception(at)
    captions = " ".join(c.value for c in at.caption)
    assert "Each colour draws at most 100 points" in captions
    assert "the table below lists the resampled groups" in captions


def test_sanitize_view_lists_the_furthest_resampled_groups_and_offers_all(monkeypatch):
    """Above SHOWN resampled groups the page lists the ones furthest over their threshold, says so, and offers the
    whole list as a CSV (census 5M: 2,354 groups made a 1.27 MB message on every slider move)."""
    query = {"mech": "reconstruction", "lambda": "0.5", "delta": "0.5"}
    whole = frame_with(app(SANITIZE, opened=OPEN_VIEW, query=query), "records randomised")
    assert len(whole) == 123
    from pages.ui.views import reconstruction as view

    monkeypatch.setattr(view, "SHOWN", 50)
    at = app(SANITIZE, opened=OPEN_VIEW, query=query)
    no_exception(at)
    listed = frame_with(at, "records randomised")
    assert len(listed) == 50
    pd.testing.assert_frame_equal(listed.reset_index(drop=True), whole.head(50).reset_index(drop=True))
    gap = whole["records |g|"] - whole["threshold s_g (records)"]
    assert gap.iloc[:50].min() >= gap.iloc[50:].max()
    assert "The 50 furthest over their threshold are listed; the CSV has all 123." in " ".join(c.value for c in at.caption)
    buttons = [b for b in at.get("download_button") if "recon_groups_csv" in str(b.proto.id)]
    assert len(buttons) == 1 and "All 123 resampled groups (CSV)" in buttons[0].proto.label
