"""AppTest of the Papers page: every seed's figures and tables listed, one run with its verdict."""

from __future__ import annotations

import pytest
from conftest import app, no_exception

from core import papers

PAGE = "pages/8_Papers.py"


def test_lists_every_item_per_seed_before_any_run():
    at = app(PAGE)
    no_exception(at)
    summaries = [t.value for t in at.table]  # st.table, so long captions and verdicts wrap
    listed = sum(len(f) for f in summaries if {"caption", "verdict"} <= set(f.columns))
    assert listed == len(papers.ITEMS)
    # nothing runs before a button: only the static parameter tables carry a verdict yet
    assert not any(m.value.startswith("Verdict on") for m in at.markdown)


@pytest.mark.slow
def test_run_one_item_shows_the_paper_beside_ours():
    at = app(PAGE)
    at.selectbox(key="w_pp_item_004").set_value("004-fig10").run()
    at.button(key="w_pp_run_004-fig10").click().run()
    no_exception(at)
    rows = [t.value for t in at.table if "verdict" in t.value.columns]
    assert rows and rows[-1]["verdict"].iloc[0] == papers.NOT  # seed 004's tab is drawn last
    assert any(m.value.startswith("Verdict on census:100000") and "not reproduced" in m.value for m in at.markdown)


@pytest.mark.slow
def test_fig12_setting_opens_on_sanitize():
    from conftest import app as open_app

    item = papers.get("000-fig12")
    query = dict(kv.split("=", 1) for kv in item.explore.split("&"))
    at = open_app("pages/1_Sanitize.py", query=query)
    no_exception(at)
    assert at.session_state["wb_mech"] == "splu"
    notes = [w.value for w in at.warning if "Ignored" in w.value or "link" in w.value]
    assert not notes
    texts = [e.value for e in [*at.markdown, *at.info, *at.caption]]
    assert any("second sensitive attribute" in t and "age" in t for t in texts)
