"""A widget the browser draws without its state still shows the setting (the link's seed stayed 105).

Found in chromium: right after a link to the Sanitize page opened, a
fragment's timed rerun raced the first run's drawing and the browser dropped
the state of some widgets (3 to 7 fresh loads in 12 to 23).  A widget drawn
again without its state shows the *default* it was sent, and sends that back.
The seed box (default: its minimum, 0) and the "derive p automatically" boxes
(default: unticked) then replaced the link's seed 105 and p = auto with 0 and
p = 0.2, in the address bar, the sidebar and the release, with nobody
touching anything.

The fix gives every widget that :func:`pages.ui.state.bind_widget` or
:func:`pages.ui.state.seed_widget` draws from a stored value that value as
its default as well.  These tests read, on each page, every such widget's
default as the browser receives it (its protobuf message) and check it is
what the widget shows; then they send each widget's default back, as a browser
that lost the state does, and check nothing in the setting changed.
"""

from __future__ import annotations

import json

import pytest

from conftest import app, no_exception

SANITIZE = "pages/1_Sanitize.py"

KINDS = ("checkbox", "toggle", "number_input", "selectbox", "radio", "multiselect", "slider", "select_slider",
         "text_input", "text_area", "date_input")


def _bound(at) -> dict:
    """Widgets drawn from the store in the last run (``wb_drawn``), by key."""
    drawn = at.session_state["wb_drawn"]
    return {w.key: w for kind in KINDS for w in at.get(kind) if getattr(w, "key", None) in drawn}


def _default_and_shown(w) -> tuple:
    """(what the browser shows without the widget's state, what the widget shows now), comparably."""
    p = w.proto
    if w.type in ("checkbox", "toggle"):
        return p.default, w.value
    if w.type == "number_input":
        return (p.default if p.HasField("default") else None), float(w.value)
    if w.type in ("selectbox", "radio"):
        return (p.default if p.HasField("default") else None), w.index
    if w.type == "multiselect":
        return list(p.default), list(w.indices)
    if w.type == "slider":
        return list(p.default), list(w._widget_state.double_array_value.data)
    if w.type == "select_slider":
        return [w.options[int(i)] for i in p.default], list(w._widget_state.string_array_value.data)
    if w.type == "date_input":
        return list(p.default), list(w._widget_state.string_array_value.data)
    return p.default, w.value  # text_input, text_area


def _mismatches(at) -> list:
    return [(key, *_default_and_shown(w)) for key, w in _bound(at).items()
            if _default_and_shown(w)[0] != _default_and_shown(w)[1]]


def _send_defaults(at) -> None:
    """Set the bound widgets to their defaults, as a browser that lost their state sends them.

    The kinds whose default reads back as a value directly: boxes, numbers, texts.
    """
    for w in _bound(at).values():
        p = w.proto
        if w.type == "selectbox":
            w.select_index(p.default)
        elif w.type == "number_input":
            w.set_value(int(p.default) if p.data_type == p.INT else p.default)
        elif w.type in ("checkbox", "toggle", "text_input", "text_area"):
            w.set_value(p.default)
    at.run()
    no_exception(at)


def _setting(at) -> tuple:
    ss = at.session_state
    return ss["wb_mech"], dict(ss["wb_params"].get(ss["wb_mech"], {})), ss["wb_seed"], dict(at.query_params)


LINK = {"data": "adult", "sa": "occupation", "mech": "splu", "gamma": "5", "seed": "105"}


@pytest.mark.slow
def test_a_link_s_sanitize_widgets_are_sent_their_shown_value_as_default():
    at = app(SANITIZE, LINK)
    no_exception(at)
    bound = _bound(at)
    # the widgets of the defect are among those checked
    assert {"w_seed", "w_mech", "w_m_splu_gamma", "w_m_splu_p__auto", "w_m_splu_sa2__auto"} <= set(bound)
    assert bound["w_seed"].value == 105 and bound["w_m_splu_p__auto"].value is True
    assert _mismatches(at) == []
    before = _setting(at)
    assert before[2] == 105 and before[1].get("p") is None
    _send_defaults(at)
    assert _setting(at) == before
    assert at.number_input(key="w_seed").value == 105


@pytest.mark.slow
def test_every_mechanism_s_widgets_are_sent_their_shown_value_as_default():
    from core.mechanisms import MECHANISMS

    at = app(SANITIZE, {"data": "adult", "sa": "occupation", "seed": "7"})
    for name in MECHANISMS:
        at.selectbox(key="w_mech").set_value(name)
        at.run()
        no_exception(at)
        assert _mismatches(at) == [], name
        before = _setting(at)
        _send_defaults(at)
        assert _setting(at) == before, name


@pytest.mark.slow
@pytest.mark.parametrize("page, query", [
    ("pages/0_Home.py", {"data": "adult", "sa": "occupation", "qi": "age,sex,race", "band.age": "10"}),
    ("pages/2_Bounds.py", {"data": "adult", "sa": "occupation", "bound": "splu-utility", "bound.gamma": "9"}),
    ("pages/3_Query_error.py", {"data": "adult", "sa": "occupation", "mech": "anatomy", "wl.queries": "400",
                                "cmp": "anatomy,uniform"}),
    ("pages/5_Trade-offs.py", {"data": "adult", "sa": "occupation"}),
    ("pages/7_Compare.py", {"data": "adult", "sa": "occupation", "pins": json.dumps(
        [{"name": "five", "mechanism": "splu", "params": {"gamma": "5"}, "seed": 1},
         {"name": "nine", "mechanism": "splu", "params": {"gamma": "9"}, "seed": 1}])}),
])
def test_each_page_s_stored_widgets_are_sent_their_shown_value_as_default(page, query):
    at = app(page, query)
    no_exception(at)
    assert len(_bound(at)) >= 2, sorted(_bound(at))
    assert _mismatches(at) == []
