"""AppTest of bucketization: the Sanitize view, the Attacks tab, seed 003's experiments and the bound page."""

from __future__ import annotations

import json

import pytest
from conftest import OPEN_VIEW, app, charts, frame_with, metrics, no_exception, plain

SANITIZE = "pages/1_Sanitize.py"
ATTACKS = "pages/4_Attacks.py"
QUERY = "pages/3_Query_error.py"
ADULT = {"data": "adult", "mech": "bucketization", "seed": "1"}
TAB = "Differential inference and corruption (seed 003)"


def _setting(at):
    return frame_with(at, "bucket size S")


def test_done_when_adult_multi_size_beats_what_l_diversity_can_do():
    at = app(SANITIZE, opened=OPEN_VIEW, query=ADULT)
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    m = metrics(at)
    assert m["loss Σ(|g|−1)²"] == "158,967"
    assert m["ℓ-diversity equivalent"] == "ℓ = 45"
    assert m["largest ℓ Anatomy can deliver"] == "ℓ = 7"
    info = " ".join(plain(i.value) for i in at.info)
    assert "ℓ-diversity cannot give this protection on this table" in info and "'Craft-repair'" in info
    table = _setting(at)
    assert table["bucket size S"].tolist() == [1, 2, 3, 4, 8, 17, 26, 50]
    assert table["loss b(S−1)²"].sum() == 158_967
    figs = charts(at)
    assert {"bk_sizes", "bk_fprime", "bk_l_theta"} <= set(figs)
    worst = next(t for t in figs["bk_fprime"]["data"] if t["name"] == "worst share in a bucket")["y"]
    bars = next(t for t in figs["bk_fprime"]["data"] if t["name"] == "threshold f′ᵢ")["y"]
    assert all(w <= b + 1e-12 for w, b in zip(worst, bars))


@pytest.mark.slow
def test_theta_and_sizes_move_the_release():
    at = app(SANITIZE, opened=OPEN_VIEW, query=ADULT)
    no_exception(at)
    at.select_slider(key="w_m_bucketization_theta").set_value(32.0).run()
    no_exception(at)
    assert metrics(at)["ℓ-diversity equivalent"] == "ℓ = 34"  # Figure 3 on Adult: 49, 48, 45, 41, 34
    assert at.query_params["theta"] == "32"
    at.radio(key="w_m_bucketization_sizes").set_value("two").run()
    no_exception(at)
    assert len(_setting(at)) == 2
    at.select_slider(key="w_m_bucketization_theta").set_value(8.0).run()
    no_exception(at)
    assert metrics(at)["loss Σ(|g|−1)²"] == "292,920"
    at.slider(key="w_m_bucketization_max_bucket").set_value(20).run()
    no_exception(at)
    text = " ".join(plain(w.value) for w in [*at.warning, *at.error])
    assert "M′ = 20" in text and "45" in text


@pytest.mark.slow
def test_override_below_the_share_names_the_value_and_sigma_adds_fakes():
    at = app(SANITIZE, opened=OPEN_VIEW, query={**ADULT, "overrides": "Sales=0.05"})
    no_exception(at)
    text = " ".join(plain(w.value) for w in [*at.warning, *at.error])
    assert "'Sales'" in text and "Lemma 1" in text and "at least 0.12" in text
    at = app(SANITIZE, opened=OPEN_VIEW,
             query={"data": "census:20000", "mech": "bucketization", "seed": "1", "sigma": "2"})
    no_exception(at)
    assert not at.error and not at.warning
    body = " ".join(plain(x.value) for x in at.markdown)
    assert "Corruption attack defence (σ = 2)" in body and "33%" in body


@pytest.mark.slow
def test_attack_tab_theorem2_and_corruption():
    at = app(ATTACKS)
    no_exception(at)
    from pages.ui.layout import tab_label

    assert tab_label(TAB) in [t.label for t in at.tabs]
    at.radio(key="atk_diff_source").set_value("typed in").run()
    no_exception(at)
    m = metrics(at)
    assert m["true y/x"] == "99.00%"  # seed 003 §2.1: x = 100, y = 99
    assert m["Theorem 2: E[Y/X]"] == "100.98%"  # 0.99 x 1.02
    table = frame_with(at, "quantity").set_index("quantity")["value"]
    assert abs(table["E[Y/X] ÷ (y/x), Theorem 2: 1 + 2b²/x²"] - 1.02) < 1e-12
    assert abs(table["E[Y/X] ÷ (y/x), exact principal value x·PV E[1/X]"] - 1.0235518) < 1e-6
    before = json.dumps(charts(at)["atk_diff_hist"]["data"], sort_keys=True)
    at.number_input(key="atk_diff_x").set_value(1000).run()
    no_exception(at)
    assert json.dumps(charts(at)["atk_diff_hist"]["data"], sort_keys=True) != before
    assert metrics(at)["true y/x"] == "9.90%"
    at.select_slider(key="atk_diff_eps").set_value(1.0).run()
    no_exception(at)
    # corruption: all but one of 10 corrupted, sigma = 2 -> 1/3; sigma = 0 -> certain
    assert metrics(at)["adversary's certainty at this q"] == "33.3%"
    at.slider(key="atk_diff_sigma").set_value(0).run()
    no_exception(at)
    assert metrics(at)["adversary's certainty at this q"] == "100.0%"
    # a group from the loaded table
    at.radio(key="atk_diff_source").set_value("from the loaded table").run()
    at.selectbox(key="atk_diff_qi").set_value("sex").run()
    no_exception(at)
    assert "atk_diff_curve" in charts(at)


@pytest.mark.slow
def test_query_error_experiments():
    at = app(QUERY, query={"data": "toy-sdr"})
    no_exception(at)
    at.selectbox(key="w_exp_query_error").set_value("seed003-l-vs-theta").run()
    at.button(key="w_exp_run_seed003-l-vs-theta").click().run()
    no_exception(at)
    assert "ℓ = ⌈1/min f′ᵢ⌉" in frame_with(at, "ℓ = ⌈1/min f′ᵢ⌉").columns
    at.selectbox(key="w_exp_query_error").set_value("seed003-error-vs-theta").run()
    at.text_input(key="w_exp_seed003-error-vs-theta_thetas").set_value("8,32").run()
    at.button(key="w_exp_run_seed003-error-vs-theta").click().run()
    no_exception(at)
    results = frame_with(at, "MSE (Def. 3)")
    assert {"TwoSize", "MultiSize", "Optimal"} <= set(results["method"])
    # a missing value (Anatomy not eligible at theta = 8 on toy-sdr: no query error) is an empty cell, not
    # "None", and the note says why
    missing = results[results["mean relative error"].isna()]
    assert len(missing) and missing["method"].str.startswith("Anatomy").all()
    assert missing["note"].str.startswith("not eligible").all()
    grid = next(d for d in at.dataframe if "MSE (Def. 3)" in d.value.columns)
    assert grid.proto.HasField("placeholder") and grid.proto.placeholder == ""
    at.selectbox(key="w_exp_query_error").set_value("seed003-scaleup").run()
    at.text_input(key="w_exp_seed003-scaleup_gammas").set_value("1,2").run()
    at.button(key="w_exp_run_seed003-scaleup").click().run()
    no_exception(at)
    assert frame_with(at, "Full-pruning")["same answer"].all()


def test_bounds_page_draws_the_theorem():
    at = app("pages/2_Bounds.py", query={"bound": "differential-inference"})
    no_exception(at)
    assert not at.error
    names = [t["name"] for t in charts(at)["chart_curve"]["data"]]
    assert "Theorem 2: 1 + 2b²/x²" in names and "exact (principal value) x·E[1/X]" in names


@pytest.mark.slow
def test_values_with_fprime_1_and_the_records_they_reveal_are_named_with_a_fix():
    # Adult, theta = 8: f' = min(1, 8f + 0.02) = 1 for the four most frequent occupations, and the multi-size
    # setting publishes 22,922 records (50.7%) in buckets of one record (posterior 1)
    at = app(SANITIZE, opened=OPEN_VIEW, query=ADULT)
    no_exception(at)
    # the verdict: one warning (vacuous for the values with f' = 1), with the one-click fix
    warnings = [plain(w.value) for w in at.warning]
    assert len(warnings) == 1
    warning = warnings[0]
    assert "f′ = 1 for 4 value(s)" in warning and "vacuous" in warning
    for value in ("Adm-clerical", "Craft-repair", "Exec-managerial", "Prof-specialty"):
        assert f"'{value}'" in warning
    assert "22,922 of 45,222 records (50.7%)" in warning
    # the view below explains it in detail, as text rather than a second warning box
    text = " ".join(plain(m.value) for m in at.markdown)
    assert "4 values have f′ = 1, which protects nothing" in text
    assert "22,922 records (50.7%) are published in buckets that reveal their value" in text
    assert "lower θ to 7 or less" in text and "set f′ by hand" in text
    exposed = frame_with(at, "records revealed")
    assert exposed["records revealed"].sum() == 22_922
    assert set(exposed["value"]) == {"Adm-clerical", "Craft-repair", "Exec-managerial", "Prof-specialty"}
    info = " ".join(plain(i.value) for i in at.info)
    assert "a threshold of 1 is no limit" in info
    # one click: theta = 7 leaves no threshold at 1, so no bucket reveals a value
    fix = at.button(key="w_verdict_fix")
    assert fix.label == "Use θ = 7 (meets its guarantee)"
    fix.click().run()
    no_exception(at)
    assert at.query_params["theta"] == "7"
    assert not at.warning and at.success and "Meets its guarantee" in at.success[0].value
    assert not [d for d in at.dataframe if "records revealed" in d.value.columns]


def test_exposure_is_recomputed_from_the_published_tables_and_matches_the_manifest():
    from core.mechanisms import sanitize
    from core.table import bind, load_table
    from pages.ui.views.bucketization import exposure, largest_safe_theta

    table = load_table("adult")
    data = bind(table, "occupation", ("age", "workclass", "education", "marital_status", "race", "sex",
                                      "native_country"))
    release = sanitize(data, "bucketization", {"theta": 8}, 1)
    exp = exposure(release, data)
    assert exp.total == exp.size1 == 22_922
    if "records_revealed" in release.privacy:
        assert release.privacy["records_revealed"] == exp.total
    assert largest_safe_theta(float(data.sa_counts.max() / data.n), 0.02) == 7.0
    # fake values (sigma) make every ST list at least two values: nothing is revealed, though f' stays 1
    census = load_table("census:20000")
    data = bind(census, "occupation", ("age", "workclass", "education", "marital_status", "race", "sex",
                                       "native_country"))
    plain_release = exposure(sanitize(data, "bucketization", {"theta": 32}, 1), data)
    with_fakes = exposure(sanitize(data, "bucketization", {"theta": 32, "sigma": 2}, 1), data)
    assert plain_release.total > 0 and with_fakes.total == 0
    assert len(with_fakes.unprotected) == len(plain_release.unprotected) > 0
