"""Pin the current setting, undo, and the history of settings tried (Sanitize page and sidebar)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from core.mechanisms import MECHANISMS
from core.session import MAX_PINS, SessionError

from . import lazy, state
from .fmt import md
from .params import summary

COMPARE = "pages/7_Compare.py"
_MESSAGE = "wb_pin_message"


def _pin() -> None:
    ss = st.session_state
    name = (ss.get("w_pin_name") or "").strip() or state.default_pin_name()
    try:
        pin = state.pin_current(name)
    except SessionError as exc:
        ss[_MESSAGE] = ("warning", str(exc))
        return
    ss[_MESSAGE] = ("success", f"Pinned '{pin.name}' ({len(state.pins())} of {MAX_PINS}); compare the pins on the "
                               "Compare page. The address bar keeps the pins across a reload; the decision "
                               "record and the history are kept by saving the session on Home.")
    ss["w_pin_name"] = ""


def _undo() -> None:
    if not state.undo_setting():
        st.session_state[_MESSAGE] = ("warning", "Nothing to undo: this is the first setting tried in this session.")


def _restore() -> None:
    ss = st.session_state
    index = ss.get("w_history_pick")
    history = ss.get(state.HISTORY) or ()
    if isinstance(index, int) and 0 <= index < len(history):
        state.restore_setting(index)


def setting_text(setting) -> str:
    mech = MECHANISMS.get(setting.mechanism)
    if mech is None:
        return setting.mechanism
    return f"{mech.title}: {summary(mech.params, setting.params)}, seed {setting.seed}"


def undo_label() -> tuple[str, bool]:
    """The undo button's label (naming the setting it goes back to) and whether it can undo."""
    history = st.session_state.get(state.HISTORY) or ()
    if len(history) < 2:
        return "Undo", False
    return "Undo (one step back)", True


def pin_bar() -> None:
    """Name + pin button, undo, and the history with restore (draw after the parameters and seed)."""
    ss = st.session_state
    history = ss.get(state.HISTORY) or ()
    c1, c2, c3 = st.columns([2, 1, 1])
    with c1:
        st.text_input("Pin name", key="w_pin_name", max_chars=60, placeholder=state.default_pin_name(),
                      help="A name to find this setting by on the Compare page (empty: the placeholder).")
    with c2:
        st.write("")
        full = len(state.pins()) >= MAX_PINS
        st.button("📌 Pin this setting", key="w_pin", on_click=_pin, disabled=full,
                  help=(f"At most {MAX_PINS} pins; unpin one on the Compare page." if full else
                        "Keep the mechanism, its parameters and the seed to compare them side by side."))
    with c3:
        st.write("")
        label, can = undo_label()
        back = setting_text(history[-2]) if can else "nothing yet"
        st.button(label, key="w_undo", on_click=_undo, disabled=not can,
                  help=f"Go back to the setting tried before this one: {md(back)}.")
    message = ss.pop(_MESSAGE, None)
    if message:
        kind, text = message
        (st.success if kind == "success" else st.warning)(md(text))
    if state.pins():
        names = ", ".join(f"'{md(p.name)}'" for p in state.pins())
        st.caption(f"Pinned ({len(state.pins())} of {MAX_PINS}): {names}.")
        st.page_link(COMPARE, label="Compare the pins side by side", icon=":material/compare:")
    with lazy.expander(f"History: {len(history)} setting{'s' if len(history) != 1 else ''} tried in this session "
                       f"(the last {50} are kept)", key="w_open_history") as open_:
        if not open_:
            return
        if not history:
            st.caption("Nothing tried yet.")
            return
        rows = [{"#": i + 1, "mechanism": MECHANISMS[s.mechanism].title if s.mechanism in MECHANISMS else s.mechanism,
                 "parameters": summary(MECHANISMS[s.mechanism].params, s.params) if s.mechanism in MECHANISMS else "",
                 "seed": s.seed} for i, s in enumerate(history)]
        st.dataframe(pd.DataFrame(rows[::-1]), hide_index=True, key="history_table",
                     column_config={"parameters": st.column_config.TextColumn(width="large")})
        options = list(range(len(history)))[::-1]
        pick = state.seed_widget("w_history_pick", options[0], lambda v: v in options)
        h1, h2 = st.columns([3, 1])
        with h1:
            st.selectbox("Setting to restore", options, key="w_history_pick", index=state.index_of(options, pick),
                         format_func=lambda i: f"#{i + 1} {setting_text(history[i])}")
        with h2:
            st.write("")
            st.button("Restore", key="w_restore", on_click=_restore,
                      help="Make the chosen setting current again (it becomes the newest entry).")


def sidebar_undo() -> None:
    """A compact undo and the pin count for the sidebar."""
    label, can = undo_label()
    with st.sidebar:
        st.button(label, key="w_sidebar_undo", on_click=_undo, disabled=not can,
                  help="Go back to the setting tried before the current one.")
        n = len(state.pins())
        if n:
            st.caption(f"{n} pinned setting{'s' if n != 1 else ''}: see Compare.")
