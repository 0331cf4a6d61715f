"""Issue 23 §5 and issue 22 on Home: a change of SA, QI or banding ends its run without sanitizing eleven times
(the verdicts are checked behind the page, with a progress bar), and every verdict carries a count in people."""

from __future__ import annotations

import pytest

from conftest import app, no_exception
from core.mechanisms import MECHANISMS
from test_app_home import verdict_table

PEOPLE = "a count in people (95% interval)"


def _progress_texts(at) -> list[str]:
    return [el.proto.text for el in at.get("progress")]


@pytest.mark.slow  # the verdicts computed behind the page still cost their CPU (waited for before the test ends)
def test_a_change_on_home_leaves_the_verdicts_to_be_checked_behind_the_page(monkeypatch):
    from pages.ui import cached

    monkeypatch.setenv("WORKBENCH_VERDICT_SEARCH", "background")
    at = app(query={"data": "census:3000", "sa": "occupation"})
    try:
        no_exception(at)
        table = verdict_table(at)
        checking = table[table["meets"] == "checking…"]
        # nothing was sanitized in the run: every runnable mechanism is still being checked, and a bar says so
        assert len(checking) >= 8, table[["meets", "runs but fails", "cannot run"]].to_dict()
        assert (checking["runs but fails"] == "checking…").all()
        assert any("Checking each mechanism's guarantee on 3,000 records" in t for t in _progress_texts(at))
        # a change of SA: again the run ends at once, on the new columns
        at.selectbox(key="w_sa").set_value("education").run()
        no_exception(at)
        assert (verdict_table(at)["meets"] == "checking…").sum() >= 8
    finally:
        for future in list(cached._BACKGROUND.values()):  # leave no thread working for the next test
            future.result(timeout=300)


@pytest.mark.slow  # eleven verdicts, risks and count intervals on Adult
def test_every_verdict_on_home_carries_a_count_in_people(monkeypatch):
    """Issue 22: beside the measured risk, the count interval in people (Sanitize's and Query error's figure)."""
    from core.intervals import count_intervals, people
    from core.mechanisms import get

    monkeypatch.setenv("WORKBENCH_RISK", "inline")
    at = app(query={"data": "census:3000", "sa": "occupation"})
    no_exception(at)
    table = verdict_table(at)
    assert PEOPLE in table.columns
    runs = table[table["cannot run"] == ""]
    assert len(runs) >= 8
    for cell in runs[PEOPLE]:
        assert cell.startswith("10") and " · 1,000" in cell, cell
    # the cell is the same figure core computes for that release (UP at its defaults, seed 1)
    from core.table import bind, load_table

    t = load_table("census:3000")
    sa = "occupation"
    qi = tuple(at.session_state["wb_qi"])
    data = bind(t, sa, qi, {})
    mech = get("uniform")
    got = count_intervals(data, "uniform", mech.resolve({}), int(at.session_state["wb_seed"]))
    want = " · ".join(f"{c.count:,.0f}: none near" if c.half_width is None else f"{c.count:,.0f} ± {people(c.half_width)}"
                      for c in got.at)
    assert runs.loc[MECHANISMS["uniform"].title, PEOPLE] == want
    cannot = table[table["cannot run"] != ""]
    assert (cannot[PEOPLE] == "–").all()
