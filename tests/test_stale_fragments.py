"""A polling fragment that a later run of the page no longer draws never runs again (``state.forget_earlier_fragments``).

Streamlit (1.67) forgets a run's fragments only when a later full run goes
to its end.  After a run that ends in ``st.stop()`` a fragment's timer
request still runs the old fragment, whose block Streamlit sends again at
its old place; the browser, which that run left with fewer elements, fails
with "Bad delta path index 21 (should be between [0, 1])" and shows a blank
page (``bench/load.py``: an uploading session on Home).  Here a small page
draws twenty lines and a polling fragment, then stops early above them;
the fragment's request is sent as the browser's timer sends it, over
Streamlit's own websocket protocol (no browser needed).  Without the call
the old fragment runs (Streamlit's behaviour, so the test can fail); with
it the server answers that the fragment no longer exists.  The server is
started here on loopback and stopped by its PID.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.test_browser import ROOT, streamlit_server

pytestmark = pytest.mark.slow

PAGE = f"""
import os, sys
sys.path.insert(0, {str(ROOT)!r})
import streamlit as st

if os.environ.get("WB_FORGET") == "1":
    from pages.ui import state
    state.forget_earlier_fragments()
if st.checkbox("Stop early", key="stop"):
    st.stop()
for i in range(20):
    st.write(f"line {{i}}")


@st.fragment(run_every=600)
def tick():
    st.write("tick")


tick()
"""
GONE = "does not exist anymore"


def _rerun(box: str | None = None, fragment: str = "") -> bytes:
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    rerun = msg.rerun_script
    rerun.query_string = ""
    if box is not None:
        widget = rerun.widget_states.widgets.add()
        widget.id, widget.bool_value = box, True
    if fragment:
        rerun.fragment_id, rerun.is_auto_rerun = fragment, True  # what the browser's timer sends
    return msg.SerializeToString()


async def _stale_fragment_run(url: str, log) -> tuple[list, bool]:
    """The deltas the fragment's request brought after a run that stopped early, and whether the server said it
    no longer has the fragment."""
    import websockets
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    async def read(ws) -> ForwardMsg:
        msg = ForwardMsg()
        msg.ParseFromString(await asyncio.wait_for(ws.recv(), 120))
        return msg

    async def run_to_end(ws, payload: bytes) -> list:
        await ws.send(payload)
        seen = []
        while not seen or seen[-1].WhichOneof("type") != "script_finished":
            seen.append(await read(ws))
        return seen

    async with websockets.connect(url.replace("http", "ws") + "/_stcore/stream", subprotocols=["streamlit"]) as ws:
        first = await run_to_end(ws, _rerun())
        fragment = next(m.auto_rerun.fragment_id for m in first if m.WhichOneof("type") == "auto_rerun")
        box = next(m.delta.new_element.checkbox.id for m in first
                   if m.WhichOneof("type") == "delta" and m.delta.new_element.WhichOneof("type") == "checkbox")
        await run_to_end(ws, _rerun(box))  # the checkbox ticked: the page stops above the lines and the fragment
        await ws.send(_rerun(box, fragment))
        deltas, deadline = [], time.monotonic() + 120
        while time.monotonic() < deadline:  # until the fragment has run, or the server has said it is gone
            if GONE in log.read_text(errors="replace"):
                return deltas, True
            try:
                msg = await asyncio.wait_for(ws.recv(), 0.2)
            except asyncio.TimeoutError:
                continue
            parsed = ForwardMsg()
            parsed.ParseFromString(msg)
            if parsed.WhichOneof("type") == "delta":
                deltas.append((list(parsed.metadata.delta_path), parsed.delta.fragment_id == fragment))
            if parsed.WhichOneof("type") == "script_finished":
                return deltas, GONE in log.read_text(errors="replace")
        pytest.fail("the server neither ran the fragment nor said it was gone within 120 s")


@pytest.mark.parametrize("forget", [False, True], ids=["streamlit-alone", "forgotten"])
def test_a_fragment_the_page_no_longer_draws_does_not_run(tmp_path, monkeypatch, forget):
    (tmp_path / "app.py").write_text(PAGE)
    monkeypatch.setenv("WB_FORGET", "1" if forget else "0")
    log = tmp_path / "server.log"
    with streamlit_server(root=tmp_path, args=("--logger.level", "info"), log=log) as url:
        deltas, gone = asyncio.run(_stale_fragment_run(url, log))
    if forget:
        assert gone and deltas == [], (deltas, log.read_text(errors="replace")[-1500:])
    else:  # Streamlit's own behaviour, which the call works around: the old block again, past the page's end
        assert ([0, 21], True) in deltas and not gone, deltas
