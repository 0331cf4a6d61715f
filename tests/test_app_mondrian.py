"""AppTest of the Mondrian view on the Sanitize page and of seed 004's experiments on the Query error page."""

from __future__ import annotations

import pytest
from conftest import OPEN_VIEW, app, charts, frame_with, metrics, no_exception, plotly_array

SANITIZE = "pages/1_Sanitize.py"
QUERY = "pages/3_Query_error.py"
TOY = {"data": "toy-ambiguity", "mech": "mondrian", "beta": "1/3", "k": "4", "seed": "1"}


def test_view_shows_fig1b_groups_and_size_histogram():
    at = app(SANITIZE, opened=OPEN_VIEW, query=TOY)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    groups = frame_with(at, "records")
    # seed 004 Fig. 1(b): the men and the women, each with ages [20, 60]
    assert sorted(groups["gender"]) == ["F", "M"]
    assert set(groups["age"]) == {"[20, 60]"}
    assert sorted(groups["zipcode"]) == ["[11000, 23000]", "[21000, 54000]"]
    assert groups["records"].tolist() == [4, 4]
    m = metrics(at)
    assert m["groups"] == "2" and m["smallest group (k)"] == "4" and m["fewest distinct values (ℓ)"] == "3"
    assert m["largest presence"] == "0.333"
    fig = charts(at)["mondrian_sizes"]
    assert plotly_array(fig["data"][0]["x"]).tolist() == [4, 4]
    # leukemia twice in the women's group: 1/2 > 1/3, a failed guarantee: a warning, said once, never an info
    assert [w.value for w in at.warning if "above β" in w.value or "association ≤ β" in w.value]
    assert not [i.value for i in at.info if "β" in i.value]


@pytest.mark.slow
def test_moving_k_coarsens_the_groups():
    at = app(SANITIZE, opened=OPEN_VIEW, query={"data": "adult", "mech": "mondrian", "seed": "1"})
    no_exception(at)
    before = int(metrics(at)["groups"].replace(",", ""))
    at.number_input(key="w_m_mondrian_k").set_value(200).run()
    no_exception(at)
    after = int(metrics(at)["groups"].replace(",", ""))
    assert after < before
    assert int(metrics(at)["smallest group (k)"].replace(",", "")) >= 200
    assert at.query_params["k"] == "200"
    # beta below 1/14 on Adult: one clear refusal
    at.select_slider(key="w_m_mondrian_beta").set_value(0.05).run()
    no_exception(at)
    assert (at.warning or at.error) and "smallest β is 1/14" in (at.warning or at.error)[0].value


@pytest.mark.slow
def test_query_error_seed004_experiments():
    at = app(QUERY, query={"data": "adult"})
    no_exception(at)
    at.selectbox(key="w_exp_query_error").set_value("seed004-error-vs-selectivity").run()
    no_exception(at)
    at.slider(key="w_exp_seed004-error-vs-selectivity_groupbys").set_value(2).run()
    at.button(key="w_exp_run_seed004-error-vs-selectivity").click().run()
    no_exception(at)
    errors = frame_with(at, "all queries")
    assert "Mondrian" in errors["mechanism"].tolist()
    assert "exp_seed004-error-vs-selectivity_fig_0" in charts(at)
    assert any("Mondrian" in c.value for c in at.caption)
    at.selectbox(key="w_exp_query_error").set_value("seed004-error-vs-attrs").run()
    at.button(key="w_exp_run_seed004-error-vs-attrs").click().run()
    no_exception(at)
    assert "3 attributes" in frame_with(at, "3 attributes").columns


@pytest.mark.slow
def test_group_browser_shows_a_groups_sensitive_values():
    at = app(SANITIZE, opened=OPEN_VIEW, query=TOY)
    no_exception(at)
    seen = []
    for gid in (0, 1):
        at.number_input(key="w_mondrian_group").set_value(gid).run()
        no_exception(at)
        frame = frame_with(at, "share of the group")
        seen.append(sorted(zip(frame["disease"], frame["records"])))
    # the women's group has leukemia twice (seed 004 Fig. 1(a)); the men's four values once each
    assert sorted(seen) == [[("diabetes", 1), ("diarrhea", 1), ("flu", 1), ("stroke", 1)],
                            [("diabetes", 1), ("dyspepsia", 1), ("leukemia", 2)]]
