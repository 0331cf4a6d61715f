"""AppTest of pins, history/undo and the Compare page (issue 13 §2)."""

from __future__ import annotations

import pytest

from conftest import app, no_exception, plain, open_box

SANITIZE = "pages/1_Sanitize.py"
COMPARE = "pages/7_Compare.py"


def _pin(at, name):
    at.text_input(key="w_pin_name").set_value(name)
    at.button(key="w_pin").click().run()
    no_exception(at)
    return at


def _gamma(at, value):
    at.slider(key="w_m_splu_gamma").set_value(value).run()
    no_exception(at)
    return at


@pytest.mark.slow
def test_pin_compare_make_current_and_unpin():
    at = app(SANITIZE, query={"mech": "splu", "gamma": "5", "seed": "3"})
    no_exception(at)
    _pin(at, "gamma five")
    assert any("Pinned 'gamma five' (1 of 6)" in plain(s.value) for s in at.success)
    _gamma(at, 7)
    _pin(at, "gamma seven")
    at.selectbox(key="w_mech").set_value("uniform").run()
    _pin(at, "")  # empty name: the suggested one
    assert len(at.session_state["wb_pins"]) == 3
    assert at.session_state["wb_pins"][2].name.startswith("uniform")
    _pin(at, "gamma seven")  # taken: one warning, nothing added
    assert any("exists already" in plain(w.value) for w in at.warning)
    assert len(at.session_state["wb_pins"]) == 3

    at.switch_page(COMPARE).run()
    no_exception(at)
    table = at.table[0].value
    assert list(table.columns) == ["gamma five", "gamma seven", at.session_state["wb_pins"][2].name]
    items = list(table.index)
    assert "verdict" in items and "records published (rows)" in items
    bands = [i for i in items if i.startswith("query error · ")]
    assert len(bands) >= 3
    row = table.loc
    assert row["parameters", "gamma five"].startswith("γ = 5")
    assert row["parameters", "gamma seven"].startswith("γ = 7")
    assert row["seed", "gamma five"] == "3"
    # the same workload for all: SPLU at gamma 7 hides small counts more than at gamma 5 (error higher)
    small = bands[0]
    assert float(row[small, "gamma seven"]) > float(row[small, "gamma five"])
    assert row["records published (rows)", "gamma five"] == "45,222 of 45,222"
    from conftest import charts

    figs = charts(at)
    assert "compare_sa" in figs and "compare_bands" in figs
    assert [t["name"] for t in figs["compare_sa"]["data"]][:3] == ["original", "gamma five", "gamma seven"]
    # one click makes a pin current again; Sanitize shows it
    at.button(key="w_pin_current_gamma five").click().run()
    no_exception(at)
    assert at.session_state["wb_mech"] == "splu" and at.session_state["wb_params"]["splu"]["gamma"] == 5
    at.switch_page(SANITIZE).run()
    no_exception(at)
    assert at.selectbox(key="w_mech").value == "splu"
    assert at.slider(key="w_m_splu_gamma").value == 5
    assert at.number_input(key="w_seed").value == 3
    # pins survive the page switches; unpin drops one
    at.switch_page(COMPARE).run()
    at.button(key="w_unpin_gamma seven").click().run()
    no_exception(at)
    assert [p.name for p in at.session_state["wb_pins"]][:2] == ["gamma five", at.session_state["wb_pins"][1].name]
    assert "gamma seven" not in [p.name for p in at.session_state["wb_pins"]]


@pytest.mark.slow
def test_undo_goes_one_step_back_and_restore_brings_any_back():
    at = app(SANITIZE, query={"mech": "splu", "gamma": "5"})
    _gamma(at, 7)
    at.number_input(key="w_seed").set_value(2).run()  # another action: the moves of gamma around it are two
    _gamma(at, 9)
    at.number_input(key="w_seed").set_value(1).run()
    history = at.session_state["wb_history"]
    assert [s.params["gamma"] for s in history] == [5, 7, 7, 9, 9]
    for _ in range(3):  # three actions back: the second seed change, the second move of gamma, the first seed change
        at.button(key="w_undo").click().run()
        no_exception(at)
    assert at.slider(key="w_m_splu_gamma").value == 7 and at.number_input(key="w_seed").value == 1
    assert [s.params["gamma"] for s in at.session_state["wb_history"]] == [5, 7]
    at.button(key="w_sidebar_undo").click().run()  # the sidebar's undo does the same
    assert at.slider(key="w_m_splu_gamma").value == 5
    assert at.button(key="w_undo").disabled  # nothing before the first setting
    _gamma(at, 12)
    assert not any(s.key == "w_history_pick" for s in at.selectbox)  # the history is drawn only while open
    open_box(at, "w_open_history")  # what opening it sets
    at.run()
    at.selectbox(key="w_history_pick").set_value(0).run()
    at.button(key="w_restore").click().run()
    no_exception(at)
    assert at.slider(key="w_m_splu_gamma").value == 5
    assert [s.params["gamma"] for s in at.session_state["wb_history"]] == [5, 12, 5]


def test_compare_without_pins_says_what_to_do():
    at = app(COMPARE)
    no_exception(at)
    assert any("Nothing is pinned yet" in i.value for i in at.info)
    # what a reload keeps and what it does not, said instead of lost silently
    assert any("a browser reload keeps them" in i.value and "decision record and the history are kept only by the "
               "saved session" in i.value for i in at.info)


def test_pinning_says_what_a_reload_keeps():
    at = app(SANITIZE, query={"mech": "uniform", "seed": "1"})
    _pin(at, "kept")
    said = [plain(s.value) for s in at.success if "Pinned 'kept'" in plain(s.value)]
    assert len(said) == 1 and "The address bar keeps the pins across a reload" in said[0]
    assert "the decision record and the history are kept by saving the session on Home" in said[0]


@pytest.mark.slow
def test_a_reload_keeps_the_pins_through_the_address_bar():
    """A reload is a new session on the same URL: the pins come back from ``pins=``; the decision does not."""
    at = app(SANITIZE, query={"mech": "splu", "gamma": "5", "seed": "3"})
    _pin(at, "five, <b>bold</b>")
    _gamma(at, 7)
    _pin(at, "seven")
    link = dict(at.query_params)
    assert "pins" in link
    again = app(SANITIZE, query={k: (v[-1] if isinstance(v, list) else v) for k, v in link.items()})
    no_exception(again)
    pins = again.session_state["wb_pins"]
    assert [p.name for p in pins] == ["five, <b>bold</b>", "seven"]
    assert [(p.setting.mechanism, p.setting.params["gamma"], p.setting.seed) for p in pins] == [("splu", 5, 3),
                                                                                                ("splu", 7, 3)]
    assert again.session_state["wb_decision"] is None and not again.warning


def test_a_damaged_pins_link_is_one_note_and_no_pins():
    at = app(SANITIZE, query={"mech": "uniform", "seed": "1",
                              "pins": '[{"name":"x","mechanism":"nope","params":{},"seed":1}]'})
    no_exception(at)
    assert at.session_state["wb_pins"] == ()
    said = [plain(w.value) for w in at.warning if "the link's pins" in plain(w.value)]
    assert len(said) == 1 and "names the mechanism 'nope'" in said[0] and "pin the settings again" in said[0]


@pytest.mark.slow
def test_decision_record_is_kept_across_pages():
    at = app(SANITIZE, query={"mech": "splu", "gamma": "5"})
    _pin(at, "five")
    _gamma(at, 8)
    _pin(at, "eight")
    at.switch_page(COMPARE).run()
    no_exception(at)
    at.selectbox(key="w_decision_chosen").set_value("eight").run()
    at.text_area(key="w_decision_rationale").set_value("Small counts hidden; <b>large</b> useful.").run()
    at.text_input(key="w_decision_reviewers").set_value("Ann, Bob").run()
    at.switch_page(SANITIZE).run()  # the draft survives a page switch
    at.switch_page(COMPARE).run()
    assert at.text_area(key="w_decision_rationale").value == "Small counts hidden; <b>large</b> useful."
    at.button(key="w_decision_record").click().run()
    no_exception(at)
    d = at.session_state["wb_decision"]
    assert d.chosen == "eight" and d.reviewers == ("Ann", "Bob") and d.alternatives(at.session_state["wb_pins"]) == ["five"]
    assert set(d.verdicts) == {"five", "eight"}
    assert any("Recorded:" in m.value for m in at.markdown)


@pytest.mark.slow
def test_side_by_side_is_a_wrapping_table_with_the_whole_verdict():
    """At 1,400 px the dataframe cut the verdict ("meets its guarantee: 6 value(s) with 33,") and the band names."""
    at = app(SANITIZE, query={"mech": "uniform", "seed": "1"})
    _pin(at, "up one")
    at.switch_page(COMPARE).run()
    no_exception(at)
    assert not [el for el in at.dataframe if "up one" in el.value.columns]  # a static table, which wraps
    verdict = at.table[0].value.loc["verdict", "up one"]
    assert verdict.startswith("meets its guarantee") and verdict.endswith(").")  # the whole sentence, not cut


@pytest.mark.slow
def test_report_reuses_the_map_the_trade_offs_page_measured(monkeypatch):
    """The decision report's map: the Trade-offs page's points for the same settings, not measured again."""
    import core.risk as risk

    at = app(SANITIZE, query={"mech": "splu", "gamma": "5", "seed": "1"})
    _pin(at, "five")
    at.selectbox(key="w_mech").set_value("dbr").run()
    _pin(at, "dbr")
    at.switch_page("pages/5_Trade-offs.py").run()
    at.multiselect(key="w_to_mechs").set_value(["splu", "dbr"]).run()
    at.button(key="w_to_run").click().run()
    no_exception(at)
    calls = []
    real = risk.measure_release
    monkeypatch.setattr(risk, "measure_release", lambda *a, **k: calls.append(a[1].mechanism) or real(*a, **k))
    at.switch_page(COMPARE).run()
    at.selectbox(key="w_decision_chosen").set_value("five").run()
    at.button(key="w_decision_record").click().run()
    at.button(key="w_decision_report").click().run()
    no_exception(at)
    report = at.session_state["wb_decision_report"]
    assert "Decision" in report and "risk" in report.lower()
    assert calls == []  # every point of the map came from the cache the Trade-offs page filled
    assert any(b.label == "Download the report (HTML)" for b in at.get("download_button"))


@pytest.mark.slow
def test_every_pin_carries_its_measured_risk_and_counts_in_people(monkeypatch):
    """Issue 22: each pin shows the added risk with its interval, in words, and a count's interval in people."""
    monkeypatch.setenv("WORKBENCH_RISK", "inline")
    pins = ('[{"name":"UP half","mechanism":"uniform","params":{"p":"0.5"},"seed":1},'
            '{"name":"UP keeps little","mechanism":"uniform","params":{"p":"0.05"},"seed":1}]')
    at = app("pages/7_Compare.py", query={"mech": "uniform", "seed": "1", "pins": pins})
    no_exception(at)
    table = at.table[0].value
    risk = table.loc["measured risk (added, 95% interval)"]
    high, low = (float(risk[n].split()[0]) for n in ("UP half", "UP keeps little"))
    assert high > low  # keeping half of the values teaches more than keeping one in twenty
    assert table.loc["measured risk · in words"]["UP half"].startswith("An attacker who knows a person's")
    assert "is published as 10 +/- " in table.loc["a count in people (95% of the time)"]["UP half"]
