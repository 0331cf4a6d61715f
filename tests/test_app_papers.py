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


def test_counts_come_from_the_recorded_full_run():
    """The page's counts are core.papers.counts of docs/papers.json, the record `bench/papers.py --json` writes."""
    rec = papers.recorded()
    assert rec is not None and [e["key"] for e in rec["entries"]] == [i.key for i in papers.ITEMS]
    at = app(PAGE)
    no_exception(at)
    want = papers.counts_text(papers.counts(e["verdict"] for e in rec["entries"]))
    assert any(c.value.startswith("Last full run of all 39 entries") and want in c.value for c in at.caption)
    verdicts = {}
    for t in at.table:
        f = t.value
        if {"caption", "verdict"} <= set(f.columns):
            verdicts.update(dict(zip(f["caption"], f["verdict"])))
    recorded = {e["key"]: e["verdict"] for e in rec["entries"]}
    for item in papers.ITEMS:
        if item.experiment is None:  # a table of settings is judged on the spot, against what the runs use
            assert verdicts[item.caption] == papers.judge(item, None)[0] == recorded[item.key]
        else:
            assert verdicts[item.caption] == f"last full run: {recorded[item.key]}"


@pytest.mark.slow
def test_run_one_item_shows_the_paper_beside_ours():
    at = app(PAGE)
    at.selectbox(key="w_pp_item_004").set_value("004-fig10").run()
    at.button(key="w_pp_run_004-fig10").click().run()
    no_exception(at)
    rows = [t.value for t in at.table if "tolerance" in t.value.columns]
    assert rows and rows[-1]["verdict"].iloc[0] == papers.NOT  # seed 004's tab is drawn last
    assert rows[-1]["tolerance"].iloc[0].startswith("every attribute")
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
