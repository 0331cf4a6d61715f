"""AppTest of the Attacks page and of the experiments section shared with the Query error page."""

from __future__ import annotations

import plotly.graph_objects as go
import pandas as pd
import pytest

from conftest import app, no_exception
from core import experiments as exps
from core.experiments import Experiment, ExperimentResult
from core.params import Param

PAGE = "pages/4_Attacks.py"


@pytest.mark.slow
def test_renders_its_tabs_or_an_empty_state():
    at = app(PAGE)
    no_exception(at)
    from pages.ui import attacks

    modules = attacks.discover()
    if modules:
        from pages.ui.layout import tab_label

        # short tab labels, so the strip fits (issue 23 §4); each tab starts with its view's full title
        assert [t.label for t in at.tabs] == [tab_label(m.TITLE) for m in modules]
        assert {m.TITLE for m in modules} <= {h.value for h in at.subheader}
    else:
        assert any("No attack views" in i.value for i in at.info)


def _fake(page: str):
    calls = []

    def run(data, settings, progress):
        calls.append(settings["k"])
        if progress:
            progress(1.0, "done")
        fig = go.Figure(go.Scatter(x=[1, 2, 3], y=[settings["k"]] * 3))
        return ExperimentResult(figures=[("A figure", fig, "What to read.")],
                                tables=[("A table", pd.DataFrame({"rows": [data.n]}), "Rows of the table.")],
                                notes=["A note."])

    exp = Experiment("fake", "Fake experiment", "nowhere", "Explains itself.",
                     (Param("k", "k", "a number", 2, kind="int", low=1, high=9),), run, page=page)
    return exp, calls


@pytest.mark.parametrize("page, path", [("attacks", PAGE), ("query_error", "pages/3_Query_error.py")])
@pytest.mark.slow
def test_experiments_run_on_demand_and_follow_their_settings(monkeypatch, page, path):
    exp, calls = _fake(page)
    monkeypatch.setitem(exps.EXPERIMENTS, "fake", exp)
    at = app(path)
    no_exception(at)
    # registered experiments come first (the registry is ordered); pick the fake one
    at.selectbox(key=f"w_exp_{page}").set_value("fake").run()
    assert at.selectbox(key=f"w_exp_{page}").value == "fake"
    assert calls == []  # nothing runs before the button
    at.button(key="w_exp_run_fake").click().run()
    no_exception(at)
    assert calls == [2]
    assert any("A note." in i.value for i in at.info)
    key = next(s.key for s in at.slider if s.key and "fake" in s.key)
    at.slider(key=key).set_value(5).run()
    no_exception(at)
    # a result already shown reruns with the new settings only when asked
    at.button(key="w_exp_run_fake").click().run()
    assert calls[-1] == 5


@pytest.mark.slow
def test_an_experiment_figure_shows_its_title_once(monkeypatch):
    from conftest import charts

    def run(data, settings, progress):
        own = go.Figure(go.Scatter(x=[1, 2], y=[1, 2]))
        own.update_layout(title={"text": "Error on this table (m = 14)"})
        same = go.Figure(go.Scatter(x=[1, 2], y=[2, 1]))
        same.update_layout(title={"text": "Figure 5 of the paper"})
        bare = go.Figure(go.Scatter(x=[1, 2], y=[3, 3]))
        return ExperimentResult(figures=[("Figure 4 of the paper", own, "c1"),
                                         ("Figure 5 of the paper", same, "c2"),
                                         ("Figure 6 of the paper", bare, "c3")])

    monkeypatch.setitem(exps.EXPERIMENTS, "titles", Experiment("titles", "Titles", "nowhere", "x", (), run,
                                                                 page="attacks"))
    at = app(PAGE)
    at.selectbox(key="w_exp_attacks").set_value("titles").run()
    at.button(key="w_exp_run_titles").click().run()
    no_exception(at)
    figs = charts(at)
    titles = [figs[f"exp_titles_fig_{i}"]["layout"]["title"]["text"] for i in range(3)]
    assert titles == ["Figure 4 of the paper<br><sup>Error on this table (m = 14)</sup>",
                      "Figure 5 of the paper", "Figure 6 of the paper"]
    # no second copy above the chart
    assert not [m for m in at.markdown if "Figure 4 of the paper" in m.value or "Figure 5 of the paper" in m.value]
