"""A property test of the page state (issue 23 §1): random sequences of page actions through AppTest.

Mechanism switch, slider move, one-click fix, pin, undo, restore from the
history and table change are drawn by hypothesis; after each step the
Sanitize widgets, the release's manifest, the link and the stored setting
must name one setting, a new pin must be the setting it was made from, and
each table must show only the pins made on it.  The example budget is small
(a few sequences of a few steps on the toy tables) so it runs in about a
minute.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import app, no_exception, open_box
from test_app_setting import HOME, SANITIZE, _agree

pytestmark = pytest.mark.slow

TABLES = ("toy-splu", "toy-sdr")
MECHS = ("splu", "uniform", "anatomy", "mondrian")

ACTIONS = st.one_of(
    st.tuples(st.just("switch"), st.sampled_from(MECHS)),
    st.tuples(st.just("move"), st.integers(0, 10_000)),
    st.tuples(st.just("fix"), st.just(0)),
    st.tuples(st.just("pin"), st.just(0)),
    st.tuples(st.just("undo"), st.just(0)),
    st.tuples(st.just("restore"), st.integers(0, 60)),
    st.tuples(st.just("table"), st.sampled_from(TABLES)),
    st.tuples(st.just("reopen"), st.just(0)),
)


def _reopen(at) -> None:
    """Save the session as Home does (:func:`pages.ui.state.session_now`) and open the file on Home."""
    from core.session import Session, TableRef, to_bytes

    ss = at.session_state
    chash = ss["wb_bound_table"].split("|", 1)[0]
    mech = ss["wb_mech"]
    from core.session import Setting

    saved = Session(TableRef("sample", ss["wb_sample"], chash), ss["wb_sa"], tuple(ss["wb_qi"]),
                    Setting(mech, dict(ss["wb_params"].get(mech, {})), int(ss["wb_seed"])),
                    {m: dict(v) for m, v in ss["wb_params"].items()}, tuple(ss["wb_pins"]),
                    tuple(ss["wb_history"]), ss["wb_decision"], dict(ss["wb_bands"] or {}))
    at.switch_page(HOME).run()
    no_exception(at)
    at.file_uploader(key="w_session_file").set_value(("s.workbench.json", to_bytes(saved), "application/json")).run()
    no_exception(at)
    assert any("opened" in m.value.lower() or "session" in m.value.lower() for m in at.success), \
        [w.value for w in at.warning]
    at.switch_page(SANITIZE).run()


def _move(at, pick: int) -> None:
    """Move one parameter widget of the current mechanism to one of its stops."""
    mech = at.session_state["wb_mech"]
    widgets = [w for kind in ("select_slider", "slider") for w in at.get(kind)
               if getattr(w, "key", "") and w.key.startswith(f"w_m_{mech}_")]
    if not widgets:
        return
    w = widgets[pick % len(widgets)]
    if w.type == "select_slider":
        stops = _stops(w)  # one arrow-key press: the neighbouring stop
        i = min(range(len(stops)), key=lambda k: abs(stops[k] - w.value))
        w.set_value(stops[min(len(stops) - 1, max(0, i + (1 if pick % 2 else -1)))])
    else:
        lo, hi = w.min, w.max
        step = w.step or 1
        w.set_value(type(w.value)(min(hi, max(lo, w.value + (step if pick % 2 else -step)))))
    at.run()


def _stops(w):
    """The values a select_slider stops at (AppTest holds them formatted)."""
    from core.mechanisms import MECHANISMS
    from pages.ui.params import grid_options

    mech, _, name = w.key[len("w_m_"):].partition("_")
    p = next(q for q in MECHANISMS[mech].params if q.name == name)
    return grid_options(p, (w.value,))


def _click(at, key: str) -> bool:
    buttons = [b for b in at.button if b.key == key and not b.disabled]
    if buttons:
        buttons[0].click().run()
    return bool(buttons)


@settings(max_examples=6, deadline=None, database=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(st.lists(ACTIONS, min_size=4, max_size=8))
def test_widgets_manifest_link_and_pins_agree_after_every_action(actions):
    at = app(SANITIZE, query={"data": TABLES[0], "mech": "splu", "seed": "1"})
    no_exception(at)
    table = TABLES[0]
    pinned: dict[str, list] = {t: [] for t in TABLES}  # the model: each table's pins, as settings
    for kind, arg in actions:
        if kind == "switch":
            at.selectbox(key="w_mech").set_value(arg).run()
        elif kind == "move":
            _move(at, arg)
        elif kind == "fix":
            _click(at, "w_verdict_fix") or _click(at, "w_apply_suggestion")
        elif kind == "pin":
            before = at.session_state["wb_mech"], dict(at.session_state["wb_params"].get(at.session_state["wb_mech"], {}))
            if _click(at, "w_pin") and len(at.session_state["wb_pins"]) > len(pinned[table]):
                pin = at.session_state["wb_pins"][-1]
                assert (pin.setting.mechanism, dict(pin.setting.params)) == before
                assert pin.setting.seed == at.session_state["wb_seed"]
                pinned[table].append(pin.setting.key())
        elif kind == "undo":
            _click(at, "w_undo")
        elif kind == "restore":
            history = at.session_state["wb_history"]
            if history:
                open_box(at, "w_open_history")  # opening the history (drawn only while open)
                at.run()
                at.selectbox(key="w_history_pick").set_value(arg % len(history)).run()
                _click(at, "w_restore")
        elif kind == "reopen" and at.session_state["wb_sa"]:
            _reopen(at)
        elif kind == "table" and arg != table:
            at.switch_page(HOME).run()
            no_exception(at)
            at.selectbox(key="w_sample").set_value(arg).run()
            no_exception(at)
            at.switch_page(SANITIZE).run()
            table = arg
        no_exception(at)
        _agree(at)
        assert [p.setting.key() for p in at.session_state["wb_pins"]] == pinned[table], (kind, arg)
