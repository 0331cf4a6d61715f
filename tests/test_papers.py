"""The Papers registry, its judges, the seed 000 / 004 experiments it adds and the `experiment` command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core import cli, experiments, papers
from core.errors import DataError, ParameterError
from core.table import load_dataset


def test_every_item_names_a_registered_experiment_or_says_why():
    keys = [i.key for i in papers.ITEMS]
    assert len(keys) == len(set(keys))
    for item in papers.ITEMS:
        assert item.seed in papers.SEEDS
        if item.experiment is None:
            assert item.why_no_experiment and item.setup_judge
        else:
            papers.settings(item)  # the paper's parameters resolve
    # the figures the issue names
    numbers = {(i.seed, i.number) for i in papers.ITEMS}
    for want in [("000", "Fig. 7"), ("000", "Fig. 8"), ("000", "Fig. 9"), ("000", "Fig. 10"), ("000", "Fig. 11"),
                 ("000", "Fig. 12"), ("003", "Fig. 6"), ("004", "Fig. 11"), ("004", "Fig. 12"), ("004", "Fig. 15")]:
        assert want in numbers


def test_verdict_is_the_weakest_row():
    r = papers.Row
    assert papers.verdict_of([r("a", "", "", papers.REPRODUCED), r("b", "", "", papers.TREND)]) == papers.TREND
    assert papers.verdict_of([r("a", "", "", papers.NOT), r("b", "", "", papers.REPRODUCED)]) == papers.NOT
    assert papers.verdict_of([]) == papers.INCONCLUSIVE


@pytest.fixture(scope="module")
def census20k():
    return load_dataset("census:20000")


@pytest.mark.slow
def test_small_counts_against_gamma_judged(census20k):
    item = papers.get("000-fig7")
    res, verdict, rows = papers.run(item, census20k, {"gammas": "2,5,10", "queries": 400})
    sp = res.data["series"]
    assert set(sp) == {"SPLU-Gen", "Anatomy", "DBR", "Laplace ε = ln 3", "Laplace ε = ln 2"}
    # Laplace noise of scale 1/ε: a smaller ε errs more on counts 1-10 (400 queries, fixed seed)
    assert sp["Laplace ε = ln 2"][0] > sp["Laplace ε = ln 3"][0]
    # SPLU-Gen's small-count error grows with γ (the paper's linear correlation)
    assert sp["SPLU-Gen"][-1] > sp["SPLU-Gen"][0]
    assert verdict in papers.VERDICTS and rows


@pytest.mark.slow
def test_two_sensitive_attributes_experiment(census20k):
    res = experiments.get("seed000-two-sa")(census20k, {"gammas": "2,5", "queries": 200,
                                                         "selectivity": "0.002,0.02"})
    assert len(res.data["intervals"]) == 10
    assert res.data["queries"] > 0
    assert all(e is not None and 0 <= e < 2 for e in res.data["errors"])


def test_two_sa_dataset_bands_age_into_deciles(census20k):
    from core.experiments.seed000 import two_sa_dataset

    two, second = two_sa_dataset(census20k, "age", 10)
    assert "age" not in two.qi and second.size == 10
    share = np.bincount(second.codes) / two.n
    assert share.min() > 0.05 and share.max() < 0.16  # deciles of a discrete column: about 10% each
    with pytest.raises(ParameterError):
        two_sa_dataset(census20k, "occupation", 10)


def test_occ_density_sample():
    one = load_dataset("occ:4000:1")
    three = load_dataset("occ:4000:3")
    assert one.n == three.n == 4000
    distinct = lambda d: len(d.frame().drop_duplicates())  # noqa: E731
    assert distinct(three) <= 4000 // 3 + 1 < distinct(one)
    # same spec, same table
    assert np.array_equal(load_dataset("occ:4000:3").sa_codes, three.sa_codes)
    for bad in ("occ:4000:0", "occ:4000:x", "occ:abc:2"):
        with pytest.raises(DataError):
            load_dataset(bad)


def test_densify_keeps_size_and_lowers_distinct_rows(census20k):
    from core.experiments.seed004 import densify

    d5 = densify(census20k, 5)
    assert d5.n == census20k.n and len(d5.frame().drop_duplicates()) <= census20k.n // 5 + 1
    assert densify(census20k, 1) is census20k


def test_cli_list_and_static_item(capsys):
    assert cli.main(["experiment", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["items"]
    assert len(listed) == len(papers.ITEMS) and all({"seed", "number", "caption"} <= set(e) for e in listed)
    assert cli.main(["experiment", "003-table4", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # a table of settings is judged on what its experiments run: seed 003's figures run smaller tables
    assert out["verdict"] == papers.NOT and out["experiment"] is None
    assert out["statements"][-1]["paper's statement"].startswith("|T|") and out["statements"][-1]["tolerance"]


def test_cli_bad_input_is_one_line(capsys):
    assert cli.main(["experiment", "nope"]) == 2
    assert cli.main(["experiment", "000-fig8", "--param", "gamma=abc"]) == 2
    assert cli.main(["experiment"]) == 2
    assert cli.main(["experiment", "000-fig8", "--sensitive", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("error: ") for line in err)


@pytest.mark.slow
def test_cli_run_with_html(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert cli.main(["experiment", "004-fig10", "--out", str(out), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["verdict"] == papers.NOT  # census's domains are Adult's: age 74 vs the paper's 78 and more
    assert "age 74 vs 78" in got["statements"][0]["ours"]
    text = out.read_text()
    assert "Verdict: not reproduced" in text and "<table" in text


def test_cli_all_prints_every_entry_with_its_statements(capsys, monkeypatch):
    # the two tables of settings stand in for all 39 (they need no run); --all goes through papers.run_all
    monkeypatch.setattr(papers, "ITEMS", tuple(i for i in papers.ITEMS if i.experiment is None))
    assert cli.main(["experiment", "--all", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [e["key"] for e in out["entries"]] == ["001-table3", "003-table4"]
    assert out["counts"] == papers.counts([papers.REPRODUCED, papers.NOT])
    for e in out["entries"]:
        assert e["verdict"] == papers.verdict_of([papers.Row("", "", "", s["verdict"]) for s in e["statements"]])
        assert all(s["tolerance"] for s in e["statements"])
    assert cli.main(["experiment", "--all", "000-fig8"]) == 2
    assert "error: " in capsys.readouterr().err


def test_docs_table_is_the_recorded_run():
    """docs/papers.md's table and counts are bench/papers.py --markdown of docs/papers.json (the page's record)."""
    import importlib.util
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    spec = importlib.util.spec_from_file_location("bench_papers", root / "bench" / "papers.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    rec = papers.recorded()
    assert rec and len(rec["entries"]) == len(papers.ITEMS) == 39
    assert rec["counts"] == papers.counts(e["verdict"] for e in rec["entries"])
    assert bench.markdown(rec) in (root / "docs" / "papers.md").read_text(encoding="utf-8")


def test_readme_counts_are_the_recorded_run():
    """The README quotes the last full run's counts (docs/papers.json, which the Papers page shows too)."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    counts = json.loads((root / "docs" / "papers.json").read_text())["counts"]
    text = " ".join((root / "README.md").read_text(encoding="utf-8").split())
    said = dict((name, int(n)) for n, name in re.findall(r"(\d+) (reproduced|in trend|inconclusive|not reproduced)",
                                                          text.split("Last full run", 1)[1][:200]))
    assert said == counts
