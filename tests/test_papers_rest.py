"""Issue 16's remaining Papers items: timing figures without a ratio say why; Fig. 12 opens on Query error."""

from __future__ import annotations

import json

import pytest

from core import papers

TIMING = ("003-fig6", "004-fig11", "004-fig12")


def test_timing_figures_without_paper_times_say_why_there_is_no_ratio():
    for key in TIMING:
        item = papers.get(key)
        assert item.no_ratio == papers.NO_PAPER_TIMES
        assert "plain-text extractions" in item.no_ratio and "no axis value" in item.no_ratio
    # the timing items whose text prints a time keep their ratio and carry no such note
    for key in ("000-s65", "002-fig5"):
        assert papers.get(key).no_ratio == ""
    listed = {e["key"]: e for e in papers.listing()}
    assert listed["004-fig11"]["no_ratio"] == papers.NO_PAPER_TIMES and listed["000-s65"]["no_ratio"] is None
    json.dumps(papers.listing())  # the --list --json entries stay JSON
    html = papers.html_report(papers.get("003-fig6"), None, "not run", [], "census:300000")
    assert "No ratio to the paper's times: the paper gives these times only as plotted curves" in html


def test_fig12_query_error_link_names_the_joint_workload_on_census_2sa():
    item = papers.get("000-fig12")
    query = dict(kv.split("=", 1) for kv in item.query_error.split("&"))
    assert query["data"].startswith("census-2sa") and query["wl"] == "joint"
    assert query["sa2"] == query["wl.sa2"] == "age_interval" and query["mech"] == "splu"
    assert {e["key"]: e for e in papers.listing()}["000-fig12"]["query_error_link"] == f"Query_error?{item.query_error}"


@pytest.mark.slow
def test_papers_page_shows_why_a_timing_figure_has_no_ratio_and_the_fig12_links():
    from conftest import app, no_exception

    at = app("pages/8_Papers.py")
    at.selectbox(key="w_pp_item_004").set_value("004-fig11").run()
    no_exception(at)
    assert any(c.value.startswith("No ratio to the paper's times: the paper gives these times only as plotted")
               for c in at.caption)
    at.selectbox(key="w_pp_item_000").set_value("000-fig12").run()
    no_exception(at)
    urls = [b.proto.url for b in at.get("link_button")]
    assert any(u.startswith("Query_error?") and "wl=joint" in u for u in urls)
    assert any(u.startswith("Sanitize?") and "sa2=age_interval" in u for u in urls)
