"""Query-error bands adapt to the table (issue 14): count bands on small tables, the papers' on large ones."""

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from core.evaluate import evaluate
from core.table import bind, load_table, make_table
from core.workload import LARGE_EDGES, SMALL_MAX, THIN_QUERIES, by_count, seed000, seed000_bands

PAPER = ["small counts (1-10)", "[0.5%, 1%)", "[1%, 2%)", "[2%, 3%)", "[3%, 4%)", "[4%, 5%)", ">= 5%"]


@pytest.mark.parametrize("n", [2001, 45_222, 500_000])
def test_large_tables_keep_the_papers_bands(n):
    bands = seed000_bands(n)
    assert [b.name for b in bands] == PAPER
    assert [b.lo for b in bands[1:]] == list(LARGE_EDGES) and bands[-1].hi is None
    assert not by_count(n)


@pytest.mark.parametrize("n", [50, 199, 500, 1000, 2000])
def test_small_tables_count_bands_never_overlap_the_small_band(n):
    assert by_count(n)
    bands = seed000_bands(n)
    counts = np.arange(0, n + 1)
    small = bands[0].contains(counts, n)
    assert counts[small].tolist() == list(range(1, SMALL_MAX + 1))
    seen = np.zeros(len(counts), int)
    for b in bands[1:]:
        inside = b.contains(counts, n)
        assert not (inside & small).any()
        assert b.name.startswith("large counts")
        seen += inside
    # the large bands split every count above SMALL_MAX exactly once
    assert (seen[SMALL_MAX + 1:] == 1).all() and (seen[: SMALL_MAX + 1] == 0).all()


def test_thin_candidate_bands_are_merged():
    unmerged = seed000_bands(1000)
    assert [b.name for b in unmerged[1:]] == ["large counts 11-19", "large counts 20-29", "large counts 30-39",
                                               "large counts 40-49", "large counts >= 50"]
    merged = seed000_bands(1000, [100, 10, 25, 40, 5])
    # 20-29 (10) takes 30-39 (25): 35; 40-49 (40) takes the last (5)
    assert [b.name for b in merged[1:]] == ["large counts 11-19", "large counts 20-39", "large counts >= 40"]


def _small_adult(n, seed=0):
    frame = load_table("adult").frame.sample(n, random_state=seed).reset_index(drop=True)
    return bind(make_table(frame, f"adult{n}.csv"), "occupation",
                ("age", "workclass", "education", "marital_status", "race", "sex", "native_country"))


@pytest.mark.slow
def test_adult_workload_and_queries_unchanged_by_the_adaptation():
    data = bind(load_table("adult"), "occupation")
    wl = seed000(data, 2000, seed=0)
    assert [b.name for b in wl.bands] == PAPER
    # the same queries as before the adaptation (digest taken from the code before this change)
    assert hashlib.sha256(wl.true.astype(np.int64).tobytes()).hexdigest()[:16] == "47bd56b78e0220ff"
    assert wl.membership.sum(axis=1).tolist() == [1000, 266, 265, 185, 106, 59, 119]
    # membership follows the paper's selectivity definition exactly
    sel = wl.true / data.n
    assert np.array_equal(wl.membership[1], (sel >= 0.005 - 1e-12) & (sel < 0.01 - 1e-12))
    assert np.array_equal(wl.membership[0], (wl.true >= 1) & (wl.true <= 10))


@pytest.mark.slow
def test_small_table_workload_bands_by_count_each_with_enough_queries():
    data = _small_adult(1000)
    wl = seed000(data, 5000, seed=0)
    small = wl.membership[0]
    assert wl.true[small].max() <= SMALL_MAX
    for band, member in zip(wl.bands[1:], wl.membership[1:]):
        assert member.sum() >= THIN_QUERIES, band.name
        assert wl.true[member].min() > SMALL_MAX
        assert not (member & small).any()


@pytest.mark.slow
def test_evaluate_bands_carry_queries_and_thin():
    data = _small_adult(300, seed=2)
    wl = seed000(data, 400, seed=1)
    bands = evaluate(data, "uniform", {"p": 0.5}, wl, 1).bands()
    for b, member in zip(bands, wl.membership):
        assert b["queries"] == int(member.sum())
        assert b["thin"] == (b["queries"] < THIN_QUERIES)
    assert not bands[0]["thin"]


def test_cli_evaluate_json_has_thin_flag_on_a_50_row_table(tmp_path):
    from tests.test_cli import ok

    rng = np.random.default_rng(0)
    path = tmp_path / "fifty.csv"
    pd.DataFrame({"age": rng.integers(20, 70, 50), "disease": rng.choice(list("abc"), 50)}).to_csv(path, index=False)
    res = json.loads(ok("evaluate", path, "--sensitive", "disease", "--qi", "age", "--mechanism", "uniform",
                        "--queries", "200", "--seed", "1", "--json"))
    names = [b["name"] for b in res["bands"]]
    assert names[0] == "small counts (1-10)" and all(n.startswith("large counts") for n in names[1:])
    assert all(b["thin"] == (b["queries"] < 30) for b in res["bands"])
    assert any(b["thin"] for b in res["bands"])
    text = ok("evaluate", path, "--sensitive", "disease", "--qi", "age", "--mechanism", "uniform",
              "--queries", "200", "--seed", "1")
    assert "thin: fewer than 30 queries" in text
