"""AppTest of the Trade-offs page: map, details, recommender, report, and the link round trip."""

from __future__ import annotations

import pytest
from conftest import app, charts, no_exception

from core.mechanisms import MECHANISMS

PAGE = "pages/5_Trade-offs.py"
FEW = ["uniform", "laplace", "dbr"]


def measured(query=None):
    at = app(PAGE, query={"to": ",".join(FEW), "to.queries": "300", "to.records": "300", **(query or {})})
    no_exception(at)
    at.button(key="w_to_run").click().run()
    no_exception(at)
    return at


def test_nothing_runs_before_the_button():
    at = app(PAGE, query={"to": "uniform"})
    no_exception(at)
    assert "chart_map" not in charts(at)
    # the map's empty axes say where the points will be (and load the chart library before the measurement)
    empty = charts(at)["chart_map_empty"]
    assert empty["data"] == [] and "drawn here" in empty["layout"]["title"]["text"]
    assert empty["layout"]["xaxis"]["title"]["text"].startswith("added risk")
    assert empty["layout"]["xaxis"]["range"] == [0, 1] and empty["layout"]["yaxis"]["range"] == [-3, 0]
    # no numbers to tabulate yet: a text alternative says what the empty chart is (every other chart has a table)
    alt = next(el.proto.alt for el in at.get("plotly_chart") if el.proto.id.endswith("chart_map_empty"))
    assert alt.startswith("Empty risk-utility map") and "once measured" in alt


def test_what_the_button_needs_is_built_while_the_page_waits_and_only_on_a_small_table(monkeypatch):
    from pages.ui import cached

    built = []
    monkeypatch.setattr(cached, "map_ready", lambda data, jobs, *a: built.append((data.n, len(jobs))))
    at = app(PAGE, query={"to": "uniform", "to.queries": "300", "to.records": "300"})
    no_exception(at)
    assert built == [(45_222, len(MECHANISMS["uniform"].sweep))]  # Adult, UP's sweep: before any click
    monkeypatch.setattr(cached, "FORK_MAX_ROWS", 45_221)
    built.clear()
    at.run()
    no_exception(at)
    assert built == []  # a larger table: nothing is built until the button is pressed


def test_inputs_that_cannot_be_built_before_the_click_leave_the_page_waiting(monkeypatch):
    from core.errors import NotEligible
    from pages.ui import cached

    def cannot(*a):
        raise NotEligible("The workload cannot be built on this table.")

    monkeypatch.setattr(cached, "map_ready", cannot)
    at = app(PAGE, query={"to": "uniform"})
    no_exception(at)
    assert not at.error and "chart_map_empty" in charts(at)  # said when the button is pressed, not before


@pytest.mark.slow
def test_the_empty_map_gives_way_to_the_measured_one():
    at = measured()
    assert "chart_map" in charts(at) and "chart_map_empty" not in charts(at)


@pytest.mark.slow
def test_map_table_and_front():
    at = measured()
    fig = charts(at)["chart_map"]
    names = [tr["name"] for tr in fig["data"]]
    assert "Pareto front (best trade-offs)" in names
    table = at.dataframe[0].value
    assert set(table["mechanism"].str[:7]) >= {"Uniform", "Laplace", "Distrib"}
    assert table["on the front"].any()
    # the risk scale: the map's default x is the added risk, drawn with its 95% interval as error bars
    assert table["added risk"].between(0, 1).all() and table["95% interval"].str.match(r"^\d\.\d{3}-\d\.\d{3}$").all()
    assert fig["layout"]["xaxis"]["title"]["text"].startswith("added risk")
    assert all(tr.get("error_x", {}).get("array") for tr in fig["data"] if tr.get("mode") == "lines+markers")
    # switching the risk axis redraws the map with another x
    before = fig["layout"]["xaxis"]["title"]["text"]
    at.selectbox(key="w_to_risk").set_value("small_sum_disclosure").run()
    assert charts(at)["chart_map"]["layout"]["xaxis"]["title"]["text"] != before


def _recs(at):
    """The recommender's table (a static table since issue 23 §4: every column shown, long settings wrapped)."""
    return next(t.value for t in reversed(at.table) if "meets all targets" in t.value.columns)


@pytest.mark.slow
def test_recommender_follows_its_targets():
    at = measured()
    recs = _recs(at)
    assert "meets all targets" in recs.columns
    strict = measured({"to.large_error": "0.01", "to.small_privacy": "1"})
    recs2 = _recs(strict)
    assert (recs2["meets all targets"] == "no").all()
    assert set(recs2["binding target"]) <= {"small counts", "large counts", "inference lift", "added risk"}


@pytest.mark.slow
def test_laplace_is_said_to_be_per_answer_where_it_is_put_forward():
    at = measured()
    table = at.dataframe[0].value
    front = set(table.loc[table["on the front"], "mechanism"])
    map_caption = next(c.value for c in at.caption if c.value.startswith("Lower left is better"))
    laplace = MECHANISMS["laplace"].title
    assert ("per answer" in map_caption) == (laplace in front)
    recs = _recs(at).set_index("mechanism")
    assert recs.loc[laplace, "setting"].endswith("(per answer)")
    assert not recs.loc[MECHANISMS["uniform"].title, "setting"].endswith("(per answer)")
    assert any("k·ε" in c.value and "Laplace" in c.value for c in at.caption)


def test_left_out_settings_name_their_values():
    # QA: on toy-ambiguity the list held four identical "Small domain randomization (PP): ..." lines
    at = app(PAGE, query={"data": "toy-ambiguity", "to": "sdr", "to.queries": "100", "to.records": "100"})
    at.button(key="w_to_run").click().run()
    no_exception(at)
    text = next(w.value for w in at.warning if "Left out" in w.value)
    lines = [line[2:] for line in text.splitlines() if line.startswith("- ")]
    sdr = MECHANISMS["sdr"]
    assert len(lines) >= 2 and len(set(lines)) == len(lines)
    assert all(f" at {sdr.main_param} = " in line for line in lines)


@pytest.mark.slow
def test_recommender_targets_are_on_or_off_and_e_large_takes_presets():
    at = measured()
    labels = [c.label for c in at.checkbox]
    # QA: the checkbox read "derive P_small automatically" where it means "no target"
    assert not any("derive" in label for label in labels)
    assert {"set a target for P_small", "set a target for E_large", "set a target for L_max"} <= set(labels)
    at.checkbox(key="w_to_goal_small_privacy__on").uncheck().run()
    no_exception(at)
    recs = _recs(at)
    assert "small counts" not in recs.columns and "large counts" in recs.columns
    assert at.query_params["to.small_privacy"] == "auto"
    # E_large: 5% and 10% are steps of its scale, not two points on a linear 0.01-10 slider
    e_large = at.select_slider(key="w_to_goal_large_error")
    assert {"0.05", "0.1"} <= set(e_large.options)
    e_large.set_value(0.05).run()
    no_exception(at)
    assert at.query_params["to.large_error"] == "0.05"
    assert any("mean error below 5%" in c.value for c in at.caption)


@pytest.mark.slow
def test_link_round_trip():
    at = measured({"to.max_lift": "2"})
    link = dict(at.query_params)
    assert link["to"] == ",".join(FEW) and link["to.max_lift"] == "2" and link["to.queries"] == "300"
    again = app(PAGE, query=link)
    no_exception(again)
    assert again.multiselect(key="w_to_mechs").value == FEW
    # QA: every point was measured already, yet the map waited for the button: now it is drawn at once
    assert "chart_map" in charts(again)
    assert again.dataframe[0].value.equals(at.dataframe[0].value)


@pytest.mark.slow
def test_a_link_with_settings_not_measured_yet_says_the_button_measures_them():
    at = app(PAGE, query={"to": "uniform,laplace", "to.queries": "300", "to.records": "300"})
    no_exception(at)
    assert "chart_map" not in charts(at)
    assert any(c.value.startswith("The link's settings are loaded") for c in at.caption)
    at.button(key="w_to_run").click().run()
    no_exception(at)
    assert "chart_map" in charts(at)


@pytest.mark.slow
def test_report_button_offers_a_download():
    at = measured()
    at.button(key="w_to_report").click().run()
    no_exception(at)
    html = at.session_state["wb_report_html"]
    assert html.startswith("<!DOCTYPE html>") and "<script src" not in html


@pytest.mark.slow
def test_a_map_the_cache_let_go_is_measured_again_not_hidden():
    """The byte-bounded cache may drop the measured points (other sessions, big tables) between two reruns:
    the session that asked for the map gets it measured again, instead of the "measure" button again."""
    from pages.ui import cached

    at = measured()
    before = at.dataframe[0].value
    cached.store().clear()  # everything the cache held is gone, as after eviction
    at.selectbox(key="w_to_risk").set_value("small_sum_disclosure").run()
    no_exception(at)
    assert "chart_map" in charts(at)
    # same seed: the same measures again ("on the front" follows the risk axis, which this rerun switched)
    assert at.dataframe[0].value.drop(columns="on the front").equals(before.drop(columns="on the front"))
    # a new session (same table, cache emptied) still waits for the button
    cached.store().clear()
    fresh = app(PAGE, query={"to": ",".join(FEW), "to.queries": "300", "to.records": "300"})
    no_exception(fresh)
    assert "chart_map" not in charts(fresh)


def test_map_outcomes_answer_each_setting_once_those_that_cannot_run_first():
    """The map's settings: one outcome each, in the order given; a setting that cannot run is answered before
    any is measured (the page draws the first points as soon as one is measured: a skipped one must not count
    as the first draw), and the figures are those of core.risk.outcome, measured outside the app."""
    from core import risk
    from core.evaluate import make_workload
    from core.table import load_dataset
    from pages.ui import cached

    data = load_dataset("adult", "occupation")
    jobs = [("uniform", {"p": 0.3}), ("splu", {"gamma": 10}), ("anatomy", {"l": 3})]
    seen = []
    out = cached.map_outcomes(data, jobs, 0, 300, 300, done=lambda i, outcome: seen.append((i, outcome[0])))
    assert seen[0] == (1, "skipped") and sorted(seen[1:]) == [(0, "point"), (2, "point")]
    wl, t = make_workload(data, "seed000", queries=300, max_attrs=3, seed=0), risk.targets(data, 300, 0)
    assert out == [risk.outcome(data, name, raw, wl, t, 0) for name, raw in jobs]
    again = []
    assert cached.map_outcomes(data, jobs, 0, 300, 300, done=lambda i, outcome: again.append(i)) == out
    assert again == [0, 1, 2]  # every one from the cache, in order, measured no more


def test_map_ready_builds_the_inputs_and_measures_the_first_setting_handed_out_only():
    """While the page waits for the click: the workload, the attacked records and the training part, and the
    setting the processes would be handed first (a quick one, not the first in the page's order) measured and
    kept; nothing else.  The click then answers that setting from the cache, the same point as measured then."""
    from core.table import load_dataset
    from pages.ui import cached

    data = load_dataset("adult", "occupation")
    jobs = [("ambiguity", {"beta": 0.2}), ("splu", {"gamma": 10}), ("anatomy", {"l": 3}), ("laplace", {}),
            ("uniform", {"p": 0.3})]
    cached.store().clear()

    def kept(name, raw):
        return cached.point.is_cached(data, data.key, name, cached.items(cached._mechanisms.get(name).resolve(raw)),
                                      7, 300, 300)

    cached.map_ready(data, jobs, 7, 300, 300)
    assert cached._hand_out_order(jobs, [0, 2, 3, 4])[0] == 3  # laplace: the first not among the slowest
    assert [kept(name, raw) for name, raw in jobs] == [False, False, False, True, False]
    assert cached.workload.is_cached(data, data.key, "seed000", cached.items({"queries": 300, "max_attrs": 3,
                                                                               "seed": 7}))
    assert cached.targets.is_cached(data, data.key, 300, 7)
    from core import risk
    from core.evaluate import make_workload

    wl, t = make_workload(data, "seed000", queries=300, max_attrs=3, seed=7), risk.targets(data, 300, 7)
    first = []
    assert cached.map_outcomes(data, jobs[3:4], 7, 300, 300, done=lambda i, outcome: first.append(outcome)) \
        == first == [risk.outcome(data, "laplace", {}, wl, t, 7)]
    cached.store().clear()


@pytest.mark.slow
def test_map_settings_measured_in_forked_processes_are_those_measured_on_threads(monkeypatch):
    """The map's settings are measured in processes forked for the purpose (two cores, not one interpreter
    lock): the same outcomes as on threads, each kept so that a rerun measures nothing; and a table past
    FORK_MAX_ROWS, or WORKBENCH_MAP_PROCESSES=0, is measured on threads."""
    from core.table import load_dataset
    from pages.ui import cached

    data = load_dataset("adult", "occupation")
    jobs = [("uniform", {"p": 0.3}), ("anatomy", {"l": 3}), ("mondrian", {"k": 10}), ("laplace", {})]
    forked = []
    real = cached._measure_forked
    monkeypatch.setattr(cached, "_measure_forked", lambda *a, **k: forked.append(len(a[2])) or real(*a, **k))
    cached.store().clear()
    in_processes = cached.map_outcomes(data, jobs, 3, 300, 300)
    assert forked == [4] and all(kind == "point" for kind, _ in in_processes)
    assert all(cached.point.is_cached(data, data.key, name, cached.items(cached._mechanisms.get(name).resolve(raw)),
                                      3, 300, 300) for name, raw in jobs)
    cached.store().clear()
    monkeypatch.setenv("WORKBENCH_MAP_PROCESSES", "0")
    assert cached.map_outcomes(data, jobs, 3, 300, 300) == in_processes
    assert forked == [4]
    monkeypatch.delenv("WORKBENCH_MAP_PROCESSES")
    cached.store().clear()
    monkeypatch.setattr(cached, "FORK_MAX_ROWS", data.n - 1)
    assert cached.map_outcomes(data, jobs, 3, 300, 300) == in_processes
    assert forked == [4]
    cached.store().clear()


def _never_answers(i):
    import time

    time.sleep(3600)


@pytest.mark.slow
def test_a_forked_measurement_that_answers_nothing_is_finished_on_threads(monkeypatch):
    """A forked process that never answers (one forked while another thread held a lock it needs) does not
    hold the map: after FORK_STALL_SECONDS its settings are measured on threads, the same figures, and the
    processes are ended."""
    import multiprocessing

    from core.table import load_dataset
    from pages.ui import cached

    data = load_dataset("adult", "occupation")
    jobs = [("uniform", {"p": 0.3}), ("laplace", {})]
    cached.store().clear()
    expected = cached.map_outcomes(data, jobs, 5, 300, 300)
    cached.store().clear()
    monkeypatch.setattr(cached, "_forked_outcome", _never_answers)
    monkeypatch.setattr(cached, "FORK_STALL_SECONDS", 1.0)
    before = set(multiprocessing.active_children())
    assert cached.map_outcomes(data, jobs, 5, 300, 300) == expected
    assert not set(multiprocessing.active_children()) - before
    cached.store().clear()


def test_a_widget_a_stopped_run_did_not_draw_is_sent_its_value_again():
    """A run that ends without drawing a widget (st.stop() above it: no table) makes the browser drop the widget's
    state while the server keeps it; drawn again, the widget must carry its value (set_value), or the browser
    shows the empty default and sends it back with the next rerun: the mechanism list lost after a click on the
    map (issue 24, the loaded run 10)."""
    from pages.ui import state

    at = app("pages/5_Trade-offs.py", {"data": "adult", "sa": "occupation", "to": "uniform,splu"})
    assert list(at.multiselect(key="w_to_mechs").value) == ["uniform", "splu"]
    at.session_state[state.SOURCE] = "upload"  # no file uploaded: the page says so and stops above the list
    at.run()
    assert not [m for m in at.multiselect if m.key == "w_to_mechs"]
    at.session_state[state.SOURCE] = "sample"
    at.run()
    mechs = at.multiselect(key="w_to_mechs")
    assert mechs.proto.set_value and list(mechs.value) == ["uniform", "splu"]
    at.run()  # drawn in the run before: the browser holds it, nothing is sent again
    assert not at.multiselect(key="w_to_mechs").proto.set_value


def test_the_forked_processes_are_handed_the_slowest_settings_first(monkeypatch):
    """One quick setting (the map's first points at once), then longest job first: Ambiguity's and PriView's
    settings go out before Laplace's (the page's order kept among the rest)."""
    from pages.ui import cached

    handed = []

    class Pool:
        def __init__(self, *a, **k):
            pass

        def imap_unordered(self, fn, order, chunksize=1):
            handed.extend(order)
            return self

        def next(self, timeout=None):  # no process answers: as after FORK_STALL_SECONDS
            raise multiprocessing.TimeoutError

        def terminate(self):
            pass

        def join(self):
            pass

    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_context", lambda kind: type("Context", (), {"Pool": Pool})())
    jobs = [("uniform", {}), ("laplace", {}), ("ambiguity", {}), ("splu", {}), ("priview", {})]
    from core.table import load_dataset

    data = load_dataset("toy-ambiguity")
    left = cached._measure_forked(data, jobs, list(range(len(jobs))), None, None, 0, 10, 10, lambda i, o: None)
    assert [jobs[i][0] for i in handed] == ["uniform", "ambiguity", "priview", "splu", "laplace"]
    assert sorted(left) == list(range(len(jobs)))  # nothing answered: every setting left for the threads
