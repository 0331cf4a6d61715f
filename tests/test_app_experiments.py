"""Every paper experiment on the Query error and Attacks pages: Run, change a widget, rerun (issue 13 §5).

A cached function that drew through a progress bar created outside it
raised ``CacheReplayClosureError`` on the rerun after a Run.  Each
registered experiment runs here on Adult (the slow ones at smaller
settings, set through their own widgets), then a widget outside the
experiment moves, then one of its own settings moves and moves back.
"""

from __future__ import annotations

import pytest

from conftest import app, no_exception
from core import experiments as exps
from pages.ui.params import grid_options

#: cheaper settings for the experiments that take seconds at their defaults (set through the page's widgets)
SMALL = {
    "seed001-error": {"queries": 300, "releases": 1},
    "seed003-error-vs-theta": {"thetas": "8", "queries": 200},
    "seed003-scaleup": {"gammas": "1"},
    "seed004-error-vs-beta": {"betas": "0.1", "selectivities": "0.05", "attrs": "1"},
    "seed004-error-vs-attrs": {"attrs": "3"},
    "seed004-error-vs-selectivity": {"selectivities": "0.05", "attrs": "1"},
}
PAGES = {"query_error": ("pages/3_Query_error.py", {"wl.queries": "300", "cmp": "uniform"}),
         "attacks": ("pages/4_Attacks.py", {"mech": "reconstruction"})}
CASES = [(page, e.name) for page in PAGES for e in exps.for_page(page)]


KINDS = ("number_input", "slider", "select_slider", "text_input", "checkbox", "toggle", "selectbox")


def _widget(at, key: str):
    """The widget with ``key``, whatever it is drawn as (a number box, a slider over presets, ...)."""
    for kind in KINDS:
        for w in at.get(kind):
            if getattr(w, "key", None) == key:
                return w
    raise KeyError(key)


def _set(at, name: str, param, value) -> None:
    w = _widget(at, f"w_exp_{name}_{param.name}")
    if w.type == "select_slider":  # a fine grid: the nearest of its options
        stops = grid_options(param, (w.value,))
        w.set_value(min(stops, key=lambda o: abs(o - float(value))))
    else:
        w.set_value(str(value) if param.kind == "text" else value)


def _outside_widget(at, page: str) -> None:
    """Move a widget that has nothing to do with the experiment (the issue's "change anything")."""
    if page == "query_error":
        at.number_input(key="w_wl_seed000_seed").set_value(5)
    else:  # the case: move lambda on the reconstruction tab
        _widget(at, "w_atk_reconstruction_lambda").set_value(0.4)


@pytest.mark.slow
@pytest.mark.parametrize("page, name", CASES)
def test_run_then_change_a_widget_then_rerun(page, name):
    path, query = PAGES[page]
    at = app(path, query=query)
    no_exception(at)
    at.selectbox(key=f"w_exp_{page}").set_value(name).run()
    exp = exps.get(name)
    params = {p.name: p for p in exp.params}
    # every text setting is typed (defaults or cheaper ones): the widget may start empty
    for pname, p in params.items():
        if p.kind == "text" or pname in SMALL.get(name, {}):
            _set(at, name, p, SMALL.get(name, {}).get(pname, p.default))
    at.run()
    no_exception(at)
    at.button(key=f"w_exp_run_{name}").click().run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    shown = len(at.get("plotly_chart")) + len(at.dataframe)
    assert shown, "the experiment drew nothing"
    assert not at.get("progress"), "the progress bar stays after the run finished"

    _outside_widget(at, page)
    at.run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    assert len(at.get("plotly_chart")) + len(at.dataframe) >= shown - 1  # the result is still drawn

    # one of its own settings moves (nothing runs until Run) and moves back (the kept result shows again)
    first = next((p for p in exp.params if p.kind in ("int", "float") and p.name != "seed"), None)
    if first is not None:
        before = _widget(at, f"w_exp_{name}_{first.name}").value
        stops = grid_options(first, (before,))
        if stops is not None:  # a select slider: the next stop, as ArrowRight moves
            i = stops.index(before)
            other = stops[i + 1] if i + 1 < len(stops) else stops[i - 1]
        else:
            other = before + (first.step or 1) if first.high is None or before + (first.step or 1) <= first.high \
                else before - (first.step or 1)
        _set(at, name, first, other)
        at.run()
        no_exception(at)
        _set(at, name, first, before)
        at.run()
        no_exception(at)
        assert not at.error, [e.value for e in at.error]
