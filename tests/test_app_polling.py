"""A poll whose results are in ends its own timer (:func:`pages.ui.state.stop_polling`), without a second run of
the whole page; where it cannot name its fragment, it falls back to that run.

The browser side (the page goes quiet once the risk is drawn) is ``tests/test_browser_verdict_search.py``: its
``_quiet`` waits would time out if a poll kept running.
"""

from __future__ import annotations

from streamlit.runtime.scriptrunner_utils.script_run_context import ScriptRunContext
from streamlit.testing.v1 import AppTest


def _in_a_fragment():
    import streamlit as st

    from pages.ui import state

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1

    @st.fragment(run_every=30)
    def poll():
        st.write("everything is in")
        state.stop_polling()

    poll()
    st.write("below the poll")


def _outside_a_fragment():
    import streamlit as st

    from pages.ui import state

    st.session_state["runs"] = st.session_state.get("runs", 0) + 1
    if st.session_state["runs"] == 1:
        state.stop_polling()
    st.write("the page")


def _run(script, monkeypatch):
    sent = []
    real = ScriptRunContext.enqueue

    def enqueue(self, msg):
        sent.append(msg)
        return real(self, msg)

    monkeypatch.setattr(ScriptRunContext, "enqueue", enqueue)
    at = AppTest.from_function(script, default_timeout=30)
    at.run()
    assert not at.exception
    kinds = [m.WhichOneof("type") for m in sent]
    started = [m.auto_rerun.fragment_id for m, k in zip(sent, kinds) if k == "auto_rerun"]
    stopped = [list(m.stop_auto_rerun.fragment_ids) for m, k in zip(sent, kinds) if k == "stop_auto_rerun"]
    return at, started, stopped


def test_a_poll_ends_its_own_timer_and_the_page_is_not_run_again(monkeypatch):
    at, started, stopped = _run(_in_a_fragment, monkeypatch)
    assert len(started) == 1 and started[0]
    assert stopped == [started]  # the timer the fragment started, by its id, once
    assert at.session_state["runs"] == 1
    assert [m.value for m in at.markdown] == ["everything is in", "below the poll"]


def test_outside_a_fragment_the_page_runs_again_instead(monkeypatch):
    at, started, stopped = _run(_outside_a_fragment, monkeypatch)
    assert started == [] and stopped == []
    assert at.session_state["runs"] == 2  # the fallback: rerun_page, the slower way to the same page
    assert at.session_state["wb_auto_rerun"] is True  # marked as the page's own run (pages.ui.state.rerun_page)
