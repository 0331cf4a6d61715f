"""Seed 004's GROUP BY workloads and the PriView / Ambiguity / Mondrian query-error experiments."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core import mechanisms
from core.errors import ParameterError
from core.experiments import get as get_experiment
from core.experiments.seed002 import subset
from core.experiments.seed004 import order_caption, run_three
from core.table import Dataset, load_dataset
from core.workload import data_records, true_answers
from core.workloads import make_workload
from core.workloads.seed004 import TOLERANCE, seed004, seed004_attrs
from test_cli import ok


@pytest.fixture(scope="module")
def adult():
    return load_dataset("adult", "occupation")


@pytest.fixture(scope="module")
def small(adult):
    return subset(adult, np.arange(4000), "first 4000")


def test_groupby_cells_are_count_queries_with_true_answers(adult):
    wl = seed004(adult, "0.01,0.05", "1,2,3", groupbys=3, max_cells=50, seed=7)
    assert len(wl.where) == 2 * 3 * 3 and len(wl.batches) == 18
    np.testing.assert_allclose(true_answers(data_records(adult), wl.batches), wl.true)
    assert (wl.true >= 1).all()  # only non-empty cells
    assert np.bincount(wl.groupby).max() <= 50
    for i, batch in enumerate(wl.batches):
        rows = wl.groupby == i
        d = wl.n_attrs[rows][0]
        assert len(batch.attrs) in (d, d + 1)  # the grouped attributes, plus a range when one was needed
        assert (batch.sa.sum(axis=1) == 1).all()
    # membership: each cell in exactly its selectivity band
    assert (wl.membership.sum(axis=0) == 1).all()
    assert [b.name for b in wl.bands] == ["WHERE selects ≈ 1%", "WHERE selects ≈ 5%"]


def test_where_selectivity_hits_its_target(adult):
    wl = seed004(adult, "0.01,0.05,0.1", "1,2", groupbys=4, max_cells=20, seed=1)
    for i, text in enumerate(wl.where):
        target = wl.target[wl.groupby == i][0]
        share = wl.where_share[i]
        # recomputed from the text's own records: the share the WHERE selects
        assert share == pytest.approx(wl.true[wl.groupby == i].sum() / adult.n) or len(
            wl.true[wl.groupby == i]) == 20
        assert abs(share - target) <= TOLERANCE * target + 1e-12, (text, share, target)


def test_range_condition_reaches_a_share_no_sa_value_has():
    # two SA values of 50% each: 10% needs a range on the numeric QI
    rng = np.random.default_rng(0)
    n = 2000
    data = Dataset(name="t", content_hash="t", sa="s", qi=("age", "sex"), sa_codes=rng.integers(0, 2, n),
                   sa_labels=np.array(["a", "b"], dtype=object),
                   qi_codes=(rng.integers(0, 50, n), rng.integers(0, 2, n)),
                   qi_labels=(np.arange(20, 70).astype(float), np.array(["F", "M"], dtype=object)),
                   qi_numeric=(True, False))
    wl = seed004(data, "0.1", "1", groupbys=6, max_cells=100, seed=3)
    for i, text in enumerate(wl.where):
        if wl.grouped[i] == ("sex",):
            assert " AND age " in text
            assert abs(wl.where_share[i] - 0.1) <= 0.025
    np.testing.assert_allclose(true_answers(data_records(data), wl.batches), wl.true)


def test_fig13b_conditions_have_d_attributes(adult):
    wl = seed004_attrs(adult, "3,4,5", groupbys=2, max_cells=30, seed=2)
    assert [b.name for b in wl.bands] == [f"{d} attributes in the condition" for d in (3, 4, 5)]
    for i, batch in enumerate(wl.batches):
        assert len(batch.attrs) == wl.n_attrs[wl.groupby == i][0]
    np.testing.assert_allclose(true_answers(data_records(adult), wl.batches), wl.true)


def test_same_seed_same_workload_and_bad_settings(adult):
    a, b = seed004(adult, seed=5), seed004(adult, seed=5)
    np.testing.assert_array_equal(a.true, b.true)
    assert a.where == b.where
    with pytest.raises(ParameterError, match="'selectivities' setting"):
        seed004(adult, "often")
    with pytest.raises(ParameterError, match="'attrs' setting"):
        seed004(adult, attrs="1.5")
    with pytest.raises(ParameterError, match="needs 8 QI columns; the table has 7"):
        seed004(adult, attrs="8")
    assert len(make_workload(adult, "seed004", groupbys="1")) > 0


@pytest.mark.slow
def test_cli_evaluate_with_seed004_workload():
    res = json.loads(ok("evaluate", "adult", "--sensitive", "occupation", "--mechanism", "mondrian",
                        "--workload", "seed004", "--queries", "2", "--seed", "1", "--json"))
    assert [b["name"] for b in res["bands"]] == ["WHERE selects ≈ 1%", "WHERE selects ≈ 5%", "WHERE selects ≈ 10%"]
    assert all(b["queries"] > 0 and b["mean_relative_error"] is not None for b in res["bands"])


# ------------------------------------------------------------------ experiments
def test_experiment_runs_on_a_small_table(small):
    res = get_experiment("seed004-error-vs-selectivity")(small, {"groupbys": 2, "max_cells": 40})
    assert len(res.figures) == 1 and "Mondrian" in res.figures[0][2]
    errors = res.tables[0][1].set_index("mechanism")
    assert "Mondrian" in errors.index and errors.loc["Mondrian", "all queries"] > 0
    res_b = get_experiment("seed004-error-vs-attrs")(small, {"groupbys": 1, "max_cells": 30})
    assert set(res_b.data["attrs"]) == {3, 4, 5}
    res_beta = get_experiment("seed004-error-vs-beta")(small, {"betas": "0.05,0.2", "groupbys": 1,
                                                               "max_cells": 20})
    # 0.05 needs 20 distinct occupations: Mondrian is skipped there with its message, not a crash
    assert res_beta.data["errors"]["Mondrian"][0] is None and res_beta.data["errors"]["Mondrian"][1] > 0
    assert any("smallest β" in n for n in res_beta.notes)


def test_missing_mechanism_is_skipped_with_a_note(small, monkeypatch):
    reg = {k: v for k, v in mechanisms.MECHANISMS.items() if k not in ("priview", "ambiguity")}
    monkeypatch.setattr(mechanisms, "MECHANISMS", reg)
    wl = seed004(small, "0.05", "1", groupbys=1, max_cells=10)
    res, info = run_three(small, 0.1, 0.1, 10, wl, 0)
    assert "not registered" in res["PriView"] and "not registered" in res["Ambiguity"]
    assert set(info) == {"Mondrian"}
    out = get_experiment("seed004-error-vs-selectivity")(small, {"groupbys": 1, "max_cells": 10})
    assert "cannot be checked" in out.figures[0][2]


def test_order_caption():
    text = order_caption({"PriView": 0.4, "Ambiguity": 0.7, "Mondrian": 0.9}, {}, "x")
    assert "holds" in text
    text = order_caption({"PriView": 0.4, "Ambiguity": 0.9, "Mondrian": 0.7},
                         {"Ambiguity": {"unplaced records": 12, "unplaced share": 0.012, "mean group size": 50},
                          "Mondrian": {"mean group size": 20}}, "x")
    assert "does not hold" in text and "12 records (1.2% of the table) in no group" in text
    assert "smaller here" in text


def test_order_caption_names_the_bands_where_the_order_fails():
    # QA: on Adult the order holds over all cells, but at 5% Mondrian 2.09 beats Ambiguity 2.14
    bands = {"≈ 1%": {"PriView": 0.76, "Ambiguity": 1.18, "Mondrian": 1.32},
             "≈ 5%": {"PriView": 1.24, "Ambiguity": 2.14, "Mondrian": 2.09},
             "≈ 10%": {"PriView": 0.73, "Ambiguity": 1.65, "Mondrian": 3.16}}
    text = order_caption({"PriView": 0.88, "Ambiguity": 1.65, "Mondrian": 2.35}, {}, "over all cells", bands)
    assert "holds over all cells but not in every band" in text
    assert "≈ 5%: Mondrian 2.090 below Ambiguity 2.140" in text
    assert "≈ 1%" not in text and "≈ 10%" not in text
    bands["≈ 5%"]["Mondrian"] = 2.5
    assert "and in every band" in order_caption({"PriView": 0.88, "Ambiguity": 1.65, "Mondrian": 2.35}, {},
                                                "over all cells", bands)


def test_order_caption_gives_the_unplaced_share_and_where_errors_above_one_come_from():
    info = {k: {"unplaced records": 16942, "unplaced share": 16942 / 45222} for k in ("Ambiguity", "PriView")}
    text = order_caption({"PriView": 0.88, "Ambiguity": 1.65, "Mondrian": 2.35}, info, "over all cells",
                         above_one={"PriView": 0.3, "Ambiguity": 0.74, "Mondrian": 0.82})
    assert "Ambiguity and PriView leave 16,942 records (37.5% of the table) in no group" in text
    assert "74% of Ambiguity's and 82% of Mondrian's total error" in text
    assert "PriView's" not in text  # its mean is below 1


def test_errors_above_one_are_overestimates():
    from types import SimpleNamespace

    from core.experiments.seed004 import above_one_share

    true = np.array([10.0, 10.0, 4.0, 1.0, 0.0])
    est = np.array([0.0, 5.0, 12.0, 3.5, 2.0])  # undercounts err at most 1; 12 and 3.5 are above twice the truth
    err = np.where(true > 0, np.abs(est - true) / np.where(true > 0, true, 1), np.nan)
    share = above_one_share(SimpleNamespace(relative_error=err))
    assert share == pytest.approx((2.0 + 2.5) / (1.0 + 0.5 + 2.0 + 2.5))
    assert above_one_share(SimpleNamespace(relative_error=np.array([np.nan]))) is None


@pytest.mark.slow
def test_adult_seven_qis_order(adult):
    # the "done when": on Adult with seven QIs at (alpha, beta) = (0.1, 0.1)
    res = get_experiment("seed004-error-vs-selectivity")(adult, {"alpha": 0.1, "beta": 0.1})
    means = res.data["means"]
    if all(v is not None for v in means.values()):
        assert means["Ambiguity"] < means["Mondrian"]
    # the caption names every band where Mondrian is not above Ambiguity, and the records left unplaced
    caption = res.figures[0][2]
    errors = res.data["errors"]
    bands = [c for c in res.tables[0][1].columns if c.startswith("WHERE")]
    for i, band in enumerate(bands):
        assert (band in caption) == (errors["Mondrian"][i] <= errors["Ambiguity"][i]
                                     or errors["PriView"][i] > errors["Ambiguity"][i])
    unplaced = res.data["info"]["Ambiguity"]["unplaced records"]
    if unplaced:
        assert f"{unplaced:,} records ({unplaced / adult.n:.1%} of the table)" in caption
